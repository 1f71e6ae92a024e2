#include "tools/simcheck/sim_run.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <variant>
#include <vector>

#include "tools/simcheck/sim_head.hpp"
#include "tools/simcheck/sim_history.hpp"
#include "tools/simcheck/sim_orchestrator.hpp"
#include "tools/simcheck/sim_random.hpp"

namespace rmbus::simcheck {

namespace {

constexpr std::int64_t interval_ms = 1000;  // heartbeat interval and round period
constexpr std::uint64_t quantum_mb = 1024;

core::resource_class make_class(std::string name, core::policy p, int priority, int weight) {
  core::resource_class c;
  c.name = std::move(name);
  c.policy = p;
  c.priority = priority;
  c.weight = weight;
  c.nodepool = "default";
  c.use_prediction = false;  // the simulated work items carry no timings to predict from
  return c;
}

core::scheduler_config make_config(bool sparing) {
  core::scheduler_config cfg;
  cfg.settings.quantum_mb = quantum_mb;
  cfg.settings.preemption_policy = sparing ? core::preemption_policy::sparing : core::preemption_policy::ducc;
  core::nodepool_def pool;
  pool.name = "default";
  cfg.nodepools.push_back(pool);
  cfg.classes.push_back(make_class("fixed", core::policy::fixed_share, 5, 100));
  cfg.classes.push_back(make_class("normal", core::policy::fair_share, 10, 100));
  cfg.classes.push_back(make_class("low", core::policy::fair_share, 10, 50));
  return cfg;
}

struct heartbeat_event {
  std::string node;
};
struct map_event {
  published_map map;
};
struct plan_event {
  core::schedule_plan plan;
  std::uint64_t cycle = 0;
  std::uint64_t epoch = 1;
};
using event = std::variant<heartbeat_event, map_event, plan_event>;

// The seeded delivery order: events by time, ties broken by a number drawn from the seed.
class event_queue {
 public:
  void push(std::int64_t at_ms, std::uint64_t tie, event e) { q_.emplace(std::make_pair(at_ms, tie), std::move(e)); }
  bool due_before(std::int64_t t) const { return !q_.empty() && q_.begin()->first.first < t; }
  std::pair<std::int64_t, event> pop() {
    auto it = q_.begin();
    auto out = std::make_pair(it->first.first, std::move(it->second));
    q_.erase(it);
    return out;
  }

 private:
  std::multimap<std::pair<std::int64_t, std::uint64_t>, event> q_;
};

struct sim_node {
  std::string name;
  std::uint64_t memory_mb = 0;
  std::int64_t phase_ms = 0;        // when in each interval its agent sends
  std::int64_t silent_until_ms = 0;  // heartbeats before this are lost (nemesis)
  int vary_on_round = -1;            // varied off until this round (nemesis)
};

class run {
 public:
  explicit run(const run_settings& s)
      : s_(s), rng_(s.seed), takeover_rng_(s.seed ^ 0x9e3779b97f4a7c15ULL), head_(make_config(s.sparing), head_settings{}) {
    result_.seed = s.seed;
    make_cluster();
    make_workload();
  }

  run_result play() {
    for (int r = 1; r <= s_.rounds && !result_.failure; ++r) play_round(r);
    if (!result_.failure) check_convergence();
    result_.guard_refusals = head_.guard_refusals();
    result_.history = history_.entries();
    return std::move(result_);
  }

 private:
  void note(std::string what) { history_.note(round_, now_, std::move(what)); }
  void count(move_kind k, std::string what) {
    ++result_.moves[static_cast<std::size_t>(k)];
    note(std::string(to_string(k)) + ": " + what);
  }
  bool nemesis_on() const { return round_ <= s_.rounds - s_.quiet_rounds; }
  bool roll(move_kind k) { return nemesis_on() && rng_.chance(move_percent[static_cast<std::size_t>(k)]); }
  sim_node& any_node() { return nodes_[static_cast<std::size_t>(rng_.between(0, std::ssize(nodes_) - 1))]; }

