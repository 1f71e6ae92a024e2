#pragma once
// Spawn functions of the actors, one per actor file. Each actor subscribes itself at the router on start.
// Included only by actors/*.cpp.

#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "actors/detail/env.hpp"

namespace rmbus::actors {

struct rm_metric_families;  // actors/rm_metrics.hpp
struct roles;               // actors/runtime.hpp

// router.cpp: local delivery by topic prefix; `outbound` (may be invalid) publishes on the bus; `limits`
// bound the decoding of internal messages arriving from other processes; `ha` (HA on, a head process) fences
// what reaches the bus.
caf::actor spawn_router(caf::actor_system& sys, caf::actor outbound, std::string instance, bool split,
                        messages::decode_limits limits = {}, std::shared_ptr<ha_gate> ha = {});
// heartbeat_intake.cpp
caf::actor spawn_heartbeat_intake(caf::actor_system& sys, actor_env env);
// workmap_diff.cpp
caf::actor spawn_workmap_diff(caf::actor_system& sys, actor_env env);
// pool_scheduler.cpp: the scheduler of one top-level pool.
// `generation`: orders the pool's schedulers (messages/internal/seed_request.hpp); strictly increasing per pool.
// `retired`: stop requested when control replaces or stops it; from then on it takes no round and quits.
// `restarted`: it replaces one that failed, so it asks the intake for its pool's machines again.
// `intake_elsewhere`: the intake runs in another process, which may have announced the pool's machines before
// this one joined the bus; the scheduler asks for them when its first work slice shows the bus carries its
// messages (a request sent at once could be lost before its publisher's connection is up).
// `replaces`: it takes over from another scheduler of the pool in this process (a reconfiguration, an HA
// step-down): it answers admin's reads only once it has scheduled a round (pool_scheduler.cpp).
caf::actor spawn_pool_scheduler(caf::actor_system& sys, actor_env env, std::string pool, std::uint64_t generation,
                                std::stop_token retired = {}, bool restarted = false, bool intake_elsewhere = false,
                                bool replaces = false);
// rival_watch.cpp: another RM driving this bus by mistake (without HA beside HA candidates), in the log and
// as rm.events.
caf::actor spawn_rival_watch(caf::actor_system& sys, actor_env env);
// eviction.cpp
caf::actor spawn_eviction(caf::actor_system& sys, actor_env env);
// publication.cpp
caf::actor spawn_publication(caf::actor_system& sys, actor_env env);
// metrics.cpp: records what this process sees in `families` (its Prometheus registry); sends nothing.
caf::actor spawn_metrics(caf::actor_system& sys, actor_env env, std::shared_ptr<const rm_metric_families> families);
// accounting.cpp: job records (JSON lines and job_done events); runs with the publisher.
caf::actor spawn_accounting(caf::actor_system& sys, actor_env env);
// health.cpp: the process's health event every heartbeat interval; asks `control` for the actors to probe.
caf::actor spawn_health(caf::actor_system& sys, actor_env env, caf::actor control);
// ha.cpp: the HA election's shell (HA on, a head process): beacons on rm.ha, listens to other RMs, tells
// `control` when this process becomes the active RM or steps down.
caf::actor spawn_ha(caf::actor_system& sys, actor_env env, caf::actor control);
// admin.cpp: `reload` loads the configuration from its source again (throws config::config_error).
caf::actor spawn_admin(caf::actor_system& sys, actor_env env, std::function<config::rm_config()> reload);

// control.cpp: spawns the role actors of this process (the schedulers of its pools; health and accounting while
// enabled), reconfigures them, and supervises the schedulers. `fixed`: the role actors the runtime spawned,
// reset on reconfiguration and stopped with control; `reconfigured` runs on control's thread with each
// configuration it takes up.
caf::actor spawn_control(caf::actor_system& sys, actor_env env, const roles& run,
                         std::function<config::rm_config()> reload, std::vector<caf::actor> fixed,
                         caf::actor accounting, caf::actor diff, caf::actor publication,
                         std::function<void(const config::rm_config&)> reconfigured);

}  // namespace rmbus::actors
