#include "actors/runtime.hpp"

#include <atomic>
#include <fstream>
#include <future>
#include <map>
#include <stop_token>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>

#include <unistd.h>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "actors/detail/spawn.hpp"
#include "actors/rm_metrics.hpp"
#include "actors/round_watch.hpp"
#include "bus/bridge.hpp"
#include "bus/curve.hpp"
#include "bus/endpoint_list.hpp"
#include "bus/forwarder.hpp"
#include "bus/zap_handler.hpp"
#include "messages/admin.hpp"
#include "messages/heartbeat.hpp"
#include "messages/rm_event.hpp"
#include "messages/topics.hpp"
#include "metrics/metrics_http.hpp"
#include "metrics/metrics_registry.hpp"

#ifndef RMBUS_VERSION
#define RMBUS_VERSION "unknown"
#endif

namespace rmbus::actors {

bool roles::everything() const { return intake && diff && eviction && publisher && admin && all_pools; }

bool roles::head() const { return intake && diff && eviction && publisher && admin; }

roles parse_roles(std::string_view list, const config::rm_config& cfg) {
  roles r;
  std::size_t start = 0;
  bool any = false;
  while (start <= list.size()) {
    auto end = list.find(',', start);
    if (end == std::string_view::npos) end = list.size();
    auto item = list.substr(start, end - start);
    start = end + 1;
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) {
      if (end == list.size()) break;
      throw std::invalid_argument("--roles: empty entry in '" + std::string{list} + "'");
    }
    any = true;
    if (item == "all") {
      r.intake = r.diff = r.eviction = r.publisher = r.admin = r.all_pools = true;
    } else if (item == "intake") {
      r.intake = true;
    } else if (item == "diff") {
      r.diff = true;
    } else if (item == "eviction") {
      r.eviction = true;
    } else if (item == "publisher") {
      r.publisher = true;
    } else if (item == "admin") {
      r.admin = true;
    } else if (item == "scheduler") {
      r.all_pools = true;
    } else if (item.rfind("scheduler:", 0) == 0) {
      const std::string pool{item.substr(10)};
      bool top = false;
      for (const auto& p : cfg.scheduling.nodepools) top = top || (p.name == pool && p.parent.empty());
      if (!top) throw std::invalid_argument("--roles: '" + pool + "' is not a top-level nodepool of the configuration");
      r.pools.push_back(pool);
    } else {
      throw std::invalid_argument("--roles: unknown role '" + std::string{item} +
                                  "' (known: all, intake, diff, scheduler, scheduler:POOL, eviction, publisher, admin)");
    }
    if (end == list.size()) break;
  }
  if (!any) throw std::invalid_argument("--roles: no role given");
  // HA elects one head: the process that holds intake, differencing, eviction, publication and admin. A
  // standby must keep its own node table and map current, so it holds all five; only schedulers run apart.
  const int head = r.intake + r.diff + r.eviction + r.publisher + r.admin;
  if (cfg.runtime.ha.enabled && head > 0 && head < 5)
    throw std::invalid_argument("--roles: with [ha] enabled, intake, diff, eviction, publisher and admin run together "
                                "in each RM process that is a candidate (only scheduler roles run apart); '" +
                                std::string{list} + "' splits them");
  return r;
}

