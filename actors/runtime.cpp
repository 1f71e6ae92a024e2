#include "actors/runtime.hpp"

#include <atomic>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include <unistd.h>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "actors/detail/spawn.hpp"
#include "actors/rm_metrics.hpp"
#include "bus/bridge.hpp"
#include "bus/curve.hpp"
#include "bus/endpoint_list.hpp"
#include "bus/forwarder.hpp"
#include "bus/thread_name.hpp"
#include "bus/zap_handler.hpp"
#include "messages/admin.hpp"
#include "messages/heartbeat.hpp"
#include "messages/rm_event.hpp"
#include "messages/topics.hpp"
#include "metrics/metrics_http.hpp"
#include "metrics/metrics_registry.hpp"
#include "rmbus/version.hpp"


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
// once for work handed to it from outside (the bus bridge, timers), and looks for work to steal every 50 ms.
// CAF's default, 10 ms, woke each idle worker 100 times a second; at 50,000 idle nodes the workers' CPU fell
// by a quarter with 50 ms (docs/architecture.md, "Threads and memory"). Waking more often cost a few percent
// of a core and gained nothing measurable. A busy worker's own queue is stolen from by a worker still spinning
// after its last job; only work queued behind a long job while the other worker sleeps waits for the steal.
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

// The embedded forwarder's endpoints for this process's own bus clients (inproc names are per ZeroMQ context).
constexpr std::string_view local_forwarder_pub = "inproc://rmbus.forwarder.pub";
constexpr std::string_view local_forwarder_sub = "inproc://rmbus.forwarder.sub";

// An endpoint list with its first endpoint (the embedded forwarder's) replaced by `first`.
std::string with_first_endpoint(const std::string& list, std::string_view first) {
  auto endpoints = bus::split_endpoints(list);
  endpoints.front() = std::string{first};
  return bus::join_endpoints(endpoints);
}

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
  cfg.set("work-stealing.relaxed-sleep-duration", caf::timespan{std::chrono::milliseconds(50)});
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
  std::shared_ptr<ha_gate> ha_view;  // the same: its role and epoch, read at scrape time
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
  if (ha_view) {
    // What admin's status shows, read from the same view: after a failover or a handover a standby learns
    // higher epochs from the beacons it hears, not from an event of its own.
    const auto v = ha_view->get_view();
    families->ha_role.set({}, v.active ? 1 : 0);
    families->ha_epoch.set({}, static_cast<double>(v.epoch));
  }
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
    m.families->build_info.set({rmbus::version, m.instance}, 1);
    if (rt.ha.enabled && m.opt.run.head()) {
      // Only candidates export the HA families (rm_metric_families); every candidate starts as a standby.
      m.families->ha_role.set({}, 0);
      m.families->ha_epoch.set({}, 0);
      m.families->ha_takeovers.inc({}, 0);
      m.families->ha_rank_conflicts.inc({}, 0);
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
    if (m.curve) {
      fo.curve = m.curve->own;
    } else {
      // This process's own bus clients reach it in memory: a heartbeat would otherwise cross loopback TCP
      // twice inside the RM, into the forwarder and out of it to the bridge's subscriber.
      fo.local_pub_endpoint = std::string{local_forwarder_pub};
      fo.local_sub_endpoint = std::string{local_forwarder_sub};
    }
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
  m.ha_view = ha;
  m.router = spawn_router(*m.sys, caf::actor{}, m.instance, split, limits_of(m.opt.cfg), ha);

  bus::bridge_options bo;
  bo.publish.name = m.instance + ":bus";
  bo.publish.endpoint = rt.bus_pub;
  bo.subscribe.name = m.instance;
  bo.subscribe.endpoint = rt.bus_sub;
  if (m.fwd && !m.curve) {
    // The embedded forwarder (the first of each list) in memory; any others as configured.
    bo.publish.endpoint = with_first_endpoint(rt.bus_pub, local_forwarder_pub);
    bo.subscribe.endpoint = with_first_endpoint(rt.bus_sub, local_forwarder_sub);
  }
  bo.subscribe.topics.clear();
  if (m.opt.run.intake) bo.subscribe.topics.emplace_back(messages::topics::heartbeat);
  if (m.opt.run.diff) {
    bo.subscribe.topics.emplace_back(messages::topics::workmap);
    // Differencing reads and checks the items itself, the unchanged ones by their bytes (workmap_bytes.hpp).
    bo.subscribe.unread_tail_topic = std::string{messages::topics::workmap};
    bo.subscribe.unread_tail_key = "work";
  }
  if (split) bo.subscribe.topics.emplace_back(messages::topics::rm_internal_prefix);
  if (ha) {
    // Other RMs' beacons and schedules: the election hears their epochs; and the active's marks, which a
    // standby holds as its own.
    bo.subscribe.topics.emplace_back(messages::topics::rm_ha);
    bo.subscribe.topics.emplace_back(messages::topics::rm_state);
    bo.subscribe.topics.emplace_back(messages::topics::rm_marks);
  } else if (m.opt.run.publisher) {
    // HA candidates' beacons, which an RM without HA should never hear (actors/rival_rms.hpp).
    bo.subscribe.topics.emplace_back(messages::topics::rm_ha);
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
    // And a batch is held up to 20 ms: an idle cluster's heartbeats then wake those threads some 50 times a
    // second instead of at every 2 ms drain. A node's liveness is counted in heartbeat intervals (seconds).
    bo.subscribe.batch_hold = std::chrono::milliseconds(20);
  }
  // The embedded forwarder sheds repeated heartbeats (fo.shed above): the holes that leaves in an agent's seq
  // are not lost messages (a lost heartbeat shows as a missed one, per node: rmbus_heartbeats_missed_total).
  if (m.fwd) bo.subscribe.shed_topic = std::string{messages::topics::heartbeat};
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
  if (ha || m.opt.run.publisher) fixed.push_back(spawn_rival_watch(*m.sys, env));
  if (m.opt.run.admin) {
    m.admin = spawn_admin(*m.sys, env, m.opt.reload);
    fixed.push_back(m.admin);
  }
  m.control = spawn_control(*m.sys, env, m.opt.run, m.opt.reload, fixed, accounting, diff, publication,
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
    m.rep_thread = std::thread([&m] {
      bus::name_this_thread("rmbus-admin");
      m.serve_admin();
    });
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
    // The marker is handled (told through `handled`) also when no other process subscribes to it: an RM
    // alone on its bus never encodes it, and waiting for its encoding held every such stop for 3 s.
    auto flushed = std::make_shared<std::promise<void>>();
    auto done = flushed->get_future();
    auto once = std::make_shared<std::atomic<bool>>(false);
    const auto body = messages::encode(messages::envelope{1, 1, static_cast<std::uint64_t>(wall_clock_ms()), m.instance + ":flush"});
    caf::anon_send(m.router, bus::outbound_message{std::string{topics::flush},
                                                   [body](const messages::envelope&) { return body; },
                                                   [flushed, once] {
                                                     if (!once->exchange(true)) flushed->set_value();
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