  void make_cluster() {
    const auto n = rng_.between(8, 24);
    for (int i = 0; i < n; ++i) {
      char name[16];
      std::snprintf(name, sizeof name, "n%02d", i);
      nodes_.push_back({name, static_cast<std::uint64_t>(rng_.between(2, 8)) * quantum_mb,
                        rng_.between(50, interval_ms - 50), 0, -1});
    }
  }

  void make_workload() {
    const auto jobs = rng_.between(3, 7);
    const int active_rounds = s_.rounds - s_.quiet_rounds;
    for (int i = 0; i < jobs; ++i) {
      sim_job j;
      const bool fixed = rng_.chance(35);
      j.quanta = static_cast<int>(rng_.between(1, 2));
      auto& w = j.item;
      w.id = core::job_id("j" + std::to_string(i));
      w.user = core::user_id("u" + std::to_string(rng_.between(1, 3)));
      w.class_name = fixed ? "fixed" : (rng_.chance(50) ? "normal" : "low");
      w.memory_mb = static_cast<std::uint64_t>(j.quanta) * quantum_mb;
      w.max_processes = static_cast<int>(fixed ? rng_.between(1, 4) : rng_.between(2, 20));
      w.items_total = 1'000'000;
      w.submitted_ms = i + 1;
      w.state = core::work_state::running;
      const std::string id = w.id.str();
      orch_.add_job(std::move(j));
      submit_round_[id] = static_cast<int>(rng_.between(1, std::max(1, active_rounds / 2)));
      if (rng_.chance(30)) end_round_[id] = static_cast<int>(rng_.between(active_rounds / 2, active_rounds));
    }
  }

  std::int64_t draw_delay(std::int64_t quiet_max, std::int64_t busy_max) {
    return rng_.between(50, nemesis_on() ? busy_max : quiet_max);
  }

  void schedule_heartbeats(std::int64_t start) {
    for (auto& n : nodes_) {
      std::int64_t at = start + n.phase_ms + rng_.between(-40, 40);
      if (at < n.silent_until_ms) continue;  // lost in the silence
      if (roll(move_kind::heartbeat_dropped)) {
        count(move_kind::heartbeat_dropped, n.name);
        continue;
      }
      if (roll(move_kind::heartbeat_late)) {
        const auto late = rng_.between(interval_ms / 2, interval_ms * 9 / 5);
        count(move_kind::heartbeat_late, n.name + " by " + std::to_string(late) + "ms");
        at += late;
      }
      queue_.push(at, rng_.raw(), heartbeat_event{n.name});
      if (roll(move_kind::heartbeat_duplicated)) {
        count(move_kind::heartbeat_duplicated, n.name);
        queue_.push(at + rng_.between(1, 300), rng_.raw(), heartbeat_event{n.name});
      }
    }
  }

  void nemesis_nodes() {
    if (roll(move_kind::node_flap)) {
      auto& n = any_node();
      const auto intervals = rng_.between(1, head_settings{}.node_stability + 3);
      n.silent_until_ms = std::max(n.silent_until_ms, now_ + intervals * interval_ms);
      count(move_kind::node_flap, n.name + " silent for " + std::to_string(intervals) + " intervals");
    }
    if (roll(move_kind::mass_loss)) {
      const auto percent = rng_.between(30, 60);
      const auto intervals = rng_.between(head_settings{}.node_stability + 1, head_settings{}.node_stability + 5);
      std::vector<std::size_t> order(nodes_.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), std::mt19937_64(rng_.raw()));
      const auto lost = std::max<std::size_t>(1, nodes_.size() * static_cast<std::size_t>(percent) / 100);
      std::string names;
      for (std::size_t i = 0; i < lost; ++i) {
        auto& n = nodes_[order[i]];
        n.silent_until_ms = std::max(n.silent_until_ms, now_ + intervals * interval_ms);
        names += " " + n.name;
      }
      count(move_kind::mass_loss, std::to_string(lost) + " nodes silent for " + std::to_string(intervals) +
                                      " intervals:" + names);
    }
    if (roll(move_kind::vary_off_on)) {
      auto& n = any_node();
      if (n.vary_on_round < 0) {
        n.vary_on_round = round_ + static_cast<int>(rng_.between(2, 6));
        head_.vary(n.name, true);
        count(move_kind::vary_off_on, n.name + " off until round " + std::to_string(n.vary_on_round));
      }
    }
    for (auto& n : nodes_)
      if (n.vary_on_round >= 0 && (n.vary_on_round <= round_ || !nemesis_on())) {
        n.vary_on_round = -1;
        head_.vary(n.name, false);
        note("admin: " + n.name + " varied on");
      }
    if (!nemesis_on())
      for (auto& n : nodes_) n.silent_until_ms = std::min(n.silent_until_ms, now_);
  }

