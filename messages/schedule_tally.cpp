#include "messages/schedule_tally.hpp"

namespace rmbus::messages {

namespace {

static_assert(static_cast<std::size_t>(job_status::refused) + 1 ==
              std::tuple_size_v<decltype(schedule_tally::per_class::jobs)>);
static_assert(static_cast<std::size_t>(share_status::evict) + 1 ==
              std::tuple_size_v<decltype(schedule_tally::per_class::processes)>);

// Adds (sign +1) or takes out (sign -1) one job of this size; an entry goes with its last job. Unsigned sums
// taken out exactly as they were put in return to what they were.
void count_size(std::map<std::uint64_t, schedule_tally::by_size>& sizes, std::uint64_t size,
                const job_schedule& j, int sign) {
  auto& s = sizes[size];
  s.jobs += static_cast<std::uint64_t>(sign);
  s.given += static_cast<std::uint64_t>(sign) * j.given;
  s.demand += static_cast<std::uint64_t>(sign) * j.demand;
  if (s.jobs == 0) sizes.erase(size);
}

void count_in_class(schedule_tally::per_class& c, const job_schedule& j, int sign) {
  const auto one = static_cast<std::uint64_t>(sign);
  c.listed += one;
  c.jobs[static_cast<std::size_t>(j.status)] += one;
  for (const auto& s : j.shares) c.processes[static_cast<std::size_t>(s.status)] += one;
  count_size(c.by_memory_mb, j.memory_mb, j, sign);
  count_size(c.by_first_quanta, j.shares.empty() ? 0 : j.shares.front().quanta, j, sign);
}

void count(schedule_tally& t, const job_schedule& j, int sign) {
  auto it = t.classes.try_emplace(j.class_name).first;
  count_in_class(it->second, j, sign);
  if (it->second.listed == 0) t.classes.erase(it);
}

}  // namespace

void schedule_tally::add(const job_schedule& j) { count(*this, j, +1); }
void schedule_tally::remove(const job_schedule& j) { count(*this, j, -1); }

schedule_tally tally_of(const schedule_listing& jobs) {
  schedule_tally t;
  // Consecutive jobs mostly share a class: its entry is looked up once per run of them. Nothing is taken
  // out here, so no entry empties.
  const std::string* last_name = nullptr;
  schedule_tally::per_class* last = nullptr;
  for (const auto& j : jobs) {
    if (last == nullptr || *last_name != j.class_name) {
      auto it = t.classes.try_emplace(j.class_name).first;
      last_name = &it->first;
      last = &it->second;
    }
    count_in_class(*last, j, +1);
  }
  return t;
}

}  // namespace rmbus::messages
