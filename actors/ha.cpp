// HA: the shell of the election (actors/ha_election.hpp) in a head process with [ha] enabled.
//
// It listens to rm.ha (other RMs' beacons) and rm.state (other RMs' schedules: their epoch and instance, read
// without decoding the schedule), reads the orchestrator's echoed rm_epoch that differencing notes in the gate,
// and ticks a few times per beacon. It beacons on rm.ha every beacon_ms, and at once when its role changes.
// When the election says so it:
//   takes over  opens the gate under the new epoch (actors/ha_gate.hpp), tells control (share ids under the
//               epoch, differencing starts a round from the last map), event ha_takeover with the silence
//   steps down  closes the gate first, in the same handler that heard the higher epoch, so nothing this process
//               queued afterwards reaches the bus; tells control (fresh schedulers, every actor reset); event
//               ha_demoted (or ha_handover for a planned switch-over)
// Its ticks renew the gate's self-lease. A tick that comes more than takeover_ms / 2 after the previous one
// means the process was paused: the lease stays run out until it has listened for two beacon intervals.
#include <set>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/detail/spawn.hpp"
#include "actors/ha_election.hpp"
#include "actors/process_stop.hpp"
#include "messages/detail/peek.hpp"
#include "messages/rm_event.hpp"
#include "messages/rm_ha.hpp"
#include "messages/topics.hpp"