  void workload() {
    for (const auto& [job, r] : submit_round_)
      if (r == round_) {
        orch_.submit(job);
        note("orchestrator: " + job + " submitted");
      }
    for (const auto& [job, r] : end_round_)
      if (r == round_ && orch_.jobs().at(job).active) {
        orch_.complete(job);
        note("orchestrator: " + job + " completed");
      }
  }

  void run_events_before(std::int64_t t) {
    for (;;) {
      if (!queue_.due_before(t)) break;
      auto [at, e] = queue_.pop();
      now_ = at;
      orch_.advance(at);
      if (auto* hb = std::get_if<heartbeat_event>(&e)) {
        const auto& n = *std::find_if(nodes_.begin(), nodes_.end(), [&](const sim_node& x) { return x.name == hb->node; });
        for (auto& line : head_.heartbeat(n.name, n.memory_mb, at)) note(line);
      } else if (auto* m = std::get_if<map_event>(&e)) {
        if (!head_.take_map(std::move(m->map))) note("head: a stale or repeated map dropped");
      } else if (auto* p = std::get_if<plan_event>(&e)) {
        const bool late = start_late_;
        std::string rogue;
        const auto draw = [this] {
          return sim_orchestrator::delays{draw_delay(interval_ms * 4 / 5, interval_ms * 5 / 2),
                                          draw_delay(interval_ms * 4 / 5, interval_ms * 5 / 2)};
        };
        if (orch_.receive(p->plan, p->cycle, p->epoch, at, draw, late, &rogue) && late && !rogue.empty()) {
          start_late_ = false;
          count(move_kind::late_start, rogue + " will start although withdrawn");
        }
      }
    }
  }

  void play_round(int r) {
    round_ = r;
    const std::int64_t start = (r - 1) * interval_ms;
    now_ = start;
    workload();
    nemesis_nodes();
    if (roll(move_kind::late_start)) start_late_ = true;
    schedule_heartbeats(start);
    // The orchestrator's map is built from its state at the time it publishes: play events up to then.
    const auto publish_at = start + rng_.between(interval_ms * 3 / 10, interval_ms * 7 / 10);
    run_events_before(publish_at);
    now_ = publish_at;
    orch_.advance(publish_at);
    publish_and_send(publish_at);
    const std::int64_t end = r * interval_ms;
    run_events_before(end);
    now_ = end;
    orch_.advance(end);
    for (auto& line : head_.tick(end)) note(line);
    if (roll(move_kind::scheduler_replaced)) {
      head_.replace_scheduler();
      count(move_kind::scheduler_replaced, "a fresh scheduler adopts the schedule of cycle " +
                                               std::to_string(head_.published_cycle()));
    }
    if (s_.takeovers && nemesis_on() && takeover_rng_.chance(move_percent[static_cast<std::size_t>(move_kind::takeover)])) {
      const auto age = static_cast<std::size_t>(takeover_rng_.between(0, 3));
      head_.take_over(age);
      last_takeover_round_ = r;
      count(move_kind::takeover, "epoch " + std::to_string(head_.epoch()) + " takes over from the schedule published " +
                                     std::to_string(age) + " before the last; it grants nothing until a map echoes it");
    }
    note_late_starts();
    const auto& plan = head_.round(end);
    full_round_.resize(static_cast<std::size_t>(r) + 1, 0);
    full_round_[static_cast<std::size_t>(r)] = head_.awaiting_echo() ? 0 : 1;
    if (std::getenv("SIMCHECK_DEBUG") != nullptr) {
      if (plan.counts.given + plan.counts.preempted + plan.counts.evicted > 0)
        note("core: given " + std::to_string(plan.counts.given) + ", preempted " +
             std::to_string(plan.counts.preempted) + ", evicted " + std::to_string(plan.counts.evicted));
      for (const auto& j : plan.jobs)
        for (const auto& sh : j.shares)
          if (sh.status != core::share_status::running)
            note("core: " + sh.id.str() + " " + core::to_string(sh.status) + " on " + sh.node.str() + ", its job counted " +
                 std::to_string(j.given) + " with " + std::to_string(j.shares.size()) + " shares");
    }
    result_.repairs += head_.scheduler().last_repairs().size();
    for (const auto& rep : head_.scheduler().last_repairs())
      note("core: " + rep.node.str() + " above its order (" + std::to_string(rep.held) + " of " +
           std::to_string(rep.order) + "), " + std::to_string(rep.shares.size()) + " shares taken back");
    if (head_.guard_refused_last()) {
      note("publication: the guard held the plan of cycle " + std::to_string(head_.cycle()) + " back");
      if (std::getenv("SIMCHECK_DEBUG") != nullptr) for (const auto& n : head_.overbooked()) describe_node(n);
      if (!std::all_of(head_.overbooked().begin(), head_.overbooked().end(), [&](const std::string& n) { return late_start_on(n); }))
      {
        ++result_.guard_refusals_unexplained;
        for (const auto& n : head_.overbooked()) describe_node(n);
      }
    }
    mark_seen();
    check(plan);
    result_.rounds_run = r;
    if (!nemesis_on())
      result_.quiet_changes.push_back({plan.counts.given, plan.counts.preempted, plan.counts.evicted});
    if (roll(move_kind::plan_lost)) {
      count(move_kind::plan_lost, "cycle " + std::to_string(head_.published_cycle()));
    } else {
      queue_.push(end + rng_.between(10, 300), rng_.raw(), plan_event{head_.published(), head_.published_cycle(), head_.epoch()});
    }
  }

