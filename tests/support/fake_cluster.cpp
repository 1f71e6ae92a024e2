#include "tests/support/fake_cluster.hpp"

#include <algorithm>
#include <atomic>
#include <utility>
#include <set>
#include <sstream>

#include <zmq.hpp>

#include "bus/publisher.hpp"
#include "bus/subscriber.hpp"
#include "messages/epoch_fence.hpp"
#include "messages/heartbeat.hpp"
#include "messages/schedule_follower.hpp"
#include "messages/topics.hpp"

namespace rmbus::test_support {

struct fake_cluster::impl {
  cluster_options opt;
  zmq::context_t ctx;
  mutable std::mutex mu;
  std::condition_variable cv;
  struct node {
    std::uint64_t memory_mb = 0;
    bool alive = true;
    bool quiesced = false;
  };
  std::map<std::string, node> nodes;
  std::map<std::string, messages::work_item> work;  // the orchestrator's map
  std::optional<messages::rm_state> state;
  std::optional<messages::rm_nodes> node_report;
  std::vector<messages::rm_event> evs;
  std::vector<messages::rm_cycle> cycle_reports;
  std::uint64_t states = 0;
  std::uint64_t node_reports = 0;
  messages::epoch_fence fence;
  std::vector<acted_state> acted;
  std::optional<messages::envelope> last_env;
  // Every (src, seq) of rm.state handed to the handler, to count one handed on twice (bounded: tests run
  // thousands of rounds at most).
  std::set<std::pair<std::string, std::uint64_t>> state_envelopes;
  std::uint64_t states_repeated = 0;
  std::atomic<std::uint64_t> heartbeats_sent{0};
  std::int64_t clock_ms = 1'000'000;  // submission times: deterministic and increasing
  // At most one is set (the last setter clears the other); only the acted observer needs the process list.
  std::function<void(const messages::rm_state&)> state_observer;
  std::function<void(const acted_view&)> acted_observer;
  // Each work map's envelope seq -> the epoch it echoed (0: none), the newest 10,000.
  std::map<std::uint64_t, std::uint64_t> map_echoes;
  bool holding = false;
  std::vector<std::pair<std::string, messages::work_process>> held;  // (job, process) not started yet
  std::atomic<bool> maps_paused{false};
  // Delta mode: the map as published last and its seq, and what the next period must do.
  std::map<std::string, messages::work_item> published;
  std::uint64_t published_seq = 0;
  bool full_next = true;
  bool lose_next = false;
  int since_full = 0;
  map_counts counts;
  std::vector<std::function<std::string(const messages::envelope&, std::uint64_t)>> injected;
  messages::schedule_follower follower;  // schedule_changes
  std::uint64_t changes_waiting = 0, changes_applied = 0;
  over_order_count over_order;
  new_on_down_count new_on_down;
  std::set<std::string> down_nodes;  // as the last rm.nodes reported them
  bool map_now = false;  // publish the next map at once (a new epoch accepted)

