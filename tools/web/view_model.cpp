#include "tools/web/view_model.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <string_view>
#include <type_traits>
#include <unordered_map>

#include "messages/topics.hpp"
#include "messages/value.hpp"
#include "tools/web/json_writer.hpp"

namespace rmbus::web {

namespace {

using messages::job_status;
using messages::node_state;
using messages::share_status;

// One letter per share status in the snapshot: the Machines view draws thousands of them.
char status_letter(share_status s) {
  switch (s) {
    case share_status::running:
      return 'r';
    case share_status::new_:
      return 'n';
    case share_status::preempt:
      return 'p';
    case share_status::evict:
      return 'e';
  }
  return '?';
}

using top::add_capped;

void add_job(overview_row& r, const top::job_row& j) {
  top::user_summary one;
  one.jobs = 1;
  one.active = j.active;
  one.given = j.given;
  one.demand = j.demand;
  one.fair_share = j.fair_share;
  // A job capped by design (rm.state capped_by) wants what it was given: not below its share (issue 17).
  one.wanted = j.capped_by.empty() ? j.demand : std::min(j.demand, j.given);
  one.capped_jobs = j.capped_by.empty() ? 0 : 1;
  top::add_sums(r.sums, one, false);
  // Why it is below: the first job (in list order: pending first) that waits or is itself short.
  const bool short_of_share = j.given < std::min(j.demand, j.fair_share);
  if (r.reason.empty() && !j.reason.empty() && (j.status != job_status::scheduled || short_of_share))
    r.reason = j.reason;
}

void add_row(overview_row& total, const overview_row& r) {
  top::add_sums(total.sums, r.sums);
  if (total.reason.empty()) total.reason = r.reason;
}

void write_row(json_writer& w, const overview_row& r) {
  const auto& s = r.sums;
  const bool below = s.below_fair_share();
  w.member("name", r.name)
      .member("jobs", s.jobs)
      .member("active", s.active)
      .member("given", s.given)
      .member("demand", s.demand)
      .member("fair_share", s.fair_share)
      .member("below", below)
      .member("reason", below ? r.reason : std::string{});
}

}  // namespace

std::vector<std::string> web_topics(bool schedule_changes) {
  auto topics = top::monitored_topics(schedule_changes);
  topics.emplace_back(ha_topic);
  return topics;
}

web_message decode_web(std::string_view topic, std::string_view body, const messages::decode_limits& limits) {
  if (topic != ha_topic) return top::decode_monitored(topic, body, limits);
  auto v = messages::decode_value(topic, body, limits);
  if (!v) return top::monitored_message{v.error()};
  auto b = read_ha_beacon(v.value());
  if (!b) return top::monitored_message{b.error()};
  return std::move(b).value();
}

view_model::view_model(web_limits limits) : limits_(limits), monitor_(limits.monitor) {
  limits_.max_rounds_per_pool = std::max<std::size_t>(1, limits_.max_rounds_per_pool);
}

void view_model::fold(web_message message, millis now_ms, const std::string& src,
                      std::optional<std::uint64_t> sent_at_ms) {
  ++version_;
  if (auto* ha = std::get_if<ha_beacon>(&message)) {
    ha_ = std::move(*ha);
    ha_src_ = src.substr(0, 256);
    ha_at_ms_ = now_ms;
    return;
  }
  auto& m = std::get<top::monitored_message>(message);
  if (std::holds_alternative<messages::rm_event>(m) || std::holds_alternative<messages::decode_error>(m))
    ++events_total_;
  if (const auto* c = std::get_if<messages::rm_cycle>(&m)) {
    if (!first_cycle_at_ms_) first_cycle_at_ms_ = now_ms;
    // Pools beyond the monitor's bound are not remembered here either.
    if (rounds_.count(c->pool) || rounds_.size() < limits_.monitor.max_pools) {
      auto& q = rounds_[c->pool];
      q.push_back({now_ms, c->preempted, c->evicted});
      while (q.size() > limits_.max_rounds_per_pool) q.pop_front();
      while (!q.empty() && q.front().at_ms < now_ms - limits_.rate_window_ms) q.pop_front();
    }
  }
  top::fold(monitor_, std::move(m), now_ms, src, sent_at_ms);
}

void view_model::on_rejected(const std::string& what, millis now_ms) {
  ++version_;
  ++events_total_;
  monitor_.on_bad_message(what, now_ms, true);
}

void view_model::set_bus(top::bus_health health) { monitor_.set_bus(std::move(health)); }

pool_rates view_model::rates(const std::string& pool, millis now_ms) const {
  pool_rates r;
  if (first_cycle_at_ms_) r.span_ms = std::clamp<millis>(now_ms - *first_cycle_at_ms_, 0, limits_.rate_window_ms);
  const auto it = rounds_.find(pool);
  if (it == rounds_.end()) return r;
  for (const auto& c : it->second) {
    if (c.at_ms < now_ms - limits_.rate_window_ms) continue;
    r.preempted = add_capped(r.preempted, c.preempted);
    r.evicted = add_capped(r.evicted, c.evicted);
  }
  return r;
}

std::vector<std::string> view_model::job_pools(const std::vector<top::job_row>& jobs) const {
  std::vector<std::string> out(jobs.size());
  const auto& state = monitor_.state();
  const auto& nodes = monitor_.nodes();
  if (!state || !nodes) return out;
  std::unordered_map<std::string_view, const std::string*> pool_of_node;
  pool_of_node.reserve(nodes->nodes.size());
  for (const auto& n : nodes->nodes) pool_of_node.emplace(n.node, &n.pool);
  std::unordered_map<std::string_view, const messages::job_schedule*> by_id;
  by_id.reserve(state->jobs.size());
  for (const auto& j : state->jobs) by_id.emplace(j.id, &j);
  // A job's pool is its first share's node's pool; a class lives in one top-level pool, so a job holding
  // nothing takes the pool its class's placed jobs show.
  std::map<std::string, std::string> pool_of_class;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto j = by_id.find(jobs[i].id);
    if (j == by_id.end()) continue;
    for (const auto& s : j->second->shares) {
      const auto p = pool_of_node.find(s.node);
      if (p == pool_of_node.end()) continue;
      out[i] = *p->second;
      pool_of_class.emplace(jobs[i].class_name, out[i]);
      break;
    }
  }
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (!out[i].empty()) continue;
    const auto c = pool_of_class.find(jobs[i].class_name);
    if (c != pool_of_class.end()) out[i] = c->second;
  }
  return out;
}

