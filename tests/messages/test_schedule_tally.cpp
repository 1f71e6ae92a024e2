// What rm.state's jobs add up to per class (messages/schedule_tally.hpp): the counts of a small schedule
// worked out by hand, a job taken out leaving the tally as it was before it came (its class and sizes gone
// with their last job), and a tally kept through random additions and removals equal to one counted afresh.
#include <catch2/catch.hpp>
#include <random>

#include "messages/schedule_tally.hpp"
#include "tests/messages/samples.hpp"

namespace msg = rmbus::messages;

namespace {

// A job whose shares all have one status, of the quanta given.
msg::job_schedule job(const std::string& id, const std::string& cls, msg::job_status status,
                      std::uint64_t memory_mb, std::uint64_t given, std::uint64_t demand,
                      std::vector<std::uint64_t> share_quanta = {},
                      msg::share_status share_status = msg::share_status::running) {
  std::vector<msg::share_schedule> shares;
  for (std::size_t k = 0; k < share_quanta.size(); ++k)
    shares.push_back(msg::samples::share_entry(id + "." + std::to_string(k), share_quanta[k], share_status));
  return msg::samples::job_entry(id, cls, status, memory_mb, given, demand, std::move(shares));
}

}  // namespace

TEST_CASE("a tally counts jobs and processes by status and sums given and demand by size, per class") {
  const auto t = msg::tally_of({
      job("a", "normal", msg::job_status::scheduled, 2048, 3, 10, {2, 2, 2}),
      job("b", "normal", msg::job_status::pending, 1024, 0, 4),
      job("c", "normal", msg::job_status::scheduled, 2048, 1, 1, {2}, msg::share_status::new_),
      job("d", "bulk", msg::job_status::scheduled, 4096, 1, 2, {4}, msg::share_status::preempt),
      job("e", "", msg::job_status::refused, 0, 0, 0),
  });
  REQUIRE(t.classes.size() == 3);
  const auto& normal = t.classes.at("normal");
  CHECK(normal.listed == 3);
  CHECK(normal.jobs == std::array<std::uint64_t, 3>{2, 1, 0});          // scheduled, pending, refused
  CHECK(normal.processes == std::array<std::uint64_t, 4>{3, 1, 0, 0});  // running, new, preempt, evict
  // a and c are 2048 MB: 2 jobs, given 3 + 1, demand 10 + 1; b is 1024 MB.
  CHECK(normal.by_memory_mb ==
        std::map<std::uint64_t, msg::schedule_tally::by_size>{{1024, {1, 0, 4}}, {2048, {2, 4, 11}}});
  // By the first share's quanta: b has no share (0).
  CHECK(normal.by_first_quanta ==
        std::map<std::uint64_t, msg::schedule_tally::by_size>{{0, {1, 0, 4}}, {2, {2, 4, 11}}});
  CHECK(t.classes.at("bulk").processes == std::array<std::uint64_t, 4>{0, 0, 1, 0});
  CHECK(t.classes.at("").jobs == std::array<std::uint64_t, 3>{0, 0, 1});
}

TEST_CASE("a job taken out leaves the tally as it was before it came") {
  msg::schedule_tally t;
  const auto a = job("a", "normal", msg::job_status::scheduled, 2048, 3, 10, {2, 2});
  const auto b = job("b", "normal", msg::job_status::pending, 1024, 0, 4);
  const auto c = job("c", "bulk", msg::job_status::scheduled, 4096, 1, 1, {4});
  t.add(a);
  const auto with_a = t;
  t.add(b);
  t.add(c);
  t.remove(c);  // the last job of its class: the class goes
  CHECK(t.classes.count("bulk") == 0);
  t.remove(b);  // the last of its size: the size goes
  CHECK(t == with_a);
  t.remove(a);
  CHECK(t.classes.empty());
}

TEST_CASE("a tally kept through random additions, replacements and removals equals one counted afresh") {
  std::mt19937 rng{11};
  std::uniform_int_distribution<int> small(0, 3);
  auto random_job = [&](int id) {
    std::vector<std::uint64_t> quanta;
    for (int k = small(rng); k > 0; --k) quanta.push_back(static_cast<std::uint64_t>(1 + small(rng)));
    return job("j" + std::to_string(id), "c" + std::to_string(small(rng)),
               static_cast<msg::job_status>(small(rng) % 3),
               1024u * static_cast<std::uint64_t>(1 + small(rng)), static_cast<std::uint64_t>(small(rng)),
               static_cast<std::uint64_t>(small(rng) * 5), quanta,
               static_cast<msg::share_status>(small(rng)));
  };
  std::map<int, msg::job_schedule> listed;
  msg::schedule_tally kept;
  for (int step = 0; step < 2000; ++step) {
    const int id = std::uniform_int_distribution<int>(0, 60)(rng);
    const auto it = listed.find(id);
    if (it != listed.end()) kept.remove(it->second);
    if (it != listed.end() && small(rng) == 0) {
      listed.erase(it);
    } else {
      listed[id] = random_job(id);
      kept.add(listed[id]);
    }
    if (step % 50 == 0) {
      msg::schedule_listing jobs;
      for (const auto& [k, j] : listed) jobs.push_back(j);
      REQUIRE(kept == msg::tally_of(jobs));
    }
  }
}