  // An rm.state, or the schedule followed from rm.state changes, whose envelope passed the fence: acted on
  // (called with mu held).
  void act(messages::rm_state s, const messages::envelope& env) {
    if (acted.size() < 100000) acted.push_back({env.epoch.value_or(0), env.src, s.cycle});
    last_env = env;
    for (const auto& j : s.jobs)
      for (const auto& sh : j.shares)
        if (sh.status == messages::share_status::new_ && down_nodes.count(sh.node) > 0 &&
            new_on_down.shares++ == 0)
          new_on_down.first = "cycle " + std::to_string(s.cycle) + ": new share " + sh.id + " of " + j.id + " on " +
                              sh.node + ", reported down";
    follow(s);
    check_orders();
    if (state_observer) state_observer(s);
    if (acted_observer) {
      std::optional<std::uint64_t> echo;
      if (s.workmap_seq)
        if (auto it = map_echoes.find(*s.workmap_seq); it != map_echoes.end()) echo = it->second;
      const auto processes = process_ids();
      acted_observer({s, env, processes, echo});
    }
    state = std::move(s);
    ++states;
  }
  // The share ids of every process the orchestrator runs or is starting (called with mu held).
  std::set<std::string> process_ids() const {
    std::set<std::string> ids;
    for (const auto& [id, w] : work)
      for (const auto& p : w.processes)
        if (p.state != messages::process_state::ended) ids.insert(p.id);
    for (const auto& [job, p] : held) ids.insert(p.id);
    return ids;
  }
  // The orchestrator's view after acting: quanta its processes hold per node against the node's order.
  void check_orders() {
    if (opt.quantum_mb == 0) return;
    const auto q = opt.quantum_mb;
    std::map<std::string, std::uint64_t> held_on;
    std::map<std::string, std::string> who;
    auto count = [&](const messages::work_item& w, const messages::work_process& p) {
      if (p.state == messages::process_state::ended) return;
      held_on[p.node] += (w.memory_mb + q - 1) / q;
      who[p.node] += (who[p.node].empty() ? "" : ", ") + p.id;
    };
    for (const auto& [id, w] : work)
      for (const auto& p : w.processes) count(w, p);
    for (const auto& [job, p] : held)
      if (auto it = work.find(job); it != work.end()) count(it->second, p);
    for (const auto& [node, used] : held_on) {
      auto n = nodes.find(node);
      if (n == nodes.end() || used <= n->second.memory_mb / q) continue;
      if (over_order.sightings++ == 0)
        over_order.first = "node " + node + " holds " + std::to_string(used) + " quanta of " +
                           std::to_string(n->second.memory_mb / q) + ": " + who[node];
    }
  }
  std::unique_ptr<bus::subscriber> sub;
  std::thread driver;
  std::atomic<bool> running{false};

  // The orchestrator carries out a schedule (called with mu held).
  void follow(const messages::rm_state& s) {
    for (const auto& j : s.jobs) {
      auto it = work.find(j.id);
      if (it == work.end()) continue;
      auto& w = it->second;
      for (const auto& sh : j.shares) {
        auto p = std::find_if(w.processes.begin(), w.processes.end(), [&](const auto& x) { return x.id == sh.id; });
        if (holding) {
          auto q = std::find_if(held.begin(), held.end(), [&](const auto& x) { return x.second.id == sh.id; });
          if (sh.status == messages::share_status::new_ && p == w.processes.end() && q == held.end()) {
            messages::work_process proc;
            proc.id = sh.id;
            proc.node = sh.node;
            proc.state = messages::process_state::running;
            proc.init_ms = 1000;
            proc.run_ms = 100;
            held.emplace_back(j.id, std::move(proc));
            continue;
          }
          if ((sh.status == messages::share_status::preempt || sh.status == messages::share_status::evict) && q != held.end())
            held.erase(q);
          if (q != held.end()) continue;  // still being launched
        }
        if (sh.status == messages::share_status::new_ && p == w.processes.end()) {
          messages::work_process proc;
          proc.id = sh.id;
          proc.node = sh.node;
          proc.state = messages::process_state::running;
          proc.init_ms = 1000;
          proc.run_ms = 100;
          auto n = nodes.find(sh.node);
          if (n != nodes.end() && !opt.omit_node_memory) proc.node_memory_mb = n->second.memory_mb;
          w.processes.push_back(std::move(proc));
        } else if ((sh.status == messages::share_status::preempt || sh.status == messages::share_status::evict) &&
                   p != w.processes.end()) {
          w.processes.erase(p);
        }
      }
      if (!w.processes.empty() && w.state == messages::work_state::waiting) w.state = messages::work_state::running;
    }
  }