namespace {

// ---- control: spawns the role actors of this process, reconfigures them, and supervises the schedulers --
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
  auto& generation = st.generations[pool];
  generation = std::max<std::uint64_t>(generation + 1, static_cast<std::uint64_t>(wall_clock_ms()));
  auto& retire = st.retire[pool];
  retire = std::stop_source{};
  auto a = spawn_pool_scheduler(self->system(), st.env, pool, generation, retire.get_token(), restarted,
                                !st.run.intake);
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

std::string make_instance() {
  static const char* digits = "0123456789abcdefghijklmnopqrstuvwxyz";
  auto ms = static_cast<std::uint64_t>(wall_clock_ms());
  std::string s;
  do {
    s.insert(s.begin(), digits[ms % 36]);
    ms /= 36;
  } while (ms > 0);
  return "rmbus." + std::to_string(::getpid()) + "." + s;
}

// CAF's work-stealing workers first spin (aggressive), then poll with 50 us sleeps (moderate) for 500 attempts
// before they wait on a condition variable (relaxed). A cluster's heartbeats arrive every millisecond or so, so
// with those defaults the workers never reached the wait and an idle RM burned a third of a core polling.
// A short spin (and one sleeping poll) keeps a busy RM fast and lets an idle one sleep; a relaxed worker wakes at
// once for work handed to it, and looks for work to steal every 10 ms (CAF's default: waking more often cost an
// idle RM a few percent of a core and gained nothing measurable).
// CURVE (docs/bus.md "Security"): this process's key pair, the client keys its bridge uses, and the ZAP handler
// for its server sockets (embedded forwarder, admin endpoint), read from the files [security] names.
struct curve_setup {
  bus::curve_keypair own;
  bus::curve_client client;
  bool serves = false;                    // this process has CURVE server sockets (forwarder, admin endpoint)
  std::vector<bus::allowed_key> allowed;  // empty when this process serves no CURVE socket
};

// The keys file, plus the RM's own key: it always has the rm role on its own forwarder, listed or not.
std::vector<bus::allowed_key> read_allowed(const config::security_settings& sec, const bus::curve_keypair& own) {
  auto allowed = bus::read_keys_file(sec.keys);
  bool listed = false;
  for (const auto& k : allowed) listed = listed || k.public_key == own.public_key;
  if (!listed) allowed.push_back({own.public_key, "rmbus", bus::roles::rm});
  return allowed;
}

// The forwarder this process connects to: its own embedded one (whose server key is this process's key, so a
// server_key meant for the --no-forwarder processes sharing the configuration is ignored), or server_key's.
std::string forwarder_public_key(const config::security_settings& sec, const bus::curve_keypair& own,
                                 bool embedded_forwarder) {
  if (embedded_forwarder || sec.server_key.empty()) return own.public_key;
  return bus::read_key_file(sec.server_key, false).public_key;
}

curve_setup read_curve_setup(const config::security_settings& sec, bool serves, bool embedded_forwarder) {
  curve_setup c;
  c.own = bus::read_key_file(sec.key, true);
  c.client.own = c.own;
  c.client.server_public_key = forwarder_public_key(sec, c.own, embedded_forwarder);
  if (embedded_forwarder && !sec.server_key.empty())
    spdlog::info("CURVE: server_key {} not used: this process connects to its own embedded forwarder",
                 sec.server_key);
  c.serves = serves;
  if (serves) c.allowed = read_allowed(sec, c.own);
  return c;
}

// "+carol -bob": the names a new list adds and drops, for the log.
std::string key_changes(const std::vector<bus::allowed_key>& before, const std::vector<bus::allowed_key>& after) {
  std::map<std::string, std::string> old_keys, new_keys;  // public key -> name
  for (const auto& k : before) old_keys[k.public_key] = k.name;
  for (const auto& k : after) new_keys[k.public_key] = k.name;
  std::string out;
  for (const auto& [key, name] : new_keys)
    if (!old_keys.count(key)) out += " +" + name;
  for (const auto& [key, name] : old_keys)
    if (!new_keys.count(key)) out += " -" + name;
  return out.empty() ? " (no change)" : out;
}

// bus_refused events, at most 10 a second: the forwarder's thread reports refusals here, and they go out as
// rm.events through the router once it exists (refusals before that are counted and logged only).
class refusal_events {
 public:
  void set_target(caf::actor router) {
    std::lock_guard lock{mutex_};
    router_ = std::move(router);
  }
  void report(const bus::refused_publish& r) {
    std::lock_guard lock{mutex_};
    const auto now = std::chrono::steady_clock::now();
    if (now - window_start_ >= std::chrono::seconds{1}) {
      if (dropped_ > 0) spdlog::warn("bus: {} more messages refused for their sender's role", dropped_);
      window_start_ = now;
      used_ = 0;
      dropped_ = 0;
    }
    if (used_ >= 10 || !router_) {
      ++dropped_;
      return;
    }
    ++used_;
    spdlog::warn("bus: refused {} from {}: not a topic its roles may publish", r.topic, r.sender);
    caf::anon_send(router_, bus::make_outbound(messages::topics::rm_events,
                                               messages::rm_event{std::string{messages::event_kinds::bus_refused},
                                                                  {{"sender", r.sender}, {"topic", r.topic}}}));
  }

