// Health (Maui's SystemProfiler): every heartbeat interval this process publishes an rm.events `health`
// event about itself (actors/health_report.hpp: resident memory, round lag, mailbox depths, free space where
// it logs) and warns, in the event's level and in its log, while free space is under the configured percent.
//
// Mailbox depths: CAF lets only an actor itself read its mailbox, so the main actors answer a `probe` with
// their own depth. Each interval this actor asks control for the actors of the process (they change on
// reconfiguration), probes each, and reports the depths that came back by the next report; an actor busy
// for longer than an interval (a long round) keeps its last depth.
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/detail/spawn.hpp"
#include "actors/health_report.hpp"
#include "messages/topics.hpp"

namespace rmbus::actors {

namespace {

struct health_state {
  actor_env env;
  caf::actor control;
  envelope_stamper stamper{"health"};
  std::map<std::string, std::uint64_t> depths;
  std::map<std::string, std::int64_t> scheduler_timeouts;  // pools whose round timeout is backed off
  std::int64_t last_round_ms = 0;
  bool warned = false;
  static inline const char* name = "rmbus.health";
};

using health_actor = caf::stateful_actor<health_state>;

std::chrono::milliseconds interval_of(const health_state& st) {
  return std::chrono::milliseconds(st.env.cfg->runtime.heartbeat_interval_ms);
}

void probe(health_actor* self) {
  auto& st = self->state;
  self->request(st.control, interval_of(st), atoms::probe::value)
      .then(
          [self](const std::vector<std::string>& names, const std::vector<caf::actor>& actors) {
            for (std::size_t i = 0; i < names.size() && i < actors.size(); ++i) {
              self->request(actors[i], interval_of(self->state), atoms::probe::value)
                  .then([self, name = names[i]](std::uint64_t depth) { self->state.depths[name] = depth; },
                        [](const caf::error&) {});  // busy past the interval or gone: keep the last depth
            }
          },
          [](const caf::error&) {});
}

void report(health_actor* self) {
  auto& st = self->state;
  const auto& rt = st.env.cfg->runtime;
  health_sample s;
  s.instance = st.env.instance;
  s.rss_bytes = resident_bytes();
  s.round_lag_ms = std::max<std::int64_t>(0, wall_clock_ms() - st.last_round_ms);
  s.epoch_ms = rt.orchestrator_publish_ms * rt.state_publish_ratio;
  s.log_dir = log_dir_of(rt.logging.file);
  s.disk = disk_space_of(s.log_dir);
  s.mailboxes = st.depths;
  s.scheduler_timeouts = st.scheduler_timeouts;
  const bool low = s.disk && disk_low(*s.disk, rt.health.disk_warn_percent);
  if (low) {
    spdlog::warn("health: {} has {} bytes free ({}%), under the {}% warning threshold", s.log_dir,
                 s.disk->free_bytes, free_percent(*s.disk), rt.health.disk_warn_percent);
  } else if (st.warned) {
    spdlog::info("health: {} is back above the {}% free-space threshold", s.log_dir, rt.health.disk_warn_percent);
  }
  st.warned = low;
  route(self, st.env.router, st.stamper, std::string{messages::topics::rm_events},
        to_event(s, rt.health.disk_warn_percent));
}

caf::behavior health(health_actor* self, actor_env env, caf::actor control) {
  auto& st = self->state;
  st.env = env;
  st.control = std::move(control);
  st.stamper = envelope_stamper{env.src("health")};
  st.last_round_ms = wall_clock_ms();
  probe(self);
  self->delayed_send(self, interval_of(st), atoms::tick::value);
  return {
      [self](atoms::tick) {
        report(self);
        probe(self);
        self->delayed_send(self, interval_of(self->state), atoms::tick::value);
      },
      [self](atoms::deliver, const messages::routed_message& m) {
        if (m.as<messages::round_done>() != nullptr) self->state.last_round_ms = wall_clock_ms();
      },
      [self](atoms::reset, config_ptr cfg) { self->state.env.cfg = std::move(cfg); },
      [self](atoms::backoff, const std::string& pool, std::int64_t timeout_ms) {
        auto& st = self->state;
        if (timeout_ms > static_cast<std::int64_t>(st.env.cfg->runtime.round_timeout_ms))
          st.scheduler_timeouts[pool] = timeout_ms;
        else
          st.scheduler_timeouts.erase(pool);
      },
  };
}

}  // namespace

caf::actor spawn_health(caf::actor_system& sys, actor_env env, caf::actor control) {
  auto router = env.router;
  auto self = sys.spawn(health, std::move(env), std::move(control));
  caf::anon_send(router, atoms::subscribe::value, std::string{topics::done}, self);
  return self;
}

}  // namespace rmbus::actors