  void run() {
    bus::publisher_options po;
    po.name = opt.name;
    po.endpoint = opt.bus_pub;
    po.curve = opt.curve;
    bus::publisher pub{ctx, po};
    auto next = std::chrono::steady_clock::now();
    while (running.load()) {
      std::vector<messages::heartbeat> beats;
      messages::workmap wm;
      std::optional<messages::workmap_delta> delta;
      bool lose = false;
      std::vector<std::function<std::string(const messages::envelope&, std::uint64_t)>> inject;
      std::uint64_t base = 0;
      {
        std::lock_guard<std::mutex> lock(mu);
        for (const auto& [name, n] : nodes) {
          if (!n.alive) continue;
          messages::heartbeat hb;
          hb.node = name;
          hb.ip = "127.0.0.1";
          hb.memory_mb = n.memory_mb;
          if (n.quiesced) hb.quiesced = true;
          beats.push_back(hb);
        }
        inject.swap(injected);
        base = published_seq;
        if (opt.deltas && !full_next && since_full + 1 < opt.full_map_every && !maps_paused.load()) {
          delta = messages::make_workmap_delta(published_seq, published, work);
          delta->rm_epoch = fence.echo();
          delta->rm_cycle = fence.echo_cycle();
          lose = std::exchange(lose_next, false);
          ++since_full;
        } else {
          for (const auto& [id, w] : work) wm.work.push_back(w);
          wm.rm_epoch = fence.echo();  // absent while no epoch was ever seen (HA off)
          wm.rm_cycle = fence.echo_cycle();
          if (!maps_paused.load()) {
            full_next = false;
            since_full = 0;
          }
        }
        if (opt.deltas && !maps_paused.load()) published = work;
      }
      for (const auto& hb : beats) pub.publish(messages::topics::heartbeat, hb);
      heartbeats_sent += beats.size();
      for (const auto& enc : inject) {
        const auto env = pub.publish_with(messages::topics::workmap, [&](const messages::envelope& e) { return enc(e, base); });
        std::lock_guard<std::mutex> lock(mu);
        ++counts.injected;
        published_seq = base = env.seq;
      }
      if (delta && !inject.empty()) delta->base_seq = base;  // builds on the injected body, the last one sent
      if (!maps_paused.load()) {
        std::uint64_t seq = 0;
        if (!delta) {
          seq = pub.publish(messages::topics::workmap, wm).seq;
        } else if (lose) {
          seq = base + 1;  // as if sent: the next delta names it, and the RM never had it
        } else {
          seq = pub.publish(messages::topics::workmap, *delta).seq;
        }
        std::lock_guard<std::mutex> lock(mu);
        published_seq = seq;
        map_echoes[seq] = (delta ? delta->rm_epoch : wm.rm_epoch).value_or(0);
        if (map_echoes.size() > 10000) map_echoes.erase(map_echoes.begin());
        ++(delta ? (lose ? counts.lost : counts.deltas) : counts.full);
        if (!delta) counts.last_full_seq = seq;
      }
      next += opt.period;
      std::unique_lock<std::mutex> lock(mu);
      cv.wait_until(lock, next, [&] { return !running.load() || map_now; });
      if (map_now) next = std::chrono::steady_clock::now();  // the period restarts from the prompt map
      map_now = false;
    }
  }
};

fake_cluster::fake_cluster(cluster_options options) : impl_(std::make_unique<impl>()) { impl_->opt = std::move(options); }

fake_cluster::~fake_cluster() { stop(); }

void fake_cluster::start() {
  auto& m = *impl_;
  bus::subscriber_options so;
  so.name = m.opt.name;
  so.endpoint = m.opt.bus_sub;
  so.curve = m.opt.curve;
  so.topics = {std::string{m.opt.schedule_changes ? messages::topics::rm_schedule_changes : messages::topics::rm_state},
               std::string{messages::topics::rm_nodes}, std::string{messages::topics::rm_events},
               std::string{messages::topics::rm_cycle}};
  bus::subscriber_handlers h;
  h.on_message = [&m](bus::bus_message&& msg) {
    std::lock_guard<std::mutex> lock(m.mu);
    if (msg.topic == messages::topics::rm_state) {
      if (!m.state_envelopes.emplace(msg.env.src, msg.env.seq).second) ++m.states_repeated;
      messages::envelope env;
      auto s = messages::decode_rm_state(msg.topic, msg.body, {}, &env);
      if (!s) return;
      // The fence: a schedule below the highest epoch accepted is from a deposed RM; never act on it.
      const auto before = m.fence.echo();
      if (!m.fence.accept(env.epoch, s.value().cycle)) {
        m.cv.notify_all();
        return;
      }
      if (m.opt.map_on_new_epoch && m.fence.echo() != before) m.map_now = true;
      m.act(std::move(s.value()), env);
    } else if (msg.topic == messages::topics::rm_schedule_changes && m.opt.schedule_changes) {
      if (!m.state_envelopes.emplace(msg.env.src, msg.env.seq).second) ++m.states_repeated;
      messages::envelope env;
      auto c = messages::decode_rm_schedule_changes(msg.topic, msg.body, {}, &env);
      if (!c) return;
      const auto taken = m.follower.take(c.value(), env.epoch);
      if (taken == messages::schedule_follower::outcome::fenced) {
        (void)m.fence.accept(env.epoch, c.value().cycle);  // refused there too: counted
        m.cv.notify_all();
        return;
      }
      if (taken != messages::schedule_follower::outcome::applied) {
        ++m.changes_waiting;
        m.cv.notify_all();
        return;
      }
      m.fence.accept(env.epoch, c.value().cycle);  // acted on: its cycle is the one to echo
      ++m.changes_applied;
      m.act(m.follower.schedule(), env);
    } else if (msg.topic == messages::topics::rm_nodes) {
      auto n = messages::decode_rm_nodes(msg.topic, msg.body);
      if (!n) return;
      m.down_nodes.clear();
      for (const auto& r : n.value().nodes)
        if (r.state == messages::node_state::down) m.down_nodes.insert(r.node);
      m.node_report = std::move(n.value());
      ++m.node_reports;
    } else if (msg.topic == messages::topics::rm_cycle) {
      auto c = messages::decode_rm_cycle(msg.topic, msg.body);
      if (c && m.cycle_reports.size() < 100000) m.cycle_reports.push_back(std::move(c.value()));
    } else if (msg.topic == messages::topics::rm_events) {
      auto e = messages::decode_rm_event(msg.topic, msg.body);
      if (e && (e.value().kind == "workmap_resync" || e.value().kind == "workmap_delta_refused")) {
        auto src = e.value().detail.find("src");
        // The RM asks for a full map: send one next period rather than wait for the periodic one.
        if (src != e.value().detail.end() && src->second == m.opt.name && !m.full_next) {
          m.full_next = true;
          ++m.counts.resyncs;
        }
      }
      if (e && m.evs.size() < 100000) m.evs.push_back(std::move(e.value()));
    }
    m.cv.notify_all();
  };
  m.sub = std::make_unique<bus::subscriber>(m.ctx, so, h);
  m.sub->start();
  m.running = true;
  m.driver = std::thread([&m] { m.run(); });
}

fake_cluster::new_on_down_count fake_cluster::new_on_down() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->new_on_down;
}