 private:
  std::mutex mutex_;
  caf::actor router_;
  std::chrono::steady_clock::time_point window_start_{};
  int used_ = 0;
  std::uint64_t dropped_ = 0;
};

// The embedded forwarder's shedding gap: as configured, or an eighth of the heartbeat interval. The RM needs a
// node's heartbeat once per interval; up to eight per interval pass, so a node whose heartbeats bunch up (an
// agent catching up after a pause) loses none that matter.
std::chrono::milliseconds heartbeat_min_gap(const runtime_options& opt, const config::rm_config& cfg) {
  return std::chrono::milliseconds(opt.heartbeat_min_gap_ms ? *opt.heartbeat_min_gap_ms
                                                            : cfg.runtime.heartbeat_interval_ms / 8);
}

caf::actor_system_config& with_threads(caf::actor_system_config& cfg, int threads) {
  cfg.set("scheduler.max-threads", threads);
  cfg.set("work-stealing.aggressive-poll-attempts", 20);
  cfg.set("work-stealing.moderate-poll-attempts", 1);
  return cfg;
}

}  // namespace

struct runtime::impl {
  // Declaration order is destruction order reversed: the context outlives every socket (deps.md trap 5).
  zmq::context_t ctx;
  std::optional<curve_setup> curve;
  std::optional<bus::zap_handler> zap;  // after ctx: its socket is closed before the context goes
  refusal_events refusals;
  caf::actor_system_config caf_cfg;
  std::optional<caf::actor_system> sys;
  std::optional<bus::forwarder> fwd;
  std::optional<bus::bridge> bridge;
  // Metrics (absent when "off"). The endpoint's render reads the bridge, so it is declared after it (and
  // stopped first in stop()); the registry outlives both.
  std::shared_ptr<metrics::metrics_registry> registry;
  std::shared_ptr<const rm_metric_families> families;
  std::optional<bus_metrics> bus_stats;  // used by the endpoint's render only, one scrape at a time
  std::optional<metrics::metrics_http> http;
  runtime_options opt;
  std::string instance;
  caf::actor router;
  caf::actor control;
  caf::actor admin;
  caf::actor ha;  // HA on, a head process: the election
  std::optional<zmq::socket_t> rep;
  std::thread rep_thread;
  std::atomic<bool> stopping{false};
  bool stopped = false;

  void serve_admin();
  std::string render_metrics();
  void reload_keys(const config::security_settings& sec);
};

// On reconfiguration (SIGHUP, rmbus-admin reconfigure): the allowed keys are read again and decide every
// connection from now on. The process's own key pair, the server key it connects with and CURVE on or off are
// fixed at start (its sockets hold them): a new configuration that changes them is logged and not applied.
void runtime::impl::reload_keys(const config::security_settings& sec) {
  if (sec.curve != curve.has_value()) {
    spdlog::warn("CURVE: [security] curve = {} takes effect only when rmbus restarts; CURVE stays {}", sec.curve,
                 curve ? "on" : "off");
    return;
  }
  if (!curve) return;
  try {
    if (bus::read_key_file(sec.key, true).public_key != curve->own.public_key)
      spdlog::warn("CURVE: the key pair in {} differs from the one in force ({}); a process's own key pair "
                   "changes only when it restarts",
                   sec.key, curve->own.public_key);
    const auto server = forwarder_public_key(sec, curve->own, opt.embedded_forwarder);
    if (server != curve->client.server_public_key)
      spdlog::warn("CURVE: the forwarder's public key ({}) differs from the one in force ({}); it changes only "
                   "when rmbus restarts",
                   server, curve->client.server_public_key);
  } catch (const bus::curve_error& e) {
    spdlog::warn("CURVE: {} (the key pair in force stays until rmbus restarts)", e.what());
  }
  if (!curve->serves || !zap) return;
  try {
    auto allowed = read_allowed(sec, curve->own);
    const auto changes = key_changes(curve->allowed, allowed);
    zap->replace_allowed(allowed);
    spdlog::info("CURVE: allowed keys reloaded from {}: {} keys{}; connections made from now on are checked "
                 "against them, open ones stay until they reconnect",
                 sec.keys, allowed.size(), changes);
    curve->allowed = std::move(allowed);
  } catch (const bus::curve_error& e) {
    spdlog::error("CURVE: allowed keys not reloaded, the {} keys in force stay: {}", curve->allowed.size(),
                  e.what());
  }
}

std::string runtime::impl::render_metrics() {
  if (bridge && bus_stats) bus_stats->update(bridge->inbound_stats());
  if (curve && bus_stats) bus_stats->update_refused(fwd ? fwd->refused() : 0, zap ? zap->stats().refused : 0);
  if (fwd && bus_stats) bus_stats->update_shed(fwd->shed());
  return registry->render();
}