  void publish_and_send(std::int64_t at) {
    auto m = orch_.publish(at);
    auto deliver_at = at + rng_.between(20, 250);
    if (roll(move_kind::map_lost)) {
      count(move_kind::map_lost, "map " + std::to_string(m.seq));
      return;
    }
    if (roll(move_kind::map_reordered)) {
      deliver_at += rng_.between(interval_ms, interval_ms * 2);
      count(move_kind::map_reordered, "map " + std::to_string(m.seq) + " arrives at t=" + std::to_string(deliver_at));
    }
    if (roll(move_kind::map_repeated)) {
      count(move_kind::map_repeated, "map " + std::to_string(m.seq));
      queue_.push(deliver_at + rng_.between(100, interval_ms * 2), rng_.raw(), map_event{m});
    }
    queue_.push(deliver_at, rng_.raw(), map_event{std::move(m)});
  }

  // A process the orchestrator started late (after the RM withdrew its share) ran on the node in the last few
  // rounds: a map delayed or reordered may still show it to the RM after it ended.
  bool late_start_on(const std::string& node) const {
    auto it = late_start_round_.find(node);
    return it != late_start_round_.end() && round_ - it->second <= 5;
  }
  void note_late_starts() {
    for (const auto& [share, p] : orch_.processes())
      if (p.rogue) late_start_round_[p.node] = round_;
  }

  // The rounds after `round` up to this one in which the head that plans now could repair a node: full ones (a
  // round that settles, as a new active's before the orchestrator's echo, stops nothing that runs), and none
  // before its takeover (it starts from a schedule that may be older than its predecessor's repair). 0 while
  // this round settles.
  int repair_rounds_since(int round) const {
    if (full_round_[static_cast<std::size_t>(round_)] == 0) return 0;
    int n = 0;
    for (int r = std::max(round, last_takeover_round_) + 1; r <= round_; ++r) n += full_round_[static_cast<std::size_t>(r)];
    return n;
  }

  // The processes of the map the round applied are known to the RM from now on.
  void mark_seen() {
    const auto& m = head_.applied_map();
    if (!m) return;
    for (const auto& [id, item] : m->work)
      for (const auto& p : item.processes) {
        auto it = orch_.processes().find(p.id.str());
        if (it != orch_.processes().end() && it->second.seen_round < 0) it->second.seen_round = round_;
      }
  }