fake_cluster::over_order_count fake_cluster::over_order() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->over_order;
}

void fake_cluster::hold_starts() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->holding = true;
}

void fake_cluster::release_starts() {
  auto& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  m.holding = false;
  for (auto& [job, proc] : m.held) {
    auto it = m.work.find(job);
    if (it == m.work.end()) continue;
    auto& w = it->second;
    if (std::none_of(w.processes.begin(), w.processes.end(), [&](const auto& x) { return x.id == proc.id; })) {
      if (auto n = m.nodes.find(proc.node); n != m.nodes.end() && !m.opt.omit_node_memory) proc.node_memory_mb = n->second.memory_mb;
      w.processes.push_back(std::move(proc));
      if (w.state == messages::work_state::waiting) w.state = messages::work_state::running;
    }
  }
  m.held.clear();
}

std::size_t fake_cluster::starts_held() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->held.size();
}

void fake_cluster::pause_maps(bool paused) { impl_->maps_paused = paused; }

std::uint64_t fake_cluster::schedule_changes_waiting() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->changes_waiting;
}

std::uint64_t fake_cluster::schedule_changes_applied() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->changes_applied;
}

void fake_cluster::lose_next_delta() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->lose_next = true;
}

void fake_cluster::inject_workmap(std::function<std::string(const messages::envelope&, std::uint64_t)> encode) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->injected.push_back(std::move(encode));
}

void fake_cluster::send_full_map_next() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->full_next = true;
}

fake_cluster::map_counts fake_cluster::maps_sent() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->counts;
}

void fake_cluster::stop() {
  auto& m = *impl_;
  if (!m.running.exchange(false)) return;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    m.cv.notify_all();
  }
  if (m.driver.joinable()) m.driver.join();
  if (m.sub) m.sub->stop();  // not under mu: the subscriber's handler takes it
  std::lock_guard<std::mutex> lock(m.mu);  // bus_stats() reads sub under mu
  m.sub.reset();
}

