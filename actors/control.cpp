// Control: spawns the role actors of this process, reconfigures them, and supervises the schedulers.
//
// A pool scheduler that stops (an exception in a round) or does not answer a round within round_timeout_ms
// (it hangs) is replaced by a fresh one, announced by an rm.events `pool_restarted` event. Meanwhile the other
// pools keep scheduling, and publication publishes the failed pool's last good plan (its own round
// timeout). The new scheduler asks the intake for its pool's machines, starts from the last schedule
// published for its pool (in-flight grants are kept: pool_scheduler.cpp) and recovers the pool's running work
// from the next work map, as after a reconfiguration. A hung scheduler cannot be stopped while it hangs: it
// is told to exit and abandoned, and exits when (if) its round returns; publication ignores its late plan
// (each scheduler has a generation, strictly increasing per pool).
//
// Slow is not hung: on a machine starved of CPU every round is late, and a replacement must redo all of it
// under the same starvation. So each replacement for a timeout doubles that pool's round timeout (up to 32
// times the configured one), announced by a `scheduler_backoff` event; a round answered within the
// configured timeout brings it back.
#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <map>
#include <set>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/detail/spawn.hpp"
#include "actors/round_watch.hpp"
#include "actors/runtime.hpp"
#include "messages/rm_event.hpp"
#include "messages/topics.hpp"

