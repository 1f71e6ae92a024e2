#include "actors/takeover_seed.hpp"

#include <algorithm>

namespace rmbus::actors {

std::size_t drop_unstarted_grants(messages::rm_state& heard) {
  std::size_t dropped = 0;
  for (auto& job : heard.jobs)
    dropped += static_cast<std::size_t>(std::erase_if(
        job.shares, [](const messages::share_schedule& s) { return s.status == messages::share_status::new_; }));
  return dropped;
}

}  // namespace rmbus::actors
