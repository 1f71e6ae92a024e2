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

// Random batches of arrivals, departures and resubmissions on a model of 60 job slots.
struct random_batches {
  explicit random_batches(std::uint32_t seed) : rng(seed) { m.jobs.resize(slots); }

  void arrive(int slot) {
    auto& j = m.jobs[static_cast<std::size_t>(slot)];
    j.live = true;
    j.item.id = job_id("j" + std::to_string(slot) + "." + std::to_string(++generation));
    j.item.user = user_id("u" + std::to_string(rng() % 5));
    j.item.submitted_ms = static_cast<std::int64_t>(rng() % 8);  // few times: many ties, the id decides
    m.index_job(slot);
  }
  void leave(int slot) {
    m.unindex_job(slot);
    m.jobs[static_cast<std::size_t>(slot)].live = false;
  }
  void batch(int changes) {
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
  }

  static constexpr int slots = 60;
  std::mt19937 rng;
  cluster_model m;
  int generation = 0;
};

}  // namespace

TEST_CASE("the age order after merged batches equals a sort of the live jobs (seeded)") {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    random_batches b(seed);
    for (int batch = 0; batch < 30; ++batch) {
      b.batch(1 + static_cast<int>(b.rng() % 25));
      b.m.merge_age_changes();
      INFO("seed " << seed << ", batch " << batch);
      REQUIRE(b.m.jobs_by_age == sorted_live(b.m));
      REQUIRE(b.m.age_added.empty());
      REQUIRE(b.m.age_removed.empty());
    }
  }
}

TEST_CASE("ranks after a few changes edited in place equal ranks from a sort of the live jobs (seeded)") {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    random_batches b(seed);
    std::size_t in_place = 0;
    for (int batch = 0; batch < 40; ++batch) {
      // Mostly batches small enough to be edited in place (up to 8 keys), some merged.
      b.batch(1 + static_cast<int>(b.rng() % 6));
      const std::size_t edits = b.m.age_added.size() + b.m.age_removed.size();
      in_place += edits <= cluster_model::max_age_edits_in_place ? 1 : 0;
      b.m.refresh_ranks();
      INFO("seed " << seed << ", batch " << batch);
      const auto want = sorted_live(b.m);
      REQUIRE(b.m.jobs_by_age == want);
      std::vector<int> ranks(b.m.jobs.size(), -1);
      for (std::size_t r = 0; r < want.size(); ++r)
        ranks[static_cast<std::size_t>(std::get<2>(want[r]))] = static_cast<int>(r);
      REQUIRE(b.m.job_rank == ranks);
    }
    CHECK(in_place >= 20);
  }
}

TEST_CASE("a model indexed again from scratch ranks its jobs anew: a job gone by hand has no rank") {
  cluster_model m;
  m.jobs.resize(3);
  for (int slot = 0; slot < 3; ++slot) {
    auto& j = m.jobs[static_cast<std::size_t>(slot)];
    j.live = true;
    j.item.id = job_id("j" + std::to_string(slot));
    j.item.user = user_id("u");
    j.item.submitted_ms = 10 - slot;  // the last slot is the oldest
  }
  m.refresh_ranks();  // indexed from scratch (a model built by hand has no index)
  REQUIRE(m.job_rank == std::vector<int>{2, 1, 0});
  m.jobs[2].live = false;  // gone without unindex_job: the index no longer matches and is rebuilt
  m.refresh_ranks();
  CHECK(m.job_rank == std::vector<int>{1, 0, -1});
  CHECK(m.jobs_by_age == sorted_live(m));
}