std::vector<overview_pool> view_model::overview(const std::vector<top::job_row>& jobs,
                                                const std::vector<std::string>& pools, millis now_ms) const {
  // pool -> class -> user
  std::map<std::string, std::map<std::string, std::map<std::string, overview_user>>> tree;
  for (const auto& p : monitor_.pools()) tree[p.pool];
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    auto& u = tree[pools[i]][jobs[i].class_name][jobs[i].user];
    u.row.name = jobs[i].user;
    add_job(u.row, jobs[i]);
    u.jobs.push_back(i);
  }
  std::map<std::string, top::pool_summary> summaries;
  for (auto& p : monitor_.pools()) summaries[p.pool] = std::move(p);
  std::vector<overview_pool> out;
  out.reserve(tree.size());
  for (auto& [pool, classes] : tree) {
    overview_pool p;
    p.pool = pool;
    if (const auto s = summaries.find(pool); s != summaries.end()) p.nodes = s->second;
    p.nodes.pool = pool;
    p.rates = rates(pool, now_ms);
    for (auto& [cls, users] : classes) {
      overview_class c;
      c.row.name = cls;
      for (auto& [name, u] : users) {
        add_row(c.row, u.row);
        c.users.push_back(std::move(u));
      }
      p.classes.push_back(std::move(c));
    }
    out.push_back(std::move(p));
  }
  return out;
}