void fake_cluster::add_node(const std::string& name, std::uint64_t memory_mb) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->nodes[name] = {memory_mb, true, false};
}

void fake_cluster::set_alive(const std::string& name, bool alive) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->nodes[name].alive = alive;
}

void fake_cluster::set_quiesced(const std::string& name, bool quiesced) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->nodes[name].quiesced = quiesced;
}

void fake_cluster::submit(const job_spec& job) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  messages::work_item w;
  w.id = job.id;
  w.kind = job.kind;
  w.user = job.user;
  w.class_name = job.class_name;
  w.memory_mb = job.memory_mb;
  w.submitted_ms = static_cast<std::uint64_t>(impl_->clock_ms += 1000);
  w.state = messages::work_state::waiting;
  w.max_processes = job.max_processes;
  w.threads = 1;
  w.items_total = job.items_total;
  impl_->work[job.id] = std::move(w);
}

void fake_cluster::complete(const std::string& job_id) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->work.erase(job_id);
}

void fake_cluster::set_progress(const std::string& job_id, std::uint64_t items_done, std::uint64_t item_ms) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->work.find(job_id);
  if (it == impl_->work.end()) return;
  it->second.items_done = items_done;
  it->second.item_ms = item_ms;
}

void fake_cluster::adopt_process(const std::string& job_id, const std::string& share_id, const std::string& node) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->work.find(job_id);
  if (it == impl_->work.end()) return;
  messages::work_process p;
  p.id = share_id;
  p.node = node;
  p.state = messages::process_state::running;
  p.init_ms = 1000;
  auto n = impl_->nodes.find(node);
  if (n != impl_->nodes.end() && !impl_->opt.omit_node_memory) p.node_memory_mb = n->second.memory_mb;
  it->second.processes.push_back(std::move(p));
  it->second.state = messages::work_state::running;
}

messages::workmap fake_cluster::workmap() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  messages::workmap wm;
  for (const auto& [id, w] : impl_->work) wm.work.push_back(w);
  wm.rm_epoch = impl_->fence.echo();
  wm.rm_cycle = impl_->fence.echo_cycle();
  return wm;
}

std::optional<messages::rm_state> fake_cluster::last_state() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->state;
}

std::optional<messages::rm_nodes> fake_cluster::last_nodes() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->node_report;
}

std::vector<messages::rm_event> fake_cluster::events() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->evs;
}

std::vector<messages::rm_cycle> fake_cluster::cycles() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->cycle_reports;
}

std::uint64_t fake_cluster::heartbeats_sent() const { return impl_->heartbeats_sent.load(); }

std::uint64_t fake_cluster::states_repeated() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->states_repeated;
}

bus::subscriber_stats fake_cluster::bus_stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);  // sub is set and reset under start/stop only
  return impl_->sub ? impl_->sub->stats() : bus::subscriber_stats{};
}

std::uint64_t fake_cluster::states_seen() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->states;
}

std::optional<std::uint64_t> fake_cluster::accepted_epoch() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->fence.echo();
}

std::uint64_t fake_cluster::states_refused() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->fence.refused();
}

std::vector<fake_cluster::acted_state> fake_cluster::acted() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->acted;
}

std::optional<messages::envelope> fake_cluster::last_state_envelope() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->last_env;
}

bool fake_cluster::wait_state(const std::function<bool(const messages::rm_state&)>& pred,
                              std::chrono::milliseconds timeout) {
  auto& m = *impl_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock<std::mutex> lock(m.mu);
  std::uint64_t seen = m.states;
  for (;;) {
    if (!m.cv.wait_until(lock, deadline, [&] { return m.states != seen; })) return false;
    seen = m.states;
    if (m.state && pred(*m.state)) return true;
  }
}

bool fake_cluster::wait_nodes(const std::function<bool(const messages::rm_nodes&)>& pred,
                              std::chrono::milliseconds timeout) {
  auto& m = *impl_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock<std::mutex> lock(m.mu);
  std::uint64_t seen = m.node_reports;
  for (;;) {
    if (!m.cv.wait_until(lock, deadline, [&] { return m.node_reports != seen; })) return false;
    seen = m.node_reports;
    if (m.node_report && pred(*m.node_report)) return true;
  }
}

