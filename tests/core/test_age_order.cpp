// The model's age order (cluster_model::jobs_by_age), kept by merging each round's arrivals and departures
// into the last order instead of sorting every live job again: checked against that sort after random
// batches of arrivals, departures, resubmissions under a new time, and work that arrives and leaves within
// one batch, with equal submission times so that the id decides.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "core/cluster_model.hpp"

using namespace rmbus::core;

namespace {

std::vector<cluster_model::age_key> sorted_live(const cluster_model& m) {
  std::vector<cluster_model::age_key> keys;
  for (std::size_t i = 0; i < m.jobs.size(); ++i)
    if (m.jobs[i].live)
      keys.emplace_back(m.jobs[i].item.submitted_ms, m.jobs[i].item.id, static_cast<int>(i));
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace

TEST_CASE("the age order after merged batches equals a sort of the live jobs (seeded)") {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    cluster_model m;
    constexpr int slots = 60;
    m.jobs.resize(slots);
    int generation = 0;
    const auto arrive = [&](int slot) {
      auto& j = m.jobs[static_cast<std::size_t>(slot)];
      j.live = true;
      j.item.id = job_id("j" + std::to_string(slot) + "." + std::to_string(++generation));
      j.item.user = user_id("u" + std::to_string(rng() % 5));
      j.item.submitted_ms = static_cast<std::int64_t>(rng() % 8);  // few times: many ties, the id decides
      m.index_job(slot);
    };
    const auto leave = [&](int slot) {
      m.unindex_job(slot);
      m.jobs[static_cast<std::size_t>(slot)].live = false;
    };
    for (int batch = 0; batch < 30; ++batch) {
      const int changes = 1 + static_cast<int>(rng() % 25);
      for (int c = 0; c < changes; ++c) {
        const int slot = static_cast<int>(rng() % slots);
        auto& j = m.jobs[static_cast<std::size_t>(slot)];
        if (!j.live) {
          arrive(slot);
          if (rng() % 4 == 0) leave(slot);  // arrives and leaves within the batch
        } else if (rng() % 2 == 0) {
          leave(slot);
        } else {
          m.unindex_job(slot);  // resubmitted under a new time
          j.item.submitted_ms = static_cast<std::int64_t>(rng() % 8);
          m.index_job(slot);
        }
      }
      m.merge_age_changes();
      INFO("seed " << seed << ", batch " << batch);
      REQUIRE(m.jobs_by_age == sorted_live(m));
      REQUIRE(m.age_added.empty());
      REQUIRE(m.age_removed.empty());
    }
  }
}
