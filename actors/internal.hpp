#pragma once
// What the actor shells share besides CAF: the envelope stamper every sender uses, the wall clock, and the
// conversions between the wire structs (messages/) and the core's values (core/), which the thin shells
// would otherwise each repeat.
//
// The messages themselves are typed structs of messages/internal/ (one per topic, each with its codec), and
// travel between actors as messages::routed_message (messages/internal/payload.hpp): inside one process the
// struct itself, shared and immutable; encoded only where a topic leaves the process.
//
// Thread-safety: free functions over values; an envelope_stamper belongs to one actor.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/schedule_plan.hpp"
#include "core/work.hpp"
#include "messages/envelope.hpp"
#include "messages/internal/topics.hpp"
#include "messages/rm_state.hpp"
#include "messages/workmap.hpp"

namespace rmbus::actors {

namespace topics = messages::internal_topics;

// Per-topic sequence numbers for one sender (src), as the envelope contract wants.
class envelope_stamper {
 public:
  explicit envelope_stamper(std::string src) : src_(std::move(src)) {}
  messages::envelope next(std::string_view topic);
  const std::string& src() const { return src_; }

 private:
  std::string src_;
  std::map<std::string, std::uint64_t, std::less<>> seq_;
};

std::int64_t wall_clock_ms();

// ---- wire <-> core ------------------------------------------------------------------------------
core::work_item to_core(const messages::work_item& w);

// A job's plan as its rm.state entry (with the How Much numbers monitors read).
// `group`: the job's share group as its plan names it (schedule_plan::group_of).
messages::job_schedule to_schedule(const core::job_plan& p, const std::string& group = {});

// Per-user megabytes (the allotment bookkeeping) keyed by plain user names.
std::map<std::string, std::uint64_t> by_user_name(const std::map<core::user_id, std::uint64_t>& mb);

}  // namespace rmbus::actors