void fake_cluster::set_state_observer(std::function<void(const messages::rm_state&)> observer) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->acted_observer = nullptr;
  impl_->state_observer = std::move(observer);
}

void fake_cluster::set_acted_observer(std::function<void(const acted_view&)> observer) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->state_observer = nullptr;
  impl_->acted_observer = std::move(observer);
}

std::optional<messages::rm_event> fake_cluster::wait_event(const std::function<bool(const messages::rm_event&)>& pred,
                                                          std::chrono::milliseconds timeout) {
  auto& m = *impl_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock<std::mutex> lock(m.mu);
  std::size_t checked = 0;
  for (;;) {
    for (; checked < m.evs.size(); ++checked)
      if (pred(m.evs[checked])) return m.evs[checked];
    if (!m.cv.wait_until(lock, deadline, [&] { return m.evs.size() != checked; })) return std::nullopt;
  }
}

// ---- helpers -------------------------------------------------------------------------------------

const messages::job_schedule* find_job(const messages::rm_state& s, const std::string& id) {
  for (const auto& j : s.jobs)
    if (j.id == id) return &j;
  return nullptr;
}

namespace {
bool active(const messages::share_schedule& sh) {
  return sh.status == messages::share_status::running || sh.status == messages::share_status::new_;
}
}  // namespace

std::size_t active_shares(const messages::rm_state& s, const std::string& id) {
  const auto* j = find_job(s, id);
  if (j == nullptr) return 0;
  return static_cast<std::size_t>(std::count_if(j->shares.begin(), j->shares.end(), active));
}

std::size_t reclaiming_shares(const messages::rm_state& s, const std::string& id) {
  const auto* j = find_job(s, id);
  if (j == nullptr) return 0;
  return static_cast<std::size_t>(std::count_if(j->shares.begin(), j->shares.end(), [](const messages::share_schedule& sh) {
    return sh.status == messages::share_status::running && sh.reclaim_at_ms.has_value();
  }));
}

std::vector<std::string> nodes_of(const messages::rm_state& s, const std::string& id) {
  std::set<std::string> out;
  if (const auto* j = find_job(s, id))
    for (const auto& sh : j->shares)
      if (active(sh)) out.insert(sh.node);
  return {out.begin(), out.end()};
}

std::vector<std::string> double_bookings(const messages::rm_state& s,
                                         const std::map<std::string, std::uint64_t>& node_quanta) {
  std::vector<std::string> problems;
  std::set<std::string> ids;
  std::map<std::string, std::uint64_t> used;
  std::map<std::string, std::string> held;  // node -> its shares, for the message
  for (const auto& j : s.jobs) {
    for (const auto& sh : j.shares) {
      if (!ids.insert(sh.id).second) problems.push_back("share " + sh.id + " listed twice");
      used[sh.node] += sh.quanta;
      auto& list = held[sh.node];
      list += (list.empty() ? "" : ", ") + sh.id + " " + std::to_string(sh.quanta) + " " +
              std::string{messages::to_string(sh.status)};
    }
  }
  for (const auto& [node, q] : used) {
    auto it = node_quanta.find(node);
    if (it != node_quanta.end() && q > it->second)
      problems.push_back("node " + node + " holds " + std::to_string(q) + " quanta of " + std::to_string(it->second) +
                         " (" + held[node] + ")");
  }
  return problems;
}

std::string summary(const messages::rm_state& s) {
  std::ostringstream o;
  o << "cycle " << s.cycle << ": " << s.jobs.size() << " jobs\n";
  for (const auto& j : s.jobs) {
    std::map<std::string, int> per_node;
    int preempting = 0;
    for (const auto& sh : j.shares) {
      if (active(sh)) ++per_node[sh.node];
      else ++preempting;
    }
    o << "  " << j.id << " " << messages::to_string(j.status) << " " << active_shares(s, j.id) << " x "
      << j.memory_mb << " MB";
    if (!per_node.empty()) {
      o << " on";
      for (const auto& [n, c] : per_node) o << " " << n << (c > 1 ? "x" + std::to_string(c) : "");
    }
    if (preempting > 0) o << " (" << preempting << " being preempted/evicted)";
    if (!j.reason.empty()) o << " [" << j.reason << "]";
    o << "\n";
  }
  return o.str();
}

}  // namespace rmbus::test_support
