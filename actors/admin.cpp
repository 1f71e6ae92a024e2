// Admin: the commands of the admin endpoint (docs/protocol.md, "admin"), answered by asking the actors that
// know. The REP socket's thread (actors/runtime.cpp) hands each request body here as (admin, body) and waits
// for the reply body; this actor never blocks: it fans a query out on rm.internal.query.<pool> (or
// rm.internal.vary to eviction), gathers the answers on rm.internal.answer, and replies when all have come or
// the deadline passes (then it names the pools that did not answer). A malformed request gets an error reply
// naming what is wrong; nothing hangs.
//
// Every action's outcome is logged (info; warn for a refusal or a partial success) and told in the reply:
// a vary-off asks the pools for the shares on its nodes before and after it, so that it names what it
// evicted, a drain for those after it, which run on; a reconfiguration names what changed. Work refused before
// it reached a pool (rm.internal.round's `refused`) is remembered per round, so that `explain` and `jobs`
// answer for it while it is in the work map. Eviction answers for the nodes (rm.internal.marks): status's
// counts and the nodes the configuration expects that never reported. A fresh scheduler that has not
// scheduled a round yet answers `restarting`: the reply names those pools (`ok: false`) rather than show a
// cluster without its work. The replies are assembled by actors/admin_replies.hpp.
#include "messages/admin.hpp"

#include <spdlog/spdlog.h>

#include <caf/all.hpp>
#include <map>
#include <set>
#include <variant>

#include "actors/admin_deadlines.hpp"
#include "actors/admin_replies.hpp"
#include "actors/admin_values.hpp"
#include "actors/detail/spawn.hpp"
#include "config/config_changes.hpp"
#include "config/config_error.hpp"
#include "core/nodepool_scheduler.hpp"
#include "messages/not_scheduling.hpp"
#include "messages/topics.hpp"
#include "rmbus/version.hpp"