void runtime::impl::serve_admin() {
  caf::scoped_actor self{*sys, true};
  while (!stopping.load()) {
    zmq::pollitem_t items[] = {{rep->handle(), 0, ZMQ_POLLIN, 0}};
    zmq::poll(items, 1, std::chrono::milliseconds(100));
    if ((items[0].revents & ZMQ_POLLIN) == 0) continue;
    std::vector<zmq::message_t> frames;
    if (!zmq::recv_multipart(*rep, std::back_inserter(frames), zmq::recv_flags::dontwait)) continue;
    std::string reply;
    if (frames.size() != 1) {
      messages::admin_reply r;
      r.ok = false;
      r.error = "an admin request is one frame, got " + std::to_string(frames.size());
      reply = messages::encode(messages::envelope{1, 0, 0, instance + ":admin"}, r);
    } else {
      // Who sent it: the connection's peer address (ZeroMQ message metadata) and, with CURVE, the key the
      // ZAP handler admitted (its User-Id: roles, name, public key).
      const char* peer = frames[0].gets("Peer-Address");
      const char* user_id = curve ? frames[0].gets("User-Id") : nullptr;
      const auto key = user_id != nullptr ? bus::parse_user_id(user_id) : std::nullopt;
      self->request(admin, std::chrono::seconds(8), atoms::admin::value, frames[0].to_string(),
                    std::string{peer != nullptr ? peer : "unknown peer"}, key ? key->name : std::string{},
                    key ? key->public_key : std::string{})
          .receive([&](std::string& body) { reply = std::move(body); },
                   [&](caf::error& err) {
                     messages::admin_reply r;
                     r.ok = false;
                     r.error = "the RM did not answer in time (" + to_string(err) + ")";
                     reply = messages::encode(messages::envelope{1, 0, 0, instance + ":admin"}, r);
                   });
    }
    rep->send(zmq::buffer(reply), zmq::send_flags::none);
  }
}

