#pragma once
// The CAF atoms the actors speak among themselves inside one process. Included only by actors/*.cpp: CAF
// headers are heavy, so no widely included header pulls them in.
//
// Everything that carries RM data between actors is a typed message (messages/internal/payload.hpp)
// travelling as (deliver_atom, routed_message), or a public input's bytes as (deliver_atom, topic, body); the
// atoms below are only the verbs of that plumbing and of local housekeeping (timers, shutdown, admin
// requests from the REP thread).

#include <caf/atom.hpp>

namespace rmbus::actors::atoms {

using route = caf::atom_constant<caf::atom("route")>;        // actor -> router: (topic, body) to deliver
using deliver = caf::atom_constant<caf::atom("deliver")>;    // router -> actor: (topic, body)
using inbound = caf::atom_constant<caf::atom("inbound")>;    // bus thread -> router: (topic, body, src)
using subscribe = caf::atom_constant<caf::atom("subscribe")>;  // (prefix, actor)
using publish = caf::atom_constant<caf::atom("publish")>;    // router -> outbound: (topic, body)
using tick = caf::atom_constant<caf::atom("tick")>;          // timers
using timeout = caf::atom_constant<caf::atom("timeout")>;    // round / query deadlines: (id)
using ready = caf::atom_constant<caf::atom("ready")>;        // init-stability timer fired
using settled = caf::atom_constant<caf::atom("settled")>;    // a restarted RM's settle window ended
using admin = caf::atom_constant<caf::atom("admin")>;        // REP thread -> admin actor: (body) -> body
using hup = caf::atom_constant<caf::atom("hup")>;            // SIGHUP -> control: reconfigure
using stop = caf::atom_constant<caf::atom("stop")>;          // control: quit every actor it spawned
using reset = caf::atom_constant<caf::atom("reset")>;        // control -> actor: (config ptr) after reload
using bad = caf::atom_constant<caf::atom("bad")>;            // bus thread -> router: (topic, field, what)
using flush = caf::atom_constant<caf::atom("flush")>;        // intake: its batch window closed
using nodes_due = caf::atom_constant<caf::atom("nodesdue")>;  // publication: rm.nodes may go out again
using probe = caf::atom_constant<caf::atom("probe")>;        // health -> actor: its mailbox depth (uint64)
using listen = caf::atom_constant<caf::atom("listen")>;      // (prefix, actor): RM outputs of OTHER processes
using ha_active = caf::atom_constant<caf::atom("haactive")>;    // HA: this process became the active RM
using ha_standby = caf::atom_constant<caf::atom("hastandby")>;  // HA: it stepped down (forget its decisions)
using handover = caf::atom_constant<caf::atom("handover")>;     // admin -> HA actor: (target or "") -> text
using backoff = caf::atom_constant<caf::atom("backoff")>;    // control -> health: (pool, round timeout ms now)
using marks = caf::atom_constant<caf::atom("marks")>;        // eviction, HA: republish rm.marks (timer)

}  // namespace rmbus::actors::atoms