namespace rmbus::actors {

namespace {

struct pending_query {
  caf::response_promise promise;
  std::string cmd;
  std::set<std::string> expected;
  std::map<std::string, value::map> answers;
  // vary_off / vary_on / drain / undrain go in steps: the pools' shares on the nodes (vary_off only), the
  // eviction actor's answer, the pools' shares again (vary_off: what turned `evict` in between is what it
  // evicted; drain: what still runs there).
  enum class step { single, shares_before, vary, shares_after } at = step::single;
  std::string by;
  std::vector<std::string> nodes;
  std::map<std::string, std::string> before;  // share id -> status, on `nodes`, before the vary-off
  value::map vary_answer;
  std::string job;     // explain: the job asked about
  value::map filters;  // jobs, users: user, class, state
};

struct admin_state {
  actor_env env;
  std::function<config::rm_config()> reload;
  envelope_stamper stamper{"admin"};
  std::uint64_t next_qid = 1;
  std::map<std::uint64_t, pending_query> pending;
  std::uint64_t cycle = 0;  // last round started
  std::int64_t round_seen_ms = 0;  // when it started (wall clock as this process saw it); 0: none yet
  // The schedule's safety as status shows it (rm.events this process routed): plans the publication guard
  // refused (should stay 0: the core never plans above an order) and nodes brought back under their order.
  std::uint64_t guard_refusals = 0;
  std::uint64_t over_order_repairs = 0;
  std::map<std::string, messages::refused_work> refused;  // refused before any pool, in the last round
  // Why the RM runs no rounds, as differencing last reported it (rm.events `not_scheduling`), and when it
  // came: status shows it while no round started after it.
  std::optional<messages::not_scheduling> not_scheduling;
  std::int64_t not_scheduling_at_ms = 0;
  std::int64_t started_ms = 0;
  caf::actor ha;  // HA on: the election's actor, which hands over
  static inline const char* name = "rmbus.admin";
};

using admin_actor = caf::stateful_actor<admin_state>;

std::string reply_body(admin_actor* self, bool ok, std::string error, value::map results = {}) {
  messages::admin_reply r;
  r.ok = ok;
  r.error = ok ? std::string{} : std::move(error);
  if (!ok && r.error.empty()) r.error = "failed";
  r.results = std::move(results);
  return messages::encode(self->state.stamper.next(messages::topics::admin), r);
}

std::vector<std::string> top_pools(const config::rm_config& cfg) {
  std::vector<std::string> out;
  for (const auto& p : cfg.scheduling.nodepools)
    if (p.parent.empty()) out.push_back(p.name);
  return out;
}

// The shares on `nodes` in the pools' qoccupancy answers: share id -> (node, job, quanta, status).
struct share_seen {
  std::string node, job, status;
  std::uint64_t quanta = 0;
};
std::map<std::string, share_seen> shares_on(const std::map<std::string, value::map>& answers,
                                            const std::vector<std::string>& nodes) {
  const std::set<std::string> wanted(nodes.begin(), nodes.end());
  std::map<std::string, share_seen> out;
  for (const auto& [pool, a] : answers) {
    const auto* ms = array_of(a, "nodes");
    if (ms == nullptr) continue;
    for (const auto& m : *ms) {
      const auto* mm = m.as_map();
      if (mm == nullptr || !wanted.count(str_of(*mm, "node"))) continue;
      if (const auto* shares = array_of(*mm, "shares"))
        for (const auto& sh : *shares)
          if (const auto* sm = sh.as_map())
            out[str_of(*sm, "share")] = {str_of(*mm, "node"), str_of(*sm, "job"), str_of(*sm, "status"),
                                         uint_of(*sm, "quanta")};
    }
  }
  return out;
}

std::vector<std::string> names_of(const value::map& m, std::string_view key) {
  std::vector<std::string> out;
  if (const auto* a = array_of(m, key))
    for (const auto& n : *a)
      if (const auto* s = n.as_string()) out.push_back(*s);
  return out;
}

std::string joined(const std::vector<std::string>& xs) {
  std::string out;
  for (const auto& x : xs) out += (out.empty() ? "" : ", ") + x;
  return out;
}

void ask(admin_actor* self, pending_query q,
         std::variant<messages::vary_request, messages::admin_query> request);

bool is_vary(const std::string& cmd) {
  return cmd == "vary_off" || cmd == "vary_on" || cmd == "drain" || cmd == "undrain";
}

// What a vary or drain did, in the log's words: "varied off a1", "drained a1", "undrained a1".
std::string done_words(const std::string& cmd) {
  if (cmd == "vary_off") return "varied off ";
  if (cmd == "vary_on") return "varied on ";
  return cmd == "drain" ? "drained " : "undrained ";
}

// The last step of a vary: the reply (the eviction actor's answer, plus `evicted` for a vary-off and `running`
// for a drain) and the log line with the outcome.
void reply_vary(admin_actor* self, pending_query q, std::map<std::string, share_seen> after) {
  auto r = std::move(q.vary_answer);
  const bool off = q.cmd == "vary_off";
  std::map<std::string, int> evicted_by_job;
  if (q.cmd == "drain") {
    // The shares that run on, per drained node: they end as their work does.
    std::map<std::string, std::uint64_t> running;
    for (const auto& n : names_of(r, "nodes")) running[n] = 0;
    for (const auto& [id, s] : after)
      if (s.status != "evict" && s.status != "preempt" && running.count(s.node)) ++running[s.node];
    value::array listed;
    for (const auto& [node, n] : running) {
      value::map m;
      m["node"] = value{node};
      m["shares"] = value{n};
      listed.emplace_back(std::move(m));
    }
    r["running"] = value{std::move(listed)};
  }
  if (off) {
    value::array evicted;
    for (const auto& [id, s] : after) {
      if (s.status != "evict") continue;
      auto b = q.before.find(id);
      if (b != q.before.end() && b->second == "evict") continue;  // evicted before this request
      value::map e;
      e["node"] = value{s.node};
      e["job"] = value{s.job};
      e["share"] = value{id};
      e["quanta"] = value{s.quanta};
      evicted.emplace_back(std::move(e));
      ++evicted_by_job[s.job];
    }
    r["evicted"] = value{std::move(evicted)};
  }
  const auto unknown = names_of(r, "unknown");
  const auto nodes = names_of(r, "nodes");
  const auto already = names_of(r, "already");
  const auto never_seen = names_of(r, "never_seen");
  std::string what = q.cmd + " by " + q.by + ": ";
  what += nodes.empty() ? "no node changed" : done_words(q.cmd) + joined(nodes);
  if (!never_seen.empty()) what += "; not seen yet (the mark applies when they first report): " + joined(never_seen);
  if (!already.empty()) what += " (already so: " + joined(already) + ")";
  if (off) {
    std::vector<std::string> jobs;
    int total = 0;
    for (const auto& [job, n] : evicted_by_job) {
      jobs.push_back(job + " " + std::to_string(n));
      total += n;
    }
    what += "; evicted " + std::to_string(total) + " share(s)" + (jobs.empty() ? "" : ": " + joined(jobs));
  }
  if (unknown.empty()) {
    spdlog::info("{}", what);
  } else {
    spdlog::warn("{}; unknown node(s), nothing done for them: {}", what, joined(unknown));
  }
  q.promise.deliver(reply_body(self, unknown.empty(), "unknown node(s): " + joined(unknown), std::move(r)));
}

void finish_vary(admin_actor* self, pending_query q, bool timed_out, const std::string& missing) {
  using step = pending_query::step;
  auto& st = self->state;
  switch (q.at) {
    case step::shares_before: {
      // A pool that did not answer only leaves its shares out of `evicted`; the vary itself goes ahead.
      if (timed_out)
        spdlog::warn("{} by {}: no answer from pool(s) {} about the shares before", q.cmd, q.by, missing);
      for (const auto& [id, s] : shares_on(q.answers, q.nodes)) q.before[id] = s.status;
      q.at = step::vary;
      q.answers.clear();
      q.expected = {eviction_answer};
      auto nodes = q.nodes;
      ask(self, std::move(q), messages::vary_request{0, true, std::move(nodes)});
      return;
    }
    case step::vary: {
      if (timed_out) {
        spdlog::warn("{} by {} failed: the eviction actor did not answer", q.cmd, q.by);
        q.promise.deliver(reply_body(self, false, "the eviction actor did not answer"));
        return;
      }
      q.vary_answer = std::move(q.answers[eviction_answer]);
      if (q.cmd != "vary_off" && q.cmd != "drain") {
        reply_vary(self, std::move(q), {});
        return;
      }
      q.at = step::shares_after;
      q.answers.clear();
      q.expected.clear();
      for (const auto& p : top_pools(*st.env.cfg)) q.expected.insert(p);
      ask(self, std::move(q), messages::admin_query{0, "qoccupancy", {}});
      return;
    }
    case step::shares_after: {
      if (timed_out)
        spdlog::warn("{} by {}: no answer from pool(s) {} about the shares after", q.cmd, q.by, missing);
      auto after = shares_on(q.answers, q.nodes);
      reply_vary(self, std::move(q), std::move(after));
      return;
    }
    case step::single:
      break;
  }
}

// explain for work refused before it reached any pool (an unknown class): nothing but the reason.
value::map refused_explanation(const messages::refused_work& w) {
  value::map e;
  e["job"] = value{w.id};
  e["known"] = value{true};
  e["refused"] = value{true};
  e["user"] = value{w.user};
  e["class"] = value{""};
  e["reason"] = value{"unknown_class"};
  e["blocked"] = value{w.reason};
  e["text"] =
      value{"job " + w.id + " of user " + w.user + ": refused before reaching any pool: " + w.reason + "\n"};
  value::map r;
  r["pool"] = value{""};
  r["explanation"] = value{std::move(e)};
  return r;
}

void add_ha_status(const ha_gate& gate, value::map& r);

// status's `scheduling`: `scheduling` when a round started since the last report of why none runs, else that
// report aged to now; nothing when neither was heard (a standby, or differencing in another process).
void add_scheduling_status(const admin_state& st, std::int64_t now, value::map& r) {
  if (st.env.ha && !st.env.ha->active()) return;
  value::map s;
  if (st.not_scheduling && st.not_scheduling_at_ms >= st.round_seen_ms) {
    const auto n =
        messages::aged(*st.not_scheduling,
                       static_cast<std::uint64_t>(std::max<std::int64_t>(0, now - st.not_scheduling_at_ms)));
    s["state"] = value{n.reason};
    s["for_ms"] = value{n.for_ms};
    s["limit_ms"] = value{n.limit_ms};
    if (n.reason == messages::not_scheduling_reasons::starting) s["left_ms"] = value{n.left_ms};
    s["text"] = value{messages::describe(n)};
  } else if (st.round_seen_ms > 0) {
    s["state"] = value{std::string{"scheduling"}};
    s["text"] = value{std::string{"scheduling: a round started "} +
                      std::to_string(std::max<std::int64_t>(0, now - st.round_seen_ms)) + " ms ago"};
  } else {
    return;
  }
  r["scheduling"] = value{std::move(s)};
}

// status: this process's own facts, what the pools and eviction counted, and with HA its role and peers. A
// pool that did not answer in time leaves its counts out and is named in `unanswered`; status is still ok.
void finish_status(admin_actor* self, pending_query q, const std::vector<std::string>& silent) {
  auto& st = self->state;
  value::map r;
  r["instance"] = value{st.env.instance};
  r["version"] = value{std::string{rmbus::version}};
  r["cycle"] = value{st.cycle};
  const auto now = wall_clock_ms();
  r["uptime_ms"] = value{static_cast<std::uint64_t>(now - st.started_ms)};
  if (st.round_seen_ms > 0) {
    r["last_round_at_ms"] = value{static_cast<std::uint64_t>(st.round_seen_ms)};
    r["last_round_ms_ago"] = value{static_cast<std::uint64_t>(std::max<std::int64_t>(0, now - st.round_seen_ms))};
  }
  value::array pools;
  for (const auto& p : top_pools(*st.env.cfg)) pools.emplace_back(p);
  r["pools"] = value{std::move(pools)};
  add_status_counts(q.answers, r);
  if (auto* jobs = r["jobs"].as_map(); jobs != nullptr && !st.refused.empty()) {
    // Work refused before it reached any pool is a job of the work map too.
    const auto extra = static_cast<std::uint64_t>(st.refused.size());
    (*jobs)["refused"] = value{uint_of(*jobs, "refused") + extra};
    (*jobs)["total"] = value{uint_of(*jobs, "total") + extra};
  }
  const auto restarting = restarting_pools(q.answers);
  if (!restarting.empty()) {
    value::array names;
    for (const auto& p : restarting) names.emplace_back(p);
    r["restarting"] = value{std::move(names)};
  }
  if (!silent.empty()) {
    value::array names;
    for (const auto& p : silent) names.emplace_back(p);
    r["unanswered"] = value{std::move(names)};
  }
  value::map safety;
  safety["guard_refusals"] = value{st.guard_refusals};
  safety["over_order_repairs"] = value{st.over_order_repairs};
  r["safety"] = value{std::move(safety)};
  add_scheduling_status(st, now, r);
  if (st.env.ha) add_ha_status(*st.env.ha, r);
  q.promise.deliver(reply_body(self, true, {}, std::move(r)));
}

// A fresh scheduler that has not scheduled a round: its pool is named, and nothing it would show is.
void reply_restarting(admin_actor* self, pending_query q, const std::vector<std::string>& restarting) {
  value::array names;
  for (const auto& p : restarting) names.emplace_back(p);
  value::map results;
  results["restarting"] = value{std::move(names)};
  if (q.cmd == "qload" || q.cmd == "qoccupancy") results["pools"] = value{pool_entries(q.answers)};
  q.promise.deliver(reply_body(self, false,
                               "pool restarting: " + joined(restarting) +
                                   ": its scheduler was replaced (a reconfiguration, a failure) and has not "
                                   "scheduled a round with the work map yet; ask again in a moment",
                               std::move(results)));
}

void finish(admin_actor* self, std::uint64_t qid, bool timed_out) {
  auto& st = self->state;
  auto it = st.pending.find(qid);
  if (it == st.pending.end()) return;
  auto q = std::move(it->second);
  st.pending.erase(it);
  std::vector<std::string> silent;
  for (const auto& e : q.expected)
    if (!q.answers.count(e)) silent.push_back(e);
  std::string missing;
  for (const auto& s : silent) missing += (missing.empty() ? "" : ", ") + s;
  if (is_vary(q.cmd)) {
    finish_vary(self, std::move(q), timed_out, missing);
    return;
  }
  if (q.cmd == "status") {
    finish_status(self, std::move(q), silent);
    return;
  }
  const auto restarting = restarting_pools(q.answers);
  if (q.cmd == "explain" || q.cmd == "whatif") {
    for (auto& [pool, a] : q.answers) {
      if (bool_of(a, "restarting")) continue;  // another pool may know the job
      const auto* e = map_of(a, "explanation");
      if (!str_of(a, "error").empty()) {
        q.promise.deliver(reply_body(self, false, str_of(a, "error")));
        return;
      }
      if (q.cmd == "whatif" || (e != nullptr && bool_of(*e, "known"))) {
        a["pool"] = value{pool};
        q.promise.deliver(reply_body(self, true, {}, std::move(a)));
        return;
      }
    }
    if (q.cmd == "explain") {
      auto r = st.refused.find(q.job);
      if (r != st.refused.end()) {
        q.promise.deliver(reply_body(self, true, {}, refused_explanation(r->second)));
        return;
      }
    }
    if (!restarting.empty()) {
      reply_restarting(self, std::move(q), restarting);
      return;
    }
    q.promise.deliver(reply_body(self, false,
                                 timed_out ? "no answer from pool(s): " + missing : "the job is not known to any pool"));
    return;
  }
  if (!restarting.empty()) {
    reply_restarting(self, std::move(q), restarting);
    return;
  }
  if (q.cmd == "jobs" || q.cmd == "users") {
    auto rows = job_rows(q.answers, st.refused, q.filters);
    value::map results;
    if (q.cmd == "jobs") results["jobs"] = value{std::move(rows)};
    else results["users"] = value{user_rows(rows)};
    if (!silent.empty()) {
      q.promise.deliver(reply_body(self, false, "no answer from pool(s): " + missing, std::move(results)));
      return;
    }
    q.promise.deliver(reply_body(self, true, {}, std::move(results)));
    return;
  }
  // qload, qoccupancy: one entry per pool; qoccupancy adds the nodes never seen.
  value::map results;
  results["pools"] = value{pool_entries(q.answers)};
  if (q.cmd == "qoccupancy") {
    auto ev = q.answers.find(eviction_answer);
    const auto* never = ev == q.answers.end() ? nullptr : array_of(ev->second, "never_seen");
    results["never_seen"] = never != nullptr ? value{*never} : value{value::array{}};
  }
  if (!silent.empty()) {
    q.promise.deliver(reply_body(self, false, "no answer from pool(s): " + missing, std::move(results)));
    return;
  }
  q.promise.deliver(reply_body(self, true, {}, std::move(results)));
}

// Sends the vary request to eviction, or the query to every pool `q` expects an answer from, and waits.
void ask(admin_actor* self, pending_query q, std::variant<messages::vary_request, messages::admin_query> request) {
  auto& st = self->state;
  const auto qid = st.next_qid++;
  if (auto* v = std::get_if<messages::vary_request>(&request)) {
    v->qid = qid;
    route(self, st.env.router, st.stamper, std::string{topics::vary}, std::move(*v));
  } else {
    auto& query = std::get<messages::admin_query>(request);
    query.qid = qid;
    for (const auto& to : q.expected)
      route(self, st.env.router, st.stamper, to == eviction_answer ? std::string{topics::marks_query} : topics::query_topic(to),
            query);
  }
  // status, which people run to see whether the RM lives, answers within a second whatever a pool does.
  const auto deadline = q.cmd == "status" ? status_deadline(*st.env.cfg) : admin_deadline(*st.env.cfg);
  st.pending.emplace(qid, std::move(q));
  self->delayed_send(self, deadline, atoms::timeout::value, qid);
}

// HA: what `status` adds: role, epoch, rank, the active heard, every peer heard within takeover_ms, and a
// warning on an active that hears no standby.
void add_ha_status(const ha_gate& gate, value::map& r) {
  const auto v = gate.get_view();
  r["role"] = value{std::string{v.active ? "active" : "standby"}};
  r["epoch"] = value{v.epoch};
  r["rank"] = value{v.rank};
  if (!v.active_instance.empty()) r["active"] = value{v.active_instance};
  if (!v.active_admin.empty()) r["active_admin"] = value{v.active_admin};
  value::array peers;
  for (const auto& p : v.peers) {
    value::map m;
    m["instance"] = value{p.instance};
    m["rank"] = value{p.rank};
    m["epoch"] = value{p.epoch};
    m["state"] = value{p.state};
    if (!p.admin.empty()) m["admin"] = value{p.admin};
    m["heard_ms_ago"] = value{static_cast<std::uint64_t>(std::max<std::int64_t>(0, p.heard_ago_ms))};
    peers.emplace_back(std::move(m));
  }
  r["peers"] = value{std::move(peers)};
  if (!v.rank_conflicts.empty()) {
    value::array same;
    for (const auto& i : v.rank_conflicts) same.emplace_back(i);
    r["rank_conflicts"] = value{std::move(same)};
  }
  // The active with no standby left: a failure of this process is not taken over.
  const bool standby_heard =
      std::any_of(v.peers.begin(), v.peers.end(), [](const ha_gate::peer_view& p) { return p.state == "standby"; });
  if (v.active && !standby_heard)
    r["ha_warning"] = value{"no standby heard within takeover_ms: if this RM stops, no other takes over"};
}

// HA: a standby answers no query and takes no command of the active's: it names the active (YARN redirects
// the same way). The results carry the active's instance and admin endpoint when known.
bool redirected_from_standby(admin_actor* self, caf::response_promise& rp) {
  auto& st = self->state;
  if (!st.env.ha || st.env.ha->active()) return false;
  const auto v = st.env.ha->get_view();
  value::map r;
  r["role"] = value{std::string{"standby"}};
  std::string error = "standby; active is " + (v.active_instance.empty() ? std::string{"unknown"} : v.active_instance);
  if (!v.active_instance.empty()) r["active"] = value{v.active_instance};
  if (!v.active_admin.empty()) {
    r["active_admin"] = value{v.active_admin};
    error += " (admin " + v.active_admin + ")";
  }
  rp.deliver(reply_body(self, false, error, std::move(r)));
  return true;
}

// `key_name` and `public_key`: the CURVE key that sent the request (both empty when CURVE is off).
void on_request(admin_actor* self, const std::string& body, const std::string& by, const std::string& key_name,
                const std::string& public_key) {
  auto& st = self->state;
  auto rp = self->make_response_promise();
  auto req = messages::decode_admin_request(messages::topics::admin, body, limits_of(*st.env.cfg));
  if (!req) {
    spdlog::warn("admin request from {} refused: {}", by, req.error().message());
    rp.deliver(reply_body(self, false, req.error().message()));
    return;
  }
  const auto& cmd = req.value().cmd;
  // Who asked what, for the operators: every request that decoded is logged and published as an event.
  messages::rm_event event{"admin_request", {{"cmd", cmd}, {"by", by}}};
  if (key_name.empty()) {
    spdlog::info("admin request '{}' from {}", cmd, by);
  } else {
    spdlog::info("admin request '{}' from {}, key '{}' ({})", cmd, by, key_name, public_key);
    event.detail["key"] = key_name;
    event.detail["public_key"] = public_key;
  }
  route(self, st.env.router, st.stamper, std::string{messages::topics::rm_events}, std::move(event));
  auto args = messages::arguments(req.value());
  namespace ac = messages::admin_commands;
  pending_query q;
  q.promise = rp;
  q.cmd = cmd;
  if (cmd == ac::handover) {
    if (!st.ha) {
      rp.deliver(reply_body(self, false, "HA is off ([ha] enabled = false): there is nothing to hand over to"));
      return;
    }
    std::string to;
    if (args.has("to")) {
      auto t = args.get_string("to");
      if (!t) {
        rp.deliver(reply_body(self, false, t.error().message()));
        return;
      }
      to = t.value();
    }
    self->request(st.ha, std::chrono::seconds(5), atoms::handover::value, to)
        .then(
            [self, rp](bool ok, const std::string& text) mutable {
              value::map r;
              if (ok) {
                r["to"] = value{text};
                spdlog::info("admin: handed over to {}", text);
              }
              rp.deliver(reply_body(self, ok, "handover refused: " + text, std::move(r)));
            },
            [self, rp](const caf::error& err) mutable {
              rp.deliver(reply_body(self, false, "the HA actor did not answer (" + to_string(err) + ")"));
            });
  } else if ((cmd == ac::vary_off || cmd == ac::vary_on || cmd == ac::drain || cmd == ac::undrain ||
              cmd == ac::qload || cmd == ac::qoccupancy || cmd == ac::explain || cmd == ac::whatif ||
              cmd == ac::jobs || cmd == ac::users) &&
             redirected_from_standby(self, rp)) {
    return;
  } else if (cmd == ac::vary_off || cmd == ac::vary_on || cmd == ac::drain || cmd == ac::undrain) {
    auto nodes = args.get_string_list("nodes");
    if (!nodes) {
      rp.deliver(reply_body(self, false, nodes.error().message()));
      return;
    }
    q.by = by;
    q.nodes = std::move(nodes.value());
    if (cmd == ac::vary_off) {
      // First the shares on those nodes, so that the reply can name what the vary-off evicts.
      q.at = pending_query::step::shares_before;
      for (const auto& p : top_pools(*st.env.cfg)) q.expected.insert(p);
      ask(self, std::move(q), messages::admin_query{0, "qoccupancy", {}});
    } else {
      q.at = pending_query::step::vary;
      q.expected = {eviction_answer};
      auto list = q.nodes;
      const bool drain = cmd == ac::drain || cmd == ac::undrain;
      ask(self, std::move(q), messages::vary_request{0, cmd == ac::drain, std::move(list), drain});
    }
  } else if (cmd == ac::status) {
    for (const auto& p : top_pools(*st.env.cfg)) q.expected.insert(p);
    q.expected.insert(eviction_answer);
    ask(self, std::move(q), messages::admin_query{0, cmd, {}});
  } else if (cmd == ac::jobs || cmd == ac::users) {
    for (const char* key : {"user", "class", "state"}) {
      if (!args.has(key)) continue;
      auto v = args.get_string(key);
      if (!v) {
        rp.deliver(reply_body(self, false, v.error().message()));
        return;
      }
      q.filters[key] = value{v.value()};
    }
    const auto state = str_of(q.filters, "state");
    const auto& states = job_states();
    if (!state.empty() && std::find(states.begin(), states.end(), state) == states.end()) {
      rp.deliver(reply_body(self, false, "state: '" + state + "' is not a job state (scheduled, pending, refused)"));
      return;
    }
    for (const auto& p : top_pools(*st.env.cfg)) q.expected.insert(p);
    auto filters = q.filters;
    ask(self, std::move(q), messages::admin_query{0, std::string{ac::jobs}, std::move(filters)});
  } else if (cmd == ac::qload || cmd == ac::qoccupancy || cmd == ac::explain) {
    value::map a;
    if (cmd == ac::qload || cmd == ac::qoccupancy) {
      // Filters: one pool; for qoccupancy also a state and a node pattern, applied where the nodes are.
      for (const char* key : {"pool", "state", "node"}) {
        if (!args.has(key) || (cmd == ac::qload && std::string_view{key} != "pool")) continue;
        auto v = args.get_string(key);
        if (!v) {
          rp.deliver(reply_body(self, false, v.error().message()));
          return;
        }
        a[key] = value{v.value()};
      }
      const auto pools = top_pools(*st.env.cfg);
      const auto pool = str_of(a, "pool");
      if (!pool.empty() && std::find(pools.begin(), pools.end(), pool) == pools.end()) {
        rp.deliver(reply_body(self, false, "no top-level nodepool '" + pool + "' (pools: " + joined(pools) + ")"));
        return;
      }
      for (const auto& p : pools)
        if (pool.empty() || p == pool) q.expected.insert(p);
      if (cmd == ac::qoccupancy) q.expected.insert(eviction_answer);
      ask(self, std::move(q), messages::admin_query{0, cmd, std::move(a)});
      return;
    }
    if (cmd == ac::explain) {
      auto job = args.get_string("job");
      if (!job) {
        rp.deliver(reply_body(self, false, job.error().message()));
        return;
      }
      a["job"] = value{job.value()};
      q.job = job.value();  // for the answer about refused work
    }
    for (const auto& p : top_pools(*st.env.cfg)) q.expected.insert(p);
    ask(self, std::move(q), messages::admin_query{0, cmd, std::move(a)});
  } else if (cmd == ac::whatif) {
    auto w = messages::whatif_work(req.value(), limits_of(*st.env.cfg));
    if (!w) {
      rp.deliver(reply_body(self, false, w.error().message()));
      return;
    }
    // The pool that owns the item's class answers (the same routing as the work map's).
    const auto& cfg = st.env.cfg->scheduling;
    std::string pool;
    for (const auto& c : cfg.classes) {
      const bool named = !w.value().class_name.empty() && c.name == w.value().class_name;
      const bool by_default = w.value().class_name.empty() && c.is_default &&
                              (w.value().kind == messages::work_kind::job) == (c.policy == core::policy::fair_share);
      if ((named || by_default) && pool.empty()) pool = core::top_level_of(cfg, c.nodepool);
    }
    if (pool.empty()) {
      rp.deliver(reply_body(self, false, "work.class: no such class '" + w.value().class_name + "'"));
      return;
    }
    value::map a;
    a["work"] = to_value(w.value());
    q.expected = {pool};
    ask(self, std::move(q), messages::admin_query{0, cmd, std::move(a)});
  } else if (cmd == ac::reconfigure) {
    std::vector<std::string> changes;
    try {
      auto fresh = st.reload();  // validates; every process then reloads its own copy
      changes = config::describe_changes(*st.env.cfg, fresh);
    } catch (const config::config_error& e) {
      std::string all;
      for (const auto& i : e.issues()) all += (all.empty() ? "" : "; ") + i.file + ":" + std::to_string(i.line) + ": " + i.message;
      spdlog::warn("reconfigure by {} refused, nothing changed: {}", by, all);
      rp.deliver(reply_body(self, false, "configuration not reloaded: " + all));
      return;
    } catch (const std::exception& e) {
      spdlog::warn("reconfigure by {} refused, nothing changed: {}", by, e.what());
      rp.deliver(reply_body(self, false, std::string{"configuration not reloaded: "} + e.what()));
      return;
    }
    spdlog::info("reconfigure by {}: reloading; {}", by,
                 changes.empty() ? std::string{"nothing changed"} : joined(changes));
    route(self, st.env.router, st.stamper, std::string{topics::reconfigure}, messages::reconfigure_request{});
    value::array listed;
    for (auto& c : changes) listed.emplace_back(std::move(c));
    value::map r;
    r["changes"] = value{std::move(listed)};
    rp.deliver(reply_body(self, true, {}, std::move(r)));
  } else {
    rp.deliver(reply_body(self, false,
                          "unknown command '" + cmd +
                              "' (known: vary_off, vary_on, drain, undrain, qload, qoccupancy, jobs, users, explain, "
                              "whatif, reconfigure, status, handover)"));
  }
}

caf::behavior admin(admin_actor* self, actor_env env, std::function<config::rm_config()> reload) {
  auto& st = self->state;
  st.env = env;
  st.reload = std::move(reload);
  st.stamper = envelope_stamper{env.src("admin")};
  st.started_ms = wall_clock_ms();
  return {
      [self](atoms::probe) { return static_cast<std::uint64_t>(self->mailbox().size()); },  // health
      [self](atoms::admin, const std::string& body, const std::string& by, const std::string& key_name,
             const std::string& public_key) { on_request(self, body, by, key_name, public_key); },
      [self](atoms::deliver, const messages::routed_message& m) {
        auto& st = self->state;
        if (const auto* r = m.as<messages::round_start>()) {
          st.cycle = r->cycle;
          st.round_seen_ms = wall_clock_ms();
          st.refused.clear();
          for (const auto& w : r->refused) st.refused[w.id] = w;
          return;
        }
        if (const auto* e = m.as<messages::rm_event>()) {
          st.guard_refusals += e->kind == messages::event_kinds::invariant_violation;
          st.over_order_repairs += e->kind == messages::event_kinds::over_order_repaired;
          if (auto n = messages::not_scheduling_of(*e)) {
            st.not_scheduling = std::move(n);
            st.not_scheduling_at_ms = wall_clock_ms();
          }
          return;
        }
        const auto* a = m.as<messages::admin_answer>();
        if (a == nullptr) return;
        auto it = st.pending.find(a->qid);
        if (it == st.pending.end()) return;
        it->second.answers[a->from] = a->result;
        bool all = true;
        for (const auto& e : it->second.expected) all = all && it->second.answers.count(e);
        if (all) finish(self, a->qid, false);
      },
      [self](atoms::timeout, std::uint64_t qid) { finish(self, qid, true); },
      [self](atoms::reset, config_ptr cfg) { self->state.env.cfg = std::move(cfg); },
      [self](atoms::handover, caf::actor ha) { self->state.ha = std::move(ha); },
  };
}

}  // namespace

caf::actor spawn_admin(caf::actor_system& sys, actor_env env, std::function<config::rm_config()> reload) {
  auto router = env.router;
  const std::vector<std::string> subscriptions{std::string{topics::answer}, std::string{topics::round},
                                               std::string{messages::topics::rm_events}};
  auto self = sys.spawn(admin, std::move(env), std::move(reload));
  // Subscribed from the spawning thread, so the subscriptions are in place before anything this
  // thread routes next (an actor's own start-up runs later, on a scheduler thread).
  for (const auto& t : subscriptions) caf::anon_send(router, atoms::subscribe::value, t, self);
  return self;
}

}  // namespace rmbus::actors