namespace rmbus::actors {

namespace {

struct ha_actor_state {
  actor_env env;
  envelope_stamper stamper{"ha"};
  std::optional<ha_election> election;
  caf::actor control;
  std::int64_t tick_ms = 50;
  std::int64_t last_tick_ms = 0;
  std::int64_t listen_until_ms = 0;  // after a pause: no lease before this
  std::int64_t next_beacon_ms = 0;
  std::uint64_t bad_beacons = 0;
  std::int64_t started_ms = 0;
  std::set<std::string> rank_conflicts_reported;  // peers of this rank already reported
  static inline const char* name = "rmbus.ha";
};

using ha_actor = caf::stateful_actor<ha_actor_state>;

std::int64_t now_ms() { return ha_gate::steady_ms(); }

const config::ha_settings& settings(const ha_actor_state& st) { return st.env.cfg->runtime.ha; }

// How long a renewed lease lasts: half the takeover time, so that a process paused longer than that has lost
// it before any standby could have taken over.
std::int64_t lease_ms(const ha_actor_state& st) { return settings(st).takeover_ms / 2; }

void event(ha_actor* self, std::string kind, std::map<std::string, std::string> detail) {
  route(self, self->state.env.router, self->state.stamper, std::string{messages::topics::rm_events},
        messages::rm_event{std::move(kind), std::move(detail)});
}

void beacon(ha_actor* self) {
  auto& st = self->state;
  const auto now = now_ms();
  st.next_beacon_ms = now + settings(st).beacon_ms;
  route(self, st.env.router, st.stamper, std::string{messages::topics::rm_ha}, st.election->beacon(now));
}

void publish_view(ha_actor* self) {
  auto& st = self->state;
  const auto now = now_ms();
  ha_gate::view v;
  v.active = st.election->role() == ha_role::active;
  v.epoch = st.election->epoch();
  v.rank = st.election->self().rank;
  if (auto a = st.election->active_peer()) {
    v.active_instance = a->instance;
    v.active_admin = a->admin;
  }
  for (const auto& p : st.election->peers(now))
    v.peers.push_back({p.instance, p.rank, p.epoch, std::string{messages::to_string(p.state)}, p.admin, now - p.heard_ms});
  for (const auto& p : st.election->same_rank_peers(now)) v.rank_conflicts.push_back(p.instance);
  st.env.ha->set_view(std::move(v));
}

// Two candidates of one rank could coin the same epoch (messages/ha_ballot.hpp): a configuration error. Heard
// while this process starts (never active yet, within the 3 takeover_ms a fresh process listens) it refuses
// to run: it asks itself to stop with exit status 2, as for any configuration error. Heard later, it is
// reported once per peer: a warning, an event (the metric counts it) and a line of admin's status.
void check_rank(ha_actor* self, std::int64_t now) {
  auto& st = self->state;
  const auto rank = st.election->self().rank;
  for (const auto& p : st.election->same_rank_peers(now)) {
    if (!st.rank_conflicts_reported.insert(p.instance).second) continue;
    const auto what = "another HA candidate, " + p.instance + (p.admin.empty() ? "" : " (admin " + p.admin + ")") +
                      ", has this RM's rank " + std::to_string(rank) +
                      ": two candidates of one rank can coin the same epoch; give each its own [ha] rank";
    event(self, std::string{messages::event_kinds::ha_rank_conflict},
          {{"instance", st.env.instance}, {"rank", std::to_string(rank)}, {"peer", p.instance}, {"peer_admin", p.admin}});
    if (!st.election->ever_active() && now - st.started_ms < 3 * settings(st).takeover_ms) {
      spdlog::critical("HA: configuration error: {}; refusing to start", what);
      // Once more, so that the peer hears of this rank too: the beacon sent at start can be lost while the bus
      // connection is still being made, and the next one would come after the stop.
      beacon(self);
      request_stop(exit_status_configuration_error);
      return;
    }
    spdlog::error("HA: configuration error: {}", what);
  }
}

// "e<epoch>.<pid>.<start>": what this active's share ids carry after the scheduler's own prefix.
std::string share_tag(const ha_actor_state& st, std::uint64_t epoch) {
  auto instance = st.env.instance;
  if (instance.rfind("rmbus.", 0) == 0) instance.erase(0, 6);
  return "e" + std::to_string(epoch) + "." + instance;
}

void apply(ha_actor* self, const ha_election::outcome& o, const std::string& handover_to = {}) {
  auto& st = self->state;
  using change = ha_election::change;
  switch (o.what) {
    case change::none: return;
    case change::took_over: {
      st.env.ha->activate(o.epoch, now_ms() + lease_ms(st));
      spdlog::warn("HA: {} takes over as the active RM with epoch {} ({}; previous active {})", st.env.instance,
                   o.epoch, o.reason, o.by.empty() ? "unknown" : o.by);
      self->send(st.control, atoms::ha_active::value, share_tag(st, o.epoch));
      event(self, "ha_takeover",
            {{"instance", st.env.instance}, {"epoch", std::to_string(o.epoch)}, {"silence_ms", std::to_string(o.silence_ms)},
             {"previous", o.by}, {"reason", o.reason}});
      break;
    }
    case change::raised: {
      st.env.ha->activate(o.epoch, now_ms() + lease_ms(st));
      spdlog::warn("HA: {}: {}", st.env.instance, o.reason);
      self->send(st.control, atoms::ha_active::value, share_tag(st, o.epoch), false);
      break;
    }
    case change::demoted:
    case change::handed_over: {
      const auto own = st.env.ha->epoch();
      st.env.ha->deactivate(st.election->epoch());
      const bool planned = !handover_to.empty();
      if (planned)
        spdlog::warn("HA: {} hands over to {} and is a standby now (epoch {})", st.env.instance, handover_to, own);
      else
        spdlog::warn("HA: {} steps down to standby: {}", st.env.instance, o.reason);
      self->send(st.control, atoms::ha_standby::value);
      if (planned)
        event(self, "ha_handover", {{"instance", st.env.instance}, {"epoch", std::to_string(own)}, {"to", handover_to}});
      else
        event(self, "ha_demoted",
              {{"instance", st.env.instance}, {"epoch", std::to_string(own)}, {"heard_epoch", std::to_string(o.epoch)},
               {"by", o.by}, {"reason", o.reason}});
      break;
    }
  }
  beacon(self);  // peers learn the change now, not a beacon later
  publish_view(self);
}

void on_tick(ha_actor* self) {
  auto& st = self->state;
  const auto now = now_ms();
  const auto gap = now - st.last_tick_ms;
  st.last_tick_ms = now;
  if (gap > lease_ms(st)) {
    // Paused (SIGSTOP, a stalled host): whatever is queued may be stale. Listen before publishing again.
    st.listen_until_ms = now + 2 * settings(st).beacon_ms;
    st.env.ha->renew(0);
    spdlog::warn("HA: this process did not run for {} ms; it publishes nothing until it has listened for {} ms", gap,
                 2 * settings(st).beacon_ms);
  }
  const auto seen = st.env.ha->take_workmaps();
  if (seen.maps > 0) apply(self, st.election->heard_workmap(seen.echo, now, seen.echoed_cycle));
  apply(self, st.election->tick(now));
  if (st.election->role() == ha_role::active && now >= st.listen_until_ms) st.env.ha->renew(now + lease_ms(st));
  if (now >= st.next_beacon_ms) {
    beacon(self);
    publish_view(self);
  }
  self->delayed_send(self, std::chrono::milliseconds(st.tick_ms), atoms::tick::value);
}

void on_bus(ha_actor* self, const std::string& topic, const std::string& body) {
  auto& st = self->state;
  const auto now = now_ms();
  if (topic == messages::topics::rm_ha) {
    auto b = messages::decode_rm_ha(topic, body, limits_of(*st.env.cfg));
    if (!b) {
      // Reported like every bad message (an rm.events bad_message, counted in rmbus_bus_bad_messages_total even
      // on a standby, whose events stay in the process) and otherwise ignored: the election is unchanged.
      if (st.bad_beacons++ % 100 == 0) spdlog::warn("HA: {} ({} bad beacons so far)", b.error().message(), st.bad_beacons);
      route(self, st.env.router, st.stamper, std::string{messages::topics::rm_events},
            messages::make_bad_message_event(b.error()));
      return;
    }
    apply(self, st.election->heard_beacon(b.value(), now));
    check_rank(self, now);
    return;
  }
  if (topic == messages::topics::rm_state) {
    // Another RM's schedule: its epoch and sender, read from the envelope without decoding the schedule.
    const auto epoch = messages::detail::peek_top_level_uint(body, "epoch");
    const auto src = messages::detail::peek_top_level_str(body, "src");
    if (!epoch || !src) return;  // an RM without HA, or damage: nothing to learn
    const std::string instance{src->substr(0, src->find(':'))};
    apply(self, st.election->heard_schedule(*epoch, instance, now));
  }
}

caf::behavior ha(ha_actor* self, actor_env env, caf::actor control) {
  auto& st = self->state;
  st.env = env;
  st.control = std::move(control);
  st.stamper = envelope_stamper{env.src("ha")};
  const auto& cfg = settings(st);
  const auto advertised = cfg.advertise_admin.empty() ? env.cfg->runtime.admin : cfg.advertise_admin;
  st.election.emplace(ha_election::options{env.instance, static_cast<std::uint64_t>(cfg.rank), cfg.takeover_ms, advertised},
                      now_ms());
  st.tick_ms = std::clamp<std::int64_t>(cfg.beacon_ms / 4, 5, 50);
  st.last_tick_ms = now_ms();
  st.started_ms = st.last_tick_ms;
  spdlog::info("HA: {} starts as a standby (rank {}, beacon {} ms, takeover {} ms)", env.instance, cfg.rank,
               cfg.beacon_ms, cfg.takeover_ms);
  beacon(self);
  publish_view(self);
  self->delayed_send(self, std::chrono::milliseconds(st.tick_ms), atoms::tick::value);
  return {
      [self](atoms::tick) { on_tick(self); },
      [self](atoms::deliver, const std::string& topic, const std::string& body) { on_bus(self, topic, body); },
      [self](atoms::handover, const std::string& to) {
        auto& st = self->state;
        const auto r = st.election->handover(to.empty() ? std::nullopt : std::optional<std::string>{to}, now_ms());
        if (!r.ok) {
          spdlog::warn("HA: handover refused: {}", r.error);
          return caf::make_message(false, r.error);
        }
        ha_election::outcome o;
        o.what = ha_election::change::handed_over;
        o.epoch = st.election->epoch();
        apply(self, o, r.target);
        return caf::make_message(true, r.target);
      },
  };
}

}  // namespace

caf::actor spawn_ha(caf::actor_system& sys, actor_env env, caf::actor control) {
  auto router = env.router;
  auto self = sys.spawn(ha, std::move(env), std::move(control));
  for (const auto topic : {messages::topics::rm_ha, messages::topics::rm_state})
    caf::anon_send(router, atoms::listen::value, std::string{topic}, self);
  return self;
}

}  // namespace rmbus::actors
