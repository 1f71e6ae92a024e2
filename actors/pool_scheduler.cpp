// The scheduler of ONE top-level nodepool: a thin shell around core::nodepool_scheduler.
//
// Machine operations (rm.internal.node.<pool>) become one core call each; the pool's slice of the work map
// (rm.internal.work.<pool>) becomes apply_work + schedule(round_input) and the answer goes out on
// rm.internal.plan; admin queries (rm.internal.query.<pool>) become view/explain/whatif. Every pool has its
// own actor, so the pools' cycles run concurrently on CAF's threads; the only thing spanning pools, the
// per-user allotment, arrives pre-partitioned in the round input (see workmap_diff.cpp).
#include <chrono>
#include <optional>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/detail/spawn.hpp"
#include "core/nodepool_scheduler.hpp"

namespace rmbus::actors {

namespace {

struct scheduler_state {
  actor_env env;
  std::string pool;
  std::optional<core::nodepool_scheduler> sched;
  envelope_stamper stamper{"scheduler"};
  static inline const char* name = "rmbus.pool_scheduler";
};

using scheduler_actor = caf::stateful_actor<scheduler_state>;

// Share ids must never repeat, also across restarts and reconfigurations: the prefix carries the wall clock
// of the scheduler's creation (base 36) and the pool's position in the configuration.
std::string share_prefix(const config::rm_config& cfg, const std::string& pool) {
  static const char* digits = "0123456789abcdefghijklmnopqrstuvwxyz";
  auto ms = static_cast<std::uint64_t>(wall_clock_ms());
  std::string s;
  do {
    s.insert(s.begin(), digits[ms % 36]);
    ms /= 36;
  } while (ms > 0);
  std::size_t index = 0;
  for (std::size_t i = 0; i < cfg.scheduling.nodepools.size(); ++i)
    if (cfg.scheduling.nodepools[i].name == pool) index = i;
  return s + "-" + std::to_string(index);
}

void on_node(scheduler_actor* self, const value::map& m) {
  auto& s = *self->state.sched;
  const auto op = str_of(m, "op");
  const core::machine_id node{str_of(m, "node")};
  if (op == "update") {
    s.update_machine({node, str_of(m, "ip"), uint_of(m, "memory_mb"), bool_of(m, "quiesced")});
  } else if (op == "down") {
    s.machine_down(node);
  } else if (op == "vary_off") {
    s.vary_off(node);
  } else if (op == "vary_on") {
    s.vary_on(node);
  } else {
    spdlog::warn("pool {}: unknown node operation '{}'", self->state.pool, op);
  }
}

value machines_of(const core::pool_view& v) {
  value::array out;
  for (const auto& mv : v.machines) {
    value::map m;
    m["node"] = value{mv.name.str()};
    m["nodepool"] = value{mv.nodepool};
    m["state"] = value{core::to_string(mv.state)};
    m["quiesced"] = value{mv.quiesced};
    m["memory_mb"] = value{mv.memory_mb};
    m["quanta"] = value{static_cast<std::int64_t>(mv.quanta)};
    m["free_quanta"] = value{static_cast<std::int64_t>(mv.free_quanta)};
    value::array shares;
    for (const auto& h : mv.shares) {
      value::map sm;
      sm["job"] = value{h.job.str()};
      sm["share"] = value{h.share.id.str()};
      sm["quanta"] = value{static_cast<std::int64_t>(h.share.quanta)};
      sm["status"] = value{core::to_string(h.share.status)};
      shares.emplace_back(std::move(sm));
    }
    m["shares"] = value{std::move(shares)};
    out.emplace_back(std::move(m));
  }
  return value{std::move(out)};
}

void on_work(scheduler_actor* self, const std::string& topic, const value::map& m) {
  auto& st = self->state;
  core::work_map snapshot;
  if (const auto* items = array_of(m, "work")) {
    for (const auto& v : *items) {
      auto w = work_item_of(topic, v);
      if (!w) {
        spdlog::warn("pool {}: dropped an internal work item: {}", st.pool, w.error().message());
        continue;
      }
      auto item = to_core(w.value());
      snapshot[item.id] = std::move(item);
    }
  }
  core::round_input in;
  in.now_ms = static_cast<std::int64_t>(uint_of(m, "now_ms"));
  for (const auto& [u, mb] : user_mb_of(map_of(m, "other_np") ? &m.find("other_np")->second : nullptr))
    in.other_pools_nonpreemptable_mb[core::user_id{u}] = mb;

  const auto t0 = std::chrono::steady_clock::now();
  st.sched->apply_work(snapshot);
  const auto& plan = st.sched->schedule(in);
  const auto total_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();

  value::map out;
  out["cycle"] = value{uint_of(m, "cycle")};
  out["pool"] = value{st.pool};
  out["quantum_mb"] = value{plan.quantum_mb};
  out["total_us"] = value{static_cast<std::uint64_t>(total_us)};
  // DUCC computes job caps at the start of How Much, so rm.cycle's how_much_us covers both.
  const auto& t = st.sched->last_stage_timings();
  out["how_much_us"] = value{t.caps_us + t.how_much_us};
  out["what_of_us"] = value{t.what_of_us};
  out["preempt_us"] = value{t.preempt_us};
  out["defrag_us"] = value{t.defrag_us};
  out["jobs_count"] = value{static_cast<std::int64_t>(plan.counts.jobs)};
  out["nodes"] = value{static_cast<std::int64_t>(plan.counts.schedulable_nodes)};
  out["given"] = value{static_cast<std::int64_t>(plan.counts.given)};
  out["preempted"] = value{static_cast<std::int64_t>(plan.counts.preempted)};
  out["evicted"] = value{static_cast<std::int64_t>(plan.counts.evicted)};
  value::array jobs;
  for (const auto& j : plan.jobs) jobs.push_back(to_value(j));
  out["jobs"] = value{std::move(jobs)};
  out["np"] = to_value(st.sched->nonpreemptable_mb_by_user());
  out["machines"] = machines_of(st.sched->view());
  route_internal(self, st.env.router, st.stamper, std::string{topics::plan}, std::move(out));
}

value by_order(const std::map<int, std::int64_t>& m) {
  value::map out;
  for (const auto& [o, n] : m) out[std::to_string(o)] = value{n};
  return value{std::move(out)};
}

value explanation_of(const core::job_explanation& e) {
  value::map m;
  m["job"] = value{e.id.str()};
  m["known"] = value{e.known};
  m["class"] = value{e.class_name};
  m["order"] = value{static_cast<std::int64_t>(e.order)};
  m["demand"] = value{e.demand};
  m["cap"] = value{e.cap.cap};
  m["cap_decided_by"] = value{std::string{e.cap.decided_by}};
  m["pure_fair_share"] = value{e.pure_fair_share};
  m["given"] = value{static_cast<std::int64_t>(e.given)};
  m["placed"] = value{static_cast<std::int64_t>(e.placed)};
  m["preempting"] = value{static_cast<std::int64_t>(e.preempting)};
  m["reason"] = value{std::string{core::to_string(e.reason)}};
  m["blocked"] = value{e.blocked};
  m["text"] = value{e.text()};
  return value{std::move(m)};
}

value::map answer_query(scheduler_actor* self, const std::string& cmd, const value::map& args) {
  auto& s = *self->state.sched;
  value::map r;
  if (cmd == "qload") {
    const auto v = s.view();
    value::array classes;
    for (const auto& c : v.classes) {
      value::map cm;
      cm["class"] = value{c.name};
      cm["priority"] = value{static_cast<std::int64_t>(c.priority)};
      cm["weight"] = value{static_cast<std::int64_t>(c.weight)};
      cm["demand_by_order"] = by_order(c.demand_by_order);
      cm["awarded_by_order"] = by_order(c.awarded_by_order);
      classes.emplace_back(std::move(cm));
    }
    r["quantum_mb"] = value{v.quantum_mb};
    r["classes"] = value{std::move(classes)};
    std::int64_t total = 0, free = 0, up = 0;
    for (const auto& mv : v.machines) {
      if (mv.state != core::machine_state::up) continue;
      ++up;
      total += mv.quanta;
      free += mv.free_quanta;
    }
    r["nodes_up"] = value{up};
    r["quanta"] = value{total};
    r["free_quanta"] = value{free};
  } else if (cmd == "qoccupancy") {
    const auto v = s.view();
    r["quantum_mb"] = value{v.quantum_mb};
    r["nodes"] = machines_of(v);
  } else if (cmd == "explain") {
    r["explanation"] = explanation_of(s.explain(core::job_id{str_of(args, "job")}));
  } else if (cmd == "whatif") {
    auto it = args.find("work");
    auto w = it == args.end() ? messages::result<messages::work_item>{messages::decode_error{"admin", "work", "missing"}}
                              : work_item_of("admin", it->second);
    if (!w) {
      r["error"] = value{w.error().message()};
      return r;
    }
    const auto res = s.whatif(to_core(w.value()));
    r["plan"] = to_value(res.plan);
    r["explanation"] = explanation_of(res.explanation);
    value::array pre;
    for (const auto& p : res.preempted) {
      value::map pm;
      pm["job"] = value{p.job.str()};
      pm["share"] = value{p.share.str()};
      pm["node"] = value{p.node.str()};
      pre.emplace_back(std::move(pm));
    }
    r["would_preempt"] = value{std::move(pre)};
  } else {
    r["error"] = value{"pool scheduler cannot answer '" + cmd + "'"};
  }
  return r;
}

caf::behavior pool_scheduler(scheduler_actor* self, actor_env env, std::string pool) {
  auto& st = self->state;
  st.env = env;
  st.pool = pool;
  st.stamper = envelope_stamper{env.src("scheduler." + pool)};
  st.sched.emplace(pool, env.cfg->scheduling, share_prefix(*env.cfg, pool));
  st.sched->set_stage_clock([] {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  });
  return {
      [self](atoms::deliver, const std::string& topic, const std::string& body) {
        auto& st = self->state;
        auto msg = decode_internal(topic, body, limits_of(*st.env.cfg));
        if (!msg) {
          spdlog::warn("pool {}: {}", st.pool, msg.error().message());
          return;
        }
        const auto& f = msg.value().fields;
        if (topic.rfind(topics::node_prefix, 0) == 0) {
          on_node(self, f);
        } else if (topic.rfind(topics::work_prefix, 0) == 0) {
          on_work(self, topic, f);
        } else if (topic.rfind(topics::query_prefix, 0) == 0) {
          const auto* args = map_of(f, "args");
          value::map out;
          out["qid"] = value{uint_of(f, "qid")};
          out["from"] = value{st.pool};
          out["result"] = value{answer_query(self, str_of(f, "cmd"), args ? *args : value::map{})};
          route_internal(self, st.env.router, st.stamper, std::string{topics::answer}, std::move(out));
        }
      },
  };
}

}  // namespace

caf::actor spawn_pool_scheduler(caf::actor_system& sys, actor_env env, std::string pool) {
  auto router = env.router;
  const std::vector<std::string> subscriptions{node_topic(pool), work_topic(pool), query_topic(pool)};
  auto self = sys.spawn(pool_scheduler, std::move(env), std::move(pool));
  // Subscribed from the spawning thread, so the subscriptions are in place before anything this
  // thread routes next (an actor's own start-up runs later, on a scheduler thread).
  for (const auto& t : subscriptions) caf::anon_send(router, atoms::subscribe::value, t, self);
  return self;
}

}  // namespace rmbus::actors