  round_facts facts(const core::schedule_plan& plan) const {
    round_facts f;
    f.round = round_;
    for (const auto& n : nodes_) {
      node_fact nf{n.name, static_cast<int>(n.memory_mb / quantum_mb), head_.down(n.name), head_.varied_off(n.name)};
      for (const auto& [share, p] : orch_.processes()) {
        if (p.node != n.name || !p.rogue) continue;
        nf.rogue_process = true;
        nf.repair_due = nf.repair_due || (p.seen_round >= 0 && repair_rounds_since(p.seen_round) >= 2);
      }
      f.nodes.push_back(nf);
    }
    for (const auto& [share, p] : orch_.processes()) f.processes.push_back({share, p.node, p.quanta, p.seen_round >= 0, p.stop_at_ms.has_value()});
    f.plan = plan_facts(plan);
    return f;
  }

  // What the orchestrator and the plan hold on a node, for a failure's history.
  void describe_node(const std::string& node) {
    std::string truth = "truth on " + node + ":";
    for (const auto& [share, p] : orch_.processes())
      if (p.node == node)
        truth += " " + share + "(" + std::to_string(p.quanta) + "q" + (p.rogue ? ",rogue" : "") +
                 (p.stop_at_ms ? ",stopping" : "") + (p.seen_round >= 0 ? ",seen@" + std::to_string(p.seen_round) : "") + ")";
    for (const auto& [share, p] : orch_.pending())
      if (p.node == node) truth += " pending:" + share + (p.withdrawn ? "(withdrawn)" : "");
    note(truth);
    std::string plan = "plan on " + node + ":";
    for (const auto& j : head_.scheduler().view().machines)
      if (j.name.str() == node) {
        plan += std::string(" [") + core::to_string(j.state) + " order " + std::to_string(j.quanta) + "]";
        for (const auto& h : j.shares)
          plan += " " + h.share.id.str() + "(" + std::to_string(h.share.quanta) + "q," + core::to_string(h.share.status) + ")";
      }
    note(plan);
  }

  void fail(violation v) {
    if (!v.node.empty()) describe_node(v.node);
    note("FAILED " + v.rule + " on " + v.node + ": " + v.detail);
    result_.failure = std::move(v);
  }

  void check(const core::schedule_plan& plan) {
    auto found = checker_.check(facts(plan));
    if (!found.empty()) fail(found.front());
  }

  // Quiet rounds are over: the cluster must have settled.
  void check_convergence() {
    std::map<std::string, int> held;
    for (const auto& [share, p] : orch_.processes()) held[p.node] += p.quanta;
    for (const auto& n : nodes_)
      if (held[n.name] > static_cast<int>(n.memory_mb / quantum_mb))
        return fail({"no_convergence", round_, n.name,
                     "still above its order after the quiet rounds: " + std::to_string(held[n.name]) + " quanta"});
    const auto& plan = head_.published();
    if (plan.counts.given + plan.counts.preempted + plan.counts.evicted > 0)
      return fail({"no_convergence", round_, "", "the last quiet round still gave, preempted or evicted"});
    for (const auto& j : plan.jobs)
      for (const auto& sh : j.shares)
        if (sh.status != core::share_status::running || orch_.processes().count(sh.id.str()) == 0)
          return fail({"no_convergence", round_, sh.node.str(),
                       "share " + sh.id.str() + " is " + core::to_string(sh.status) + " after the quiet rounds"});
  }

  run_settings s_;
  sim_random rng_;
  sim_random takeover_rng_;
  sim_head head_;
  sim_orchestrator orch_;
  round_checker checker_;
  sim_history history_;
  event_queue queue_;
  std::vector<sim_node> nodes_;
  std::map<std::string, int> submit_round_;
  std::map<std::string, int> end_round_;
  std::map<std::string, int> late_start_round_;  // node -> the last round a late start ran there
  std::vector<char> full_round_;                  // per round: it was not a settling one
  int last_takeover_round_ = 0;
  run_result result_;
  int round_ = 0;
  std::int64_t now_ = 0;
  bool start_late_ = false;
};

}  // namespace

run_result run_seed(const run_settings& s) { return run(s).play(); }

}  // namespace rmbus::simcheck