runtime::runtime(runtime_options options) : impl_(std::make_unique<impl>()) {
  auto& m = *impl_;
  m.opt = std::move(options);
  m.instance = make_instance();
  const auto& rt = m.opt.cfg.runtime;
  if (rt.security.curve) {
    // First of all: a missing or malformed key file ends the start-up before anything runs.
    m.curve = read_curve_setup(rt.security, m.opt.embedded_forwarder || m.opt.run.admin, m.opt.embedded_forwarder);
    if (!m.curve->allowed.empty()) {
      m.zap.emplace(m.ctx, m.curve->allowed);
      m.zap->start();
    }
  }
  if (rt.metrics != "off") {
    // Bound before anything else exists, so a busy port ends the start-up with nothing to take down.
    m.registry = std::make_shared<metrics::metrics_registry>();
    m.families = std::make_shared<const rm_metric_families>(*m.registry);
    m.families->up.set({}, 1);
    m.families->build_info.set({RMBUS_VERSION, m.instance}, 1);
    if (rt.ha.enabled && m.opt.run.head()) {
      m.families->ha_role.set({}, 0);  // every candidate starts as a standby
      m.families->ha_epoch.set({}, 0);
      m.families->ha_takeovers.inc({}, 0);
    }
    m.bus_stats.emplace(m.families);
    m.http.emplace(rt.metrics, [&m] { return m.render_metrics(); });
  }
  if (m.opt.run.admin) {
    // Bound before the actor system too: once actors run, a failing constructor could not take them down
    // (they hold one another through the router), and the process would hang instead of exiting 1.
    m.rep.emplace(m.ctx, zmq::socket_type::rep);
    m.rep->set(zmq::sockopt::linger, 200);
    if (m.curve) bus::apply_curve_server(*m.rep, m.curve->own, bus::admin_zap_domain);
    try {
      m.rep->bind(rt.admin);
    } catch (const zmq::error_t& e) {  // which endpoint, for the operator: a second rmbus on the same ports
      throw std::runtime_error("admin endpoint " + rt.admin + ": cannot bind: " + e.what());
    }
  }
  if (m.opt.run.publisher && rt.accounting.enabled && !rt.accounting.file.empty()) {
    // Checked before the actor system too, for the same reason: a file that cannot be written ends the start-up.
    std::ofstream probe(rt.accounting.file, std::ios::app);
    if (!probe) throw std::runtime_error("cannot open the accounting file '" + rt.accounting.file + "' for appending");
  }
  m.sys.emplace(with_threads(m.caf_cfg, std::max(1, m.opt.threads)));
  if (m.opt.embedded_forwarder) {
    bus::forwarder_options fo;
    // With several forwarders listed, the first of each list is this process's own (bound here); the bridge
    // below connects to every one, its own included (docs/bus.md, "Several forwarders").
    fo.pub_endpoint = bus::split_endpoints(rt.bus_pub).front();
    fo.sub_endpoint = bus::split_endpoints(rt.bus_sub).front();
    if (m.curve) fo.curve = m.curve->own;
    fo.shed = bus::repeat_shedding{std::string{messages::topics::heartbeat},
                                   [](std::string_view body) { return messages::peek_heartbeat_node(body); },
                                   heartbeat_min_gap(m.opt, m.opt.cfg)};
    m.fwd.emplace(m.ctx, fo, [&m](const bus::refused_publish& r) { m.refusals.report(r); });
    m.fwd->start();
  }
  const bool split = !m.opt.run.everything();
  // HA (docs/architecture.md "High availability"): a head process with [ha] enabled is a candidate.
  std::shared_ptr<ha_gate> ha;
  if (rt.ha.enabled && m.opt.run.head()) ha = std::make_shared<ha_gate>();
  m.router = spawn_router(*m.sys, caf::actor{}, m.instance, split, limits_of(m.opt.cfg), ha);

  bus::bridge_options bo;
  bo.publish.name = m.instance + ":bus";
  bo.publish.endpoint = rt.bus_pub;
  bo.subscribe.name = m.instance;
  bo.subscribe.endpoint = rt.bus_sub;
  bo.subscribe.topics.clear();
  if (m.opt.run.intake) bo.subscribe.topics.emplace_back(messages::topics::heartbeat);
  if (m.opt.run.diff) bo.subscribe.topics.emplace_back(messages::topics::workmap);
  if (split) bo.subscribe.topics.emplace_back(messages::topics::rm_internal_prefix);
  if (ha) {
    // Other RMs' beacons and schedules: the election hears their epochs.
    bo.subscribe.topics.emplace_back(messages::topics::rm_ha);
    bo.subscribe.topics.emplace_back(messages::topics::rm_state);
  }
  if (bo.subscribe.topics.empty()) bo.subscribe.topics.emplace_back("rm.internal.none");
  bo.subscribe.limits = limits_of(m.opt.cfg);
  bo.subscribe.coalesce = std::chrono::milliseconds(2);  // at most 2 ms more on any message; see subscriber.hpp
  // Heartbeats queue toward the intake only up to [limits] max_heartbeats_queued (bus/in_flight_bound.hpp).
  std::shared_ptr<bus::in_flight_bound> heartbeats_in_flight;
  if (m.opt.run.intake) {
    heartbeats_in_flight = std::make_shared<bus::in_flight_bound>(rt.limits.max_heartbeats_queued);
    heartbeats_in_flight->set_known_window(known_node_window(rt));
    bo.subscribe.bound = heartbeats_in_flight;
    bo.subscribe.bounded_topic = std::string{messages::topics::heartbeat};
    bo.subscribe.bound_key = [](std::string_view body) { return messages::peek_heartbeat_node(body); };
    // One hand-over per drain of the socket instead of one per heartbeat: at 50,000 nodes the wake-ups of the
    // router's and the intake's threads were most of an idle RM's steady cost.
    bo.subscribe.batched_topic = std::string{messages::topics::heartbeat};
  }
  if (m.curve) {
    bo.publish.curve = m.curve->client;
    bo.subscribe.curve = m.curve->client;
  }
  m.bridge.emplace(m.ctx, *m.sys, bo, m.router);
  caf::anon_send(m.router, atoms::publish::value, m.bridge->publisher_actor());
  m.refusals.set_target(m.router);

  actor_env env{m.router, m.instance, std::make_shared<const config::rm_config>(m.opt.cfg), m.opt.fault,
                heartbeats_in_flight, ha};
  std::vector<caf::actor> fixed;
  // First, so its subscriptions are in place before any role actor routes anything; in `fixed` so that
  // control resets it on reconfiguration and stops it with the others.
  if (m.families) fixed.push_back(spawn_metrics(*m.sys, env, m.families));
  caf::actor publication, diff;
  if (m.opt.run.publisher) {
    publication = spawn_publication(*m.sys, env);
    fixed.push_back(publication);
  }
  caf::actor accounting;
  if (m.opt.run.publisher && rt.accounting.enabled) accounting = spawn_accounting(*m.sys, env);
  if (m.opt.run.eviction) fixed.push_back(spawn_eviction(*m.sys, env));
  if (m.opt.run.diff) {
    diff = spawn_workmap_diff(*m.sys, env);
    fixed.push_back(diff);
  }
  if (m.opt.run.intake) fixed.push_back(spawn_heartbeat_intake(*m.sys, env));
  if (m.opt.run.admin) {
    m.admin = spawn_admin(*m.sys, env, m.opt.reload);
    fixed.push_back(m.admin);
  }
  m.control = m.sys->spawn(control, env, m.opt.run, m.opt.reload, fixed, accounting, diff, publication,
                           [&m](const config::rm_config& cfg) {
                             if (m.fwd) m.fwd->set_shed_gap(heartbeat_min_gap(m.opt, cfg));
                             m.reload_keys(cfg.runtime.security);
                             if (m.opt.on_reconfigure) m.opt.on_reconfigure(cfg);
                           });
  if (ha) {
    m.ha = spawn_ha(*m.sys, env, m.control);
    caf::anon_send(m.admin, atoms::handover::value, m.ha);
  }
  if (m.opt.run.admin) {
    m.rep_thread = std::thread([&m] { m.serve_admin(); });
  }
  if (m.http) m.http->start();
  spdlog::info("rmbus {} started: bus pub {} sub {}{}{}; metrics {}", m.instance, rt.bus_pub, rt.bus_sub,
               m.opt.embedded_forwarder ? " (embedded forwarder)" : "", m.curve ? " with CURVE" : "",
               m.http ? "http://" + m.http->host() + ":" + std::to_string(m.http->port()) + "/metrics" : "off");
}

