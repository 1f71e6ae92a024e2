// Publication: gathers every pool's answer for a round and publishes rm.state, rm.cycle, rm.nodes, rm.events.
//
// A round (rm.internal.round from differencing) names the pools that must answer. When every one has
// answered, or round_timeout has passed, the round is published at once, in one handler, so a shutdown never
// leaves half a round on the bus. A pool that did not answer is reported (rm.events `round_timeout`) and its
// last known plan is published in its place: rm.state is always the COMPLETE schedule, so a monitor joining
// late is whole after one round. Events for shares that turned preempt or evict, and for newly refused work,
// come from comparing each round with the previous one. rm.nodes merges the watchdog's view (intake: up,
// missing, down, missed counts) with each pool's (quanta, free quanta, varied off, blacklisted); it is
// published after every round and on every node state change. Finally rm.internal.done lets the next round
// start.
#include <map>
#include <set>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/detail/spawn.hpp"
#include "messages/rm_cycle.hpp"
#include "messages/rm_event.hpp"
#include "messages/rm_nodes.hpp"
#include "messages/rm_state.hpp"
#include "messages/topics.hpp"

namespace rmbus::actors {

namespace {

struct publication_state {
  actor_env env;
  envelope_stamper stamper{"publisher"};
  std::uint64_t cycle = 0;
  bool published = true;
  std::set<std::string> expected;
  std::map<std::string, value::map> answers;     // this round
  std::map<std::string, value::map> last_plan;   // pool -> its last answer (any round)
  value::array refused;                          // this round's refusals by differencing
  value::array liveness;                         // intake's node table
  std::map<std::string, messages::share_status> share_status;  // last published, for events
  std::set<std::string> refused_jobs;
  static inline const char* name = "rmbus.publication";
};

using publication_actor = caf::stateful_actor<publication_state>;

template <class T>
void publish(publication_actor* self, std::string_view topic, const T& msg) {
  auto t = std::string{topic};
  route(self, self->state.env.router, t, messages::encode(self->state.stamper.next(t), msg));
}

void publish_nodes(publication_actor* self) {
  auto& st = self->state;
  std::map<std::string, messages::node_report> nodes;
  for (const auto& [pool, plan] : st.last_plan) {
    if (const auto* ms = array_of(plan, "machines")) {
      for (const auto& mv : *ms) {
        const auto* m = mv.as_map();
        if (m == nullptr) continue;
        auto& r = nodes[str_of(*m, "node")];
        r.node = str_of(*m, "node");
        r.pool = pool;
        r.nodepool = str_of(*m, "nodepool");
        const auto s = str_of(*m, "state");
        r.state = s == "varied_off"    ? messages::node_state::varied_off
                  : s == "blacklisted" ? messages::node_state::blacklisted
                  : s == "down"        ? messages::node_state::down
                  : bool_of(*m, "quiesced") ? messages::node_state::quiesced
                                            : messages::node_state::up;
        r.memory_mb = uint_of(*m, "memory_mb");
        r.quanta = uint_of(*m, "quanta");
        r.free_quanta = uint_of(*m, "free_quanta");
      }
    }
  }
  for (const auto& nv : st.liveness) {
    const auto* m = nv.as_map();
    if (m == nullptr) continue;
    auto& r = nodes[str_of(*m, "node")];
    r.node = str_of(*m, "node");
    if (r.pool.empty()) r.pool = str_of(*m, "pool");
    if (r.nodepool.empty()) r.nodepool = str_of(*m, "nodepool");
    if (r.memory_mb == 0) r.memory_mb = uint_of(*m, "memory_mb");
    r.missed = uint_of(*m, "missed");
    const auto live = str_of(*m, "state");
    if (live == "down") r.state = messages::node_state::down;
    else if (live == "missing") r.state = messages::node_state::missing;
    else if (r.state == messages::node_state::down) r.state = messages::node_state::up;  // back, pool not told yet
  }
  messages::rm_nodes out;
  for (auto& [name, r] : nodes) out.nodes.push_back(std::move(r));
  publish(self, messages::topics::rm_nodes, out);
}

// Every job of the round: each pool's answer (or, for a pool that did not answer, its last known plan) plus
// the refusals made by differencing. Sorted by job id.
std::map<std::string, messages::job_schedule> jobs_of_round(const publication_state& st) {
  std::map<std::string, messages::job_schedule> jobs;
  for (const auto& [pool, plan] : st.last_plan) {
    if (!st.expected.count(pool)) continue;  // a pool removed by reconfiguration
    if (const auto* js = array_of(plan, "jobs"))
      for (const auto& j : *js) {
        auto s = job_schedule_of(j);
        jobs[s.id] = std::move(s);
      }
  }
  for (const auto& r : st.refused) {
    const auto* m = r.as_map();
    if (m == nullptr) continue;
    messages::job_schedule s;
    s.id = str_of(*m, "id");
    s.status = messages::job_status::refused;
    s.reason = str_of(*m, "reason");
    s.user = str_of(*m, "user");
    jobs[s.id] = std::move(s);
  }
  return jobs;
}

// Events for what changed since the last published round: shares newly marked preempt or evict (with why:
// the core evicts on node down, vary-off and blacklisting, which the node's state in the answers tells), and
// work newly refused. Updates the remembered statuses.
std::vector<messages::rm_event> changes_since_last_round(publication_state& st,
                                                         const std::map<std::string, messages::job_schedule>& jobs) {
  std::map<std::string, std::string> node_state;
  for (const auto& [pool, plan] : st.last_plan)
    if (const auto* ms = array_of(plan, "machines"))
      for (const auto& mv : *ms)
        if (const auto* m = mv.as_map()) node_state[str_of(*m, "node")] = str_of(*m, "state");
  auto evict_reason = [&](const std::string& node) -> std::string {
    const auto s = node_state[node];
    return s == "varied_off" ? "node varied off" : s == "blacklisted" ? "blacklisted after reconfiguration" : "node down";
  };
  std::vector<messages::rm_event> events;
  std::map<std::string, messages::share_status> statuses;
  std::set<std::string> refused_now;
  for (const auto& [id, j] : jobs) {
    if (j.status == messages::job_status::refused) {
      refused_now.insert(id);
      if (!st.refused_jobs.count(id)) events.push_back({"refused", {{"job", id}, {"reason", j.reason}}});
    }
    for (const auto& s : j.shares) {
      statuses[s.id] = s.status;
      if (s.status != messages::share_status::preempt && s.status != messages::share_status::evict) continue;
      auto before = st.share_status.find(s.id);
      if (before != st.share_status.end() && before->second == s.status) continue;
      const bool pre = s.status == messages::share_status::preempt;
      events.push_back({pre ? "preempt" : "evict",
                        {{"job", id}, {"share", s.id}, {"node", s.node}, {"reason", pre ? "fair share" : evict_reason(s.node)}}});
    }
  }
  st.share_status = std::move(statuses);
  st.refused_jobs = std::move(refused_now);
  return events;
}

void publish_cycles(publication_actor* self) {
  auto& st = self->state;
  for (const auto& [pool, plan] : st.answers) {
    messages::rm_cycle c;
    c.pool = pool;
    c.cycle = st.cycle;
    c.jobs = uint_of(plan, "jobs_count");
    c.nodes = uint_of(plan, "nodes");
    c.given = uint_of(plan, "given");
    c.preempted = uint_of(plan, "preempted");
    c.evicted = uint_of(plan, "evicted");
    c.how_much_us = uint_of(plan, "how_much_us");
    c.what_of_us = uint_of(plan, "what_of_us");
    c.preempt_us = uint_of(plan, "preempt_us");
    c.defrag_us = uint_of(plan, "defrag_us");
    c.total_us = uint_of(plan, "total_us");  // apply_work + schedule, measured by the pool's actor
    publish(self, messages::topics::rm_cycle, c);
  }
}

// Publishes the whole round in this one handler, so a shutdown never leaves half of it on the bus.
void publish_round(publication_actor* self) {
  auto& st = self->state;
  if (st.published) return;
  st.published = true;
  for (const auto& pool : st.expected) {
    if (st.answers.count(pool)) continue;
    spdlog::warn("round {}: pool {} did not answer in time; keeping its last schedule", st.cycle, pool);
    publish(self, messages::topics::rm_events,
            messages::rm_event{"round_timeout", {{"pool", pool}, {"cycle", std::to_string(st.cycle)}}});
  }
  for (auto& [pool, plan] : st.answers) st.last_plan[pool] = plan;
  auto jobs = jobs_of_round(st);
  const auto events = changes_since_last_round(st, jobs);
  messages::rm_state state;
  state.cycle = st.cycle;
  for (auto& [id, j] : jobs) state.jobs.push_back(std::move(j));
  publish(self, messages::topics::rm_state, state);
  publish_cycles(self);
  publish_nodes(self);
  for (const auto& e : events) publish(self, messages::topics::rm_events, e);
  value::map done;
  done["cycle"] = value{st.cycle};
  route_internal(self, st.env.router, st.stamper, std::string{topics::done}, std::move(done));
}

caf::behavior publication(publication_actor* self, actor_env env) {
  self->state.env = env;
  self->state.stamper = envelope_stamper{env.src("publisher")};
  return {
      [self](atoms::deliver, const std::string& topic, const std::string& body) {
        auto& st = self->state;
        auto msg = decode_internal(topic, body, limits_of(*st.env.cfg));
        if (!msg) {
          spdlog::warn("publication: {}", msg.error().message());
          return;
        }
        auto& f = msg.value().fields;
        if (topic == topics::round) {
          publish_round(self);  // a previous round still open: publish what it has
          st.cycle = uint_of(f, "cycle");
          st.published = false;
          st.answers.clear();
          st.expected.clear();
          if (const auto* pools = array_of(f, "pools"))
            for (const auto& p : *pools)
              if (const auto* s = p.as_string()) st.expected.insert(*s);
          st.refused = array_of(f, "refused") ? *array_of(f, "refused") : value::array{};
          self->delayed_send(self, std::chrono::milliseconds(st.env.cfg->runtime.round_timeout_ms),
                             atoms::timeout::value, st.cycle);
          if (st.expected.empty()) publish_round(self);
        } else if (topic == topics::plan) {
          const auto pool = str_of(f, "pool");
          if (uint_of(f, "cycle") == st.cycle && !st.published) {
            st.answers[pool] = std::move(f);
            if (st.answers.size() >= st.expected.size()) publish_round(self);
          } else {
            st.last_plan[pool] = std::move(f);  // late answer: newer than what we kept
          }
        } else if (topic == topics::node_state) {
          st.liveness = array_of(f, "nodes") ? *array_of(f, "nodes") : value::array{};
          const auto* changes = array_of(f, "changes");
          if (changes != nullptr && !changes->empty()) publish_nodes(self);
        }
      },
      [self](atoms::timeout, std::uint64_t cycle) {
        if (cycle == self->state.cycle) publish_round(self);
      },
      [self](atoms::reset, config_ptr cfg) { self->state.env.cfg = std::move(cfg); },
  };
}

}  // namespace

caf::actor spawn_publication(caf::actor_system& sys, actor_env env) {
  auto router = env.router;
  const std::vector<std::string> subscriptions{std::string{topics::round}, std::string{topics::plan}, std::string{topics::node_state}};
  auto self = sys.spawn(publication, std::move(env));
  // Subscribed from the spawning thread, so the subscriptions are in place before anything this
  // thread routes next (an actor's own start-up runs later, on a scheduler thread).
  for (const auto& t : subscriptions) caf::anon_send(router, atoms::subscribe::value, t, self);
  return self;
}

}  // namespace rmbus::actors