namespace {

void write_health(json_writer& w, const view_model& vm, const snapshot_context& ctx) {
  const auto& m = vm.monitor();
  w.begin_object();
  w.member("now_ms", ctx.wall_ms);
  const auto& state = m.state();
  if (state) {
    w.member("cycle", state->cycle).member("src", m.state_src());
    w.member("state_age_ms", std::max<millis>(0, ctx.now_ms - m.state_at_ms()));
    w.member("jobs", static_cast<std::uint64_t>(state->jobs.size()));
  } else {
    w.key("cycle").null().key("state_age_ms").null();
  }
  if (const auto i = m.round_interval())
    w.member("round_interval_ms", *i);
  else
    w.key("round_interval_ms").null();
  w.member("stale", m.stale(ctx.now_ms));
  // Why the RM runs no rounds, while it says so (rm.events not_scheduling, aged to now); null while it
  // schedules.
  w.key("not_scheduling");
  if (const auto why = m.not_scheduling(ctx.now_ms)) {
    w.begin_object();
    w.member("reason", why->reason).member("for_ms", why->for_ms).member("text", messages::describe(*why));
    w.end_object();
  } else {
    w.null();
  }
  if (m.nodes()) w.member("nodes", static_cast<std::uint64_t>(m.nodes()->nodes.size()));
  w.member("reclaiming", m.reclaiming());
  w.member("endpoint", ctx.endpoint).member("admin", ctx.admin);
  if (ctx.last_build_ms >= 0) w.member("last_build_ms", ctx.last_build_ms).member("last_bytes", ctx.last_bytes);
  w.key("ha");
  if (const auto& ha = vm.ha()) {
    w.begin_object();
    if (ha->epoch) w.member("epoch", *ha->epoch);
    if (ha->rank) w.member("rank", *ha->rank);
    w.member("instance", ha->instance).member("state", ha->state);
    w.end_object();
  } else {
    w.null();
  }
  const auto bus = m.bus();
  w.key("bus").begin_object();
  w.member("received", bus.received)
      .member("gaps", bus.gaps)
      .member("missing", bus.missing)
      .member("restarts", bus.restarts)
      .member("bad_messages", bus.bad_messages);
  w.key("by_topic").begin_object();
  for (const auto& [topic, n] : bus.by_topic) w.member(topic, n);
  w.end_object().end_object();
  w.key("cycles").begin_array();
  for (const auto& [pool, pc] : m.cycles()) {
    const auto& c = pc.cycle;
    w.begin_object()
        .member("pool", pool)
        .member("cycle", c.cycle)
        .member("jobs", c.jobs)
        .member("nodes", c.nodes)
        .member("given", c.given)
        .member("preempted", c.preempted)
        .member("evicted", c.evicted)
        .member("how_much_us", c.how_much_us)
        .member("what_of_us", c.what_of_us)
        .member("preempt_us", c.preempt_us)
        .member("defrag_us", c.defrag_us)
        .member("total_us", c.total_us)
        .member("age_ms", std::max<millis>(0, ctx.now_ms - pc.at_ms))
        .member("behind", state && c.cycle < state->cycle)
        .end_object();
  }
  w.end_array();
  w.key("events_by_kind").begin_object();
  for (const auto& [kind, n] : m.events_by_kind()) w.member(kind, n);
  w.end_object();
  w.end_object();
}

}  // namespace

std::string view_model::health_json(const snapshot_context& ctx) const {
  json_writer w(4096);
  w.begin_object().member("type", "health").member("seq", ctx.seq).key("health");
  write_health(w, *this, ctx);
  w.end_object();
  return w.take();
}

