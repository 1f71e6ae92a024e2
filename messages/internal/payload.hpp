#pragma once
// Every message one actor hands another, as one type: the typed internal messages of this folder and the
// RM's public outputs (rm.state, rm.cycle, rm.nodes, rm.events, rm.marks), which local actors (metrics) read typed too.
//
// Inside one process the router carries a routed_message: the topic, the sender's envelope and a shared,
// immutable payload; nothing is encoded. Only where a topic leaves the process does encode_payload turn it
// into the MessagePack body that topic's codec defines, and the receiving process's decode_payload (chosen
// by topic) gives back the same payload. So an actor cannot tell whether its peer runs beside it or on
// another host.
//
// Thread-safety: plain values; the payload is shared read-only between actors.

#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "messages/envelope.hpp"
#include "messages/internal/admin_query.hpp"
#include "messages/internal/machines_forgotten.hpp"
#include "messages/internal/node_changes.hpp"
#include "messages/internal/node_ops.hpp"
#include "messages/internal/node_sync.hpp"
#include "messages/internal/plan_sync_request.hpp"
#include "messages/internal/pool_plan.hpp"
#include "messages/internal/reconfigure_request.hpp"
#include "messages/internal/recovered_nodes.hpp"
#include "messages/internal/round_done.hpp"
#include "messages/internal/round_start.hpp"
#include "messages/internal/seed_request.hpp"
#include "messages/internal/vary_request.hpp"
#include "messages/internal/work_slice.hpp"
#include "messages/internal/work_sync_request.hpp"
#include "messages/result.hpp"
#include "messages/rm_cycle.hpp"
#include "messages/rm_event.hpp"
#include "messages/rm_ha.hpp"
#include "messages/rm_marks.hpp"
#include "messages/rm_nodes.hpp"
#include "messages/rm_schedule_changes.hpp"
#include "messages/rm_state.hpp"

namespace rmbus::messages {

using payload = std::variant<node_ops, node_changes, node_sync_request, node_snapshot, work_slice, round_start,
                             pool_plan, round_done, admin_query, admin_answer, vary_request, recovered_nodes,
                             reconfigure_request, rm_state, rm_cycle, rm_nodes, rm_event, machines_forgotten,
                             seed_request, rm_ha, rm_schedule_changes, work_sync_request, plan_sync_request,
                             rm_marks>;

struct routed_message {
  std::string topic;
  envelope env;  // stamped by the sending actor: src "<instance>:<role>", seq per (src, topic)
  std::shared_ptr<const payload> body;

  // The payload as T, or nullptr when it holds another type.
  template <class T>
  const T* as() const {
    return body ? std::get_if<T>(body.get()) : nullptr;
  }
};

// The body for the bus: the codec of the payload's type.
std::string encode_payload(const envelope& env, const payload& p);

// Decodes a body received on `topic` into the payload type that topic carries (by exact topic or topic
// prefix); an unknown topic is an error naming it.
result<payload> decode_payload(std::string_view topic, std::string_view body, const decode_limits& limits = {},
                               envelope* env_out = nullptr);

}  // namespace rmbus::messages