namespace rmbus::actors {

namespace {

struct control_state {
  actor_env env;
  roles run;
  std::function<config::rm_config()> reload;
  std::function<void(const config::rm_config&)> reconfigured;
  std::vector<caf::actor> fixed;               // intake, diff, eviction, publication, admin
  std::map<std::string, caf::actor> schedulers;
  // Asks a replaced scheduler to take no further round: it may be blocked in one, with rounds queued behind
  // an exit message it will read only after them.
  std::map<std::string, std::stop_source> retire;
  round_watch unanswered;                      // rounds handed to local schedulers, no plan back yet
  std::map<std::string, std::uint64_t> generations;  // pool -> generation of its current scheduler
  std::map<std::string, int> timed_out_in_a_row;     // pool -> replacements for a timeout since a timely round
  std::map<std::string, std::pair<std::uint64_t, std::int64_t>> last_handed;  // pool -> (cycle, wall ms)
  std::set<std::string> watched;                    // work topics control is subscribed to
  caf::actor health;                           // when [health] is enabled
  caf::actor accounting;                       // when [accounting] is enabled and this process publishes
  caf::actor diff;                             // HA: told when this process becomes the active RM
  caf::actor publication;                      // HA: told when it steps down
  std::string ha_tag;                          // HA, while active: "e<epoch>.<instance>" for share ids
  envelope_stamper stamper{"control"};
  static inline const char* name = "rmbus.control";
};

using control_actor = caf::stateful_actor<control_state>;

constexpr int max_backoff_doublings = 5;  // 32 x round_timeout_ms

std::int64_t round_timeout_of(const control_state& st, const std::string& pool) {
  auto it = st.timed_out_in_a_row.find(pool);
  const int k = it == st.timed_out_in_a_row.end() ? 0 : std::min(it->second, max_backoff_doublings);
  return static_cast<std::int64_t>(st.env.cfg->runtime.round_timeout_ms) << k;
}

void spawn_scheduler(control_actor* self, const std::string& pool, bool restarted) {
  auto& st = self->state;
  // Strictly increasing per pool (a restart within the same millisecond still gets a newer one), and above
  // any earlier process's (the wall clock), so a plan's generation tells publication which scheduler is newest.
  const bool replaces = st.generations.count(pool) > 0;  // a scheduler of this pool ran here before
  auto& generation = st.generations[pool];
  generation = std::max<std::uint64_t>(generation + 1, static_cast<std::uint64_t>(wall_clock_ms()));
  auto& retire = st.retire[pool];
  retire = std::stop_source{};
  auto a = spawn_pool_scheduler(self->system(), st.env, pool, generation, retire.get_token(), restarted,
                                !st.run.intake, replaces);
  if (!st.ha_tag.empty()) self->send(a, atoms::ha_active::value, st.ha_tag);
  self->monitor(a);
  st.schedulers[pool] = a;
  if (st.watched.insert(topics::work_topic(pool)).second)
    self->send(st.env.router, atoms::subscribe::value, topics::work_topic(pool), caf::actor_cast<caf::actor>(self));
}

void spawn_schedulers(control_actor* self) {
  auto& st = self->state;
  for (const auto& p : st.env.cfg->scheduling.nodepools) {
    if (!p.parent.empty()) continue;
    const bool mine = st.run.all_pools || std::find(st.run.pools.begin(), st.run.pools.end(), p.name) != st.run.pools.end();
    if (mine) spawn_scheduler(self, p.name, false);
  }
}

// Schedulers stopped on purpose (reconfiguration, shutdown) are forgotten first, so that their down
// messages are not taken for failures.
void stop_schedulers(control_actor* self) {
  auto& st = self->state;
  for (auto& [pool, a] : st.schedulers) {
    self->demonitor(a);
    st.retire[pool].request_stop();
    self->send_exit(a, caf::exit_reason::user_shutdown);
  }
  st.schedulers.clear();
  st.unanswered.clear();
}

void announce_backoff(control_actor* self, const std::string& pool) {
  auto& st = self->state;
  if (st.health) self->send(st.health, atoms::backoff::value, pool, round_timeout_of(st, pool));
  route(self, st.env.router, st.stamper, std::string{messages::topics::rm_events},
        messages::rm_event{std::string{messages::event_kinds::scheduler_backoff},
                           {{"pool", pool},
                            {"round_timeout_ms", std::to_string(round_timeout_of(st, pool))},
                            {"replacements", std::to_string(st.timed_out_in_a_row[pool])}}});
}

void restart_scheduler(control_actor* self, const std::string& pool, const std::string& why, bool timed_out) {
  auto& st = self->state;
  auto it = st.schedulers.find(pool);
  if (it == st.schedulers.end()) return;
  const auto old = it->second;
  st.schedulers.erase(it);
  st.retire[pool].request_stop();
  st.unanswered.forget(pool);
  self->demonitor(old);
  self->send_exit(old, caf::exit_reason::kill);
  spdlog::error("pool {}: its scheduler {}; a new one takes over from the last published schedule and the next work map",
                pool, why);
  route(self, st.env.router, st.stamper, std::string{messages::topics::rm_events},
        messages::rm_event{"pool_restarted", {{"pool", pool}, {"reason", why}}});
  if (timed_out) {
    ++st.timed_out_in_a_row[pool];
    spdlog::warn("pool {}: replaced {} time(s) in a row for a timeout; its round timeout is now {} ms (the machine may be "
                 "overloaded: a slow scheduler is not a hung one)",
                 pool, st.timed_out_in_a_row[pool], round_timeout_of(st, pool));
    announce_backoff(self, pool);
  }
  spawn_scheduler(self, pool, true);
}

// Rounds handed to local schedulers are watched until their plan comes back.
void watch_rounds(control_actor* self, const messages::routed_message& m) {
  auto& st = self->state;
  if (const auto* plan = m.as<messages::pool_plan>()) {
    auto gen = st.generations.find(plan->pool);
    if (gen != st.generations.end() && plan->generation < gen->second) {
      spdlog::warn("pool {}: the scheduler replaced earlier answered round {} after all: it was slow, not hung",
                   plan->pool, plan->cycle);
      return;
    }
    st.unanswered.answered(plan->pool, plan->cycle);
    auto handed = st.last_handed.find(plan->pool);
    auto backed = st.timed_out_in_a_row.find(plan->pool);
    if (handed != st.last_handed.end() && handed->second.first == plan->cycle && backed != st.timed_out_in_a_row.end() &&
        backed->second > 0 &&
        wall_clock_ms() - handed->second.second <= static_cast<std::int64_t>(st.env.cfg->runtime.round_timeout_ms)) {
      backed->second = 0;
      spdlog::info("pool {}: round {} answered within the configured round timeout; back to {} ms", plan->pool,
                   plan->cycle, st.env.cfg->runtime.round_timeout_ms);
      announce_backoff(self, plan->pool);
    }
    return;
  }
  const auto* slice = m.as<messages::work_slice>();
  if (slice == nullptr) return;
  for (const auto& [pool, a] : st.schedulers) {
    if (m.topic != topics::work_topic(pool)) continue;
    st.unanswered.handed(pool, slice->cycle);
    st.last_handed[pool] = {slice->cycle, wall_clock_ms()};
    self->delayed_send(self, std::chrono::milliseconds(round_timeout_of(st, pool)), atoms::timeout::value, pool,
                       slice->cycle);
    return;
  }
}

// The health and accounting actors exist while their sections are enabled: a reconfiguration that turns one
// on or off starts or stops it; one that keeps it on hands it the new configuration.
void follow_optional_actors(control_actor* self) {
  auto& st = self->state;
  const auto& rt = st.env.cfg->runtime;
  const auto me = caf::actor_cast<caf::actor>(self);
  auto follow = [&](caf::actor& a, bool wanted, const char* what, auto spawn) {
    if (wanted && !a) {
      a = spawn();
      spdlog::info("{} started", what);
    } else if (!wanted && a) {
      self->send_exit(a, caf::exit_reason::user_shutdown);
      a = caf::actor{};
      spdlog::info("{} stopped", what);
    } else if (a) {
      self->send(a, atoms::reset::value, st.env.cfg);
    }
  };
  follow(st.health, rt.health.enabled, "health report", [&] { return spawn_health(self->system(), st.env, me); });
  follow(st.accounting, st.run.publisher && rt.accounting.enabled, "job accounting",
         [&] { return spawn_accounting(self->system(), st.env); });
}

// `reconfigured` runs on control's thread with each configuration it takes up (the embedded forwarder follows a
// changed heartbeat interval through it, the CURVE server sockets the allowed keys, and the owner's logging).
// `accounting` is spawned by the runtime, before the role actors, so that it sees the first round.
caf::behavior control(control_actor* self, actor_env env, roles run, std::function<config::rm_config()> reload,
                      std::vector<caf::actor> fixed, caf::actor accounting, caf::actor diff, caf::actor publication,
                      std::function<void(const config::rm_config&)> reconfigured) {
  auto& st = self->state;
  st.diff = std::move(diff);
  st.publication = std::move(publication);
  st.env = env;
  st.run = std::move(run);
  st.reload = std::move(reload);
  st.reconfigured = std::move(reconfigured);
  st.fixed = std::move(fixed);
  st.accounting = std::move(accounting);
  st.stamper = envelope_stamper{env.src("control")};
  spawn_schedulers(self);
  const auto me = caf::actor_cast<caf::actor>(self);
  if (env.cfg->runtime.health.enabled) st.health = spawn_health(self->system(), env, me);
  self->send(env.router, atoms::subscribe::value, std::string{topics::reconfigure}, me);
  self->send(env.router, atoms::subscribe::value, std::string{topics::plan}, me);
  self->set_down_handler([self](const caf::down_msg& dm) {
    std::string failed;
    for (const auto& [pool, a] : self->state.schedulers)
      if (a.address() == dm.source) failed = pool;
    if (!failed.empty()) restart_scheduler(self, failed, "stopped (" + to_string(dm.reason) + ")", false);
  });
  return {
      [self](atoms::probe) {
        // The health actor asks which actors to probe for their mailbox depths: the router, every role actor
        // and every pool's scheduler of this process, named without the "rmbus." of their CAF names.
        auto& st = self->state;
        std::vector<std::string> names{"router"};
        std::vector<caf::actor> actors{st.env.router};
        auto probed = st.fixed;
        if (st.accounting) probed.push_back(st.accounting);
        for (const auto& a : probed) {
          const auto* m = dynamic_cast<const caf::monitorable_actor*>(caf::actor_cast<caf::abstract_actor*>(a));
          std::string name = m != nullptr ? m->name() : "actor";
          if (name.rfind("rmbus.", 0) == 0) name.erase(0, 6);
          names.push_back(std::move(name));
          actors.push_back(a);
        }
        for (const auto& [pool, a] : st.schedulers) {
          names.push_back("scheduler." + pool);
          actors.push_back(a);
        }
        return caf::make_message(std::move(names), std::move(actors));
      },
      [self](atoms::deliver, const messages::routed_message& m) {
        if (m.as<messages::reconfigure_request>() == nullptr) {
          watch_rounds(self, m);
          return;
        }
        // rm.internal.reconfigure: reload our own copy, reset every local actor, start fresh schedulers
        // (they recover the running work from the next work map).
        auto& st = self->state;
        config_ptr cfg;
        try {
          cfg = std::make_shared<const config::rm_config>(st.reload());
        } catch (const std::exception& e) {
          spdlog::error("reconfiguration failed, keeping the running configuration: {}", e.what());
          return;
        }
        spdlog::info("reconfiguring");
        st.env.cfg = cfg;
        if (st.reconfigured) st.reconfigured(*cfg);
        stop_schedulers(self);
        spawn_schedulers(self);
        for (const auto& a : st.fixed) self->send(a, atoms::reset::value, cfg);
        follow_optional_actors(self);
      },
      [self](atoms::ha_active, const std::string& tag) {
        // HA: this process is the active RM from now on. Its schedulers, which have placed nothing as a
        // standby, coin ids under the new epoch; then differencing starts a round from the last work map.
        auto& st = self->state;
        st.ha_tag = tag;
        for (const auto& [pool, a] : st.schedulers) self->send(a, atoms::ha_active::value, tag);
        if (st.publication) self->send(st.publication, atoms::ha_active::value);
        if (st.diff) self->send(st.diff, atoms::ha_active::value);
      },
      [self](atoms::ha_active, const std::string& tag, bool) {
        // HA: still active under a raised epoch: ids given from now on carry it; nothing else changes.
        auto& st = self->state;
        st.ha_tag = tag;
        for (const auto& [pool, a] : st.schedulers) self->send(a, atoms::ha_active::value, tag);
      },
      [self](atoms::ha_standby) {
        // HA: stepped down. Whatever this process decided as the active is void: fresh schedulers (they
        // recover from the next work map when it is active again), every role actor reset as after a
        // reconfiguration, and publication forgets its plans.
        auto& st = self->state;
        st.ha_tag.clear();
        stop_schedulers(self);
        spawn_schedulers(self);
        for (const auto& a : st.fixed) self->send(a, atoms::reset::value, st.env.cfg);
        if (st.publication) self->send(st.publication, atoms::ha_standby::value);
      },
      [self](atoms::hup) {
        auto& st = self->state;
        try {
          (void)st.reload();  // validate before telling everyone
        } catch (const std::exception& e) {
          spdlog::error("SIGHUP: configuration not reloaded: {}", e.what());
          return;
        }
        route(self, st.env.router, st.stamper, std::string{topics::reconfigure}, messages::reconfigure_request{});
      },
      [self](atoms::timeout, const std::string& pool, std::uint64_t cycle) {
        auto& st = self->state;
        if (!st.unanswered.overdue(pool, cycle)) return;
        restart_scheduler(self, pool,
                          "did not answer round " + std::to_string(cycle) + " within " +
                              std::to_string(round_timeout_of(st, pool)) + " ms",
                          true);
      },
      [self](atoms::stop) {
        auto& st = self->state;
        stop_schedulers(self);
        for (auto& a : st.fixed) self->send_exit(a, caf::exit_reason::user_shutdown);
        for (auto* a : {&st.health, &st.accounting}) {
          if (*a) self->send_exit(*a, caf::exit_reason::user_shutdown);
          *a = caf::actor{};
        }
        st.fixed.clear();
        self->quit();
      },
  };
}

}  // namespace

caf::actor spawn_control(caf::actor_system& sys, actor_env env, const roles& run,
                         std::function<config::rm_config()> reload, std::vector<caf::actor> fixed,
                         caf::actor accounting, caf::actor diff, caf::actor publication,
                         std::function<void(const config::rm_config&)> reconfigured) {
  return sys.spawn(control, std::move(env), run, std::move(reload), std::move(fixed), std::move(accounting),
                   std::move(diff), std::move(publication), std::move(reconfigured));
}

}  // namespace rmbus::actors