std::string view_model::snapshot_json(const snapshot_context& ctx) const {
  const auto rows = jobs();
  const auto pools = job_pools(rows);
  json_writer w(rows.size() * 160 + 65536);
  w.begin_object().member("type", "snapshot").member("seq", ctx.seq).key("health");
  write_health(w, *this, ctx);

  // Jobs as arrays (the keys once, in jobs_columns): a third of the bytes of objects at 20,000 jobs.
  w.key("jobs_columns").begin_array();
  for (const char* c : {"id", "user", "class", "status", "reason", "memory_mb", "active", "leaving", "given",
                        "demand", "fair_share", "pool", "preempted", "evicted", "group", "reclaiming"})
    w.value(c);
  w.end_array();
  std::unordered_map<std::string_view, std::size_t> index_of;
  index_of.reserve(rows.size());
  std::unordered_map<std::string_view, std::string_view> group_of;
  if (const auto& s = monitor_.state())
    for (const auto& j : s->jobs)
      if (!j.group.empty()) group_of.emplace(j.id, j.group);
  w.key("jobs").begin_array();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    index_of.emplace(r.id, i);
    const auto g = group_of.find(r.id);
    w.begin_array()
        .value(r.id)
        .value(r.user)
        .value(r.class_name)
        .value(messages::to_string(r.status))
        .value(r.reason)
        .value(r.memory_mb)
        .value(r.active)
        .value(r.leaving)
        .value(r.given)
        .value(r.demand)
        .value(r.fair_share)
        .value(pools[i])
        .value(r.losses.preempted)
        .value(r.losses.evicted)
        .value(g == group_of.end() ? std::string_view{} : g->second)
        .value(r.reclaiming)
        .end_array();
  }
  w.end_array();

  // Nodes with their shares: [job index, quanta, status letter], by job index.
  std::unordered_map<std::string_view, std::vector<std::tuple<std::size_t, std::uint64_t, char>>> shares_on;
  if (const auto& s = monitor_.state())
    for (const auto& j : s->jobs) {
      const auto idx = index_of.find(j.id);
      if (idx == index_of.end()) continue;
      for (const auto& sh : j.shares) shares_on[sh.node].emplace_back(idx->second, sh.quanta, status_letter(sh.status));
    }
  w.key("nodes_columns").begin_array();
  for (const char* c : {"node", "pool", "nodepool", "state", "memory_mb", "quanta", "free_quanta", "missed", "shares"})
    w.value(c);
  w.end_array();
  w.key("nodes").begin_array();
  if (const auto& n = monitor_.nodes())
    for (const auto& node : n->nodes) {
      w.begin_array()
          .value(node.node)
          .value(node.pool)
          .value(node.nodepool)
          .value(messages::to_string(node.state))
          .value(node.memory_mb)
          .value(node.quanta)
          .value(node.free_quanta)
          .value(node.missed);
      w.begin_array();
      if (auto it = shares_on.find(node.node); it != shares_on.end()) {
        auto& list = it->second;
        // By job; a job's shares in rm.state's order (stable), so the picture does not shuffle between rounds.
        std::stable_sort(list.begin(), list.end(),
                         [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
        for (const auto& [job, quanta, letter] : list)
          w.begin_array().value(static_cast<std::uint64_t>(job)).value(quanta).value(std::string_view{&letter, 1}).end_array();
      }
      w.end_array().end_array();
    }
  w.end_array();

  w.key("pools").begin_array();
  for (const auto& p : overview(rows, pools, ctx.now_ms)) {
    const auto& s = p.nodes;
    w.begin_object().member("pool", p.pool).member("nodes", s.nodes);
    w.member("up", s.count(node_state::up))
        .member("missing", s.count(node_state::missing))
        .member("down", s.count(node_state::down))
        .member("varied_off", s.count(node_state::varied_off))
        .member("quiesced", s.count(node_state::quiesced))
        .member("blacklisted", s.count(node_state::blacklisted))
        .member("quanta", s.quanta)
        .member("free_quanta", s.free_quanta)
        .member("preempted_last_min", p.rates.preempted)
        .member("evicted_last_min", p.rates.evicted)
        .member("rate_span_ms", p.rates.span_ms);
    w.key("classes").begin_array();
    for (const auto& c : p.classes) {
      w.begin_object();
      write_row(w, c.row);
      w.key("users").begin_array();
      for (const auto& u : c.users) {
        w.begin_object();
        write_row(w, u.row);
        w.key("job_indexes").begin_array();
        for (auto j : u.jobs) w.value(static_cast<std::uint64_t>(j));
        w.end_array().end_object();
      }
      w.end_array().end_object();
    }
    w.end_array().end_object();
  }
  w.end_array();

  // Events, newest first, each with its running number so the page appends only new ones.
  w.key("events").begin_array();
  std::uint64_t id = events_total_;
  for (const auto& e : monitor_.events()) {
    w.begin_array().value(id).value(std::max<millis>(0, ctx.now_ms - e.at_ms)).value(e.kind).value(e.text).end_array();
    if (id > 0) --id;
  }
  w.end_array();
  w.end_object();
  return w.take();
}

}  // namespace rmbus::web