runtime::~runtime() { stop(); }

void runtime::reconfigure() { caf::anon_send(impl_->control, atoms::hup::value); }

const std::string& runtime::instance() const { return impl_->instance; }

int runtime::metrics_port() const { return impl_->http ? impl_->http->port() : 0; }

void runtime::stop() {
  auto& m = *impl_;
  if (m.stopped) return;
  m.stopped = true;
  m.stopping = true;
  if (m.http) m.http->stop();  // no scrape reads the bridge after this
  if (m.rep_thread.joinable()) m.rep_thread.join();
  m.rep.reset();
  {
    caf::scoped_actor self{*m.sys, true};
    self->monitor(m.control);
    if (m.ha) self->send_exit(m.ha, caf::exit_reason::user_shutdown);  // no beacon after this
    self->send(m.control, atoms::stop::value);
    self->receive([](const caf::down_msg&) {}, caf::after(std::chrono::seconds(5)) >> [] {
      spdlog::warn("control actor did not stop in time");
    });
  }
  // Flush: every role actor has stopped, so nothing new is routed. A marker sent through the router and the
  // bus publisher actor is encoded only after everything queued before it has been handed to ZeroMQ, so the
  // last round leaves whole before the publisher's socket is closed (with its bounded linger).
  {
    auto flushed = std::make_shared<std::promise<void>>();
    auto done = flushed->get_future();
    auto once = std::make_shared<std::atomic<bool>>(false);
    const auto body = messages::encode(messages::envelope{1, 1, static_cast<std::uint64_t>(wall_clock_ms()), m.instance + ":flush"});
    caf::anon_send(m.router, bus::outbound_message{std::string{topics::flush}, [flushed, once, body](const messages::envelope&) {
                                                     if (!once->exchange(true)) flushed->set_value();
                                                     return body;
                                                   }});
    if (done.wait_for(std::chrono::seconds(3)) != std::future_status::ready)
      spdlog::warn("the bus publisher did not drain within 3 s; the last messages may be lost");
  }
  m.bridge->stop();
  caf::anon_send_exit(m.router, caf::exit_reason::user_shutdown);
  m.refusals.set_target(caf::actor{});
  m.router = caf::actor{};
  m.control = caf::actor{};
  m.admin = caf::actor{};
  m.ha = caf::actor{};
  m.sys->await_all_actors_done();
  m.bridge.reset();
  m.sys.reset();
  if (m.fwd) m.fwd->stop();
  m.fwd.reset();
  if (m.zap) m.zap->stop();
  spdlog::info("rmbus {} stopped", m.instance);
}

}  // namespace rmbus::actors
