// The pools' work slices sent as changes (actors/work_slicer.hpp) and kept by each scheduler
// (actors/slice_chain.hpp), against full slices: on the same sequence of orchestrator maps (changes applied
// as deltas and as full maps, the orchestrator starting what each schedule grants), the map each scheduler
// holds and the plans it makes are the same as those of a scheduler given the whole slice every round; a lost
// slice is detected and a full one recovers from it; a fresh scheduler's first change is a gap.
#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "actors/internal.hpp"
#include "actors/slice_chain.hpp"
#include "actors/work_slicer.hpp"
#include "config/loader.hpp"
#include "core/nodepool_scheduler.hpp"

using namespace rmbus;
using namespace rmbus::actors;
namespace msg = rmbus::messages;

namespace {

const char* config_text = R"toml(
[scheduling]
quantum = "1G"

[[nodepool]]
name = "alpha"
nodes = ["a1", "a2", "a3"]

[[nodepool]]
name = "beta"
nodes = ["b1", "b2"]

[[class]]
name = "fixed-a"
policy = "FIXED_SHARE"
nodepool = "alpha"
priority = 5
default = true

[[class]]
name = "fixed-b"
policy = "FIXED_SHARE"
nodepool = "beta"
priority = 5

[[class]]
name = "normal"
policy = "FAIR_SHARE"
nodepool = "alpha"
priority = 10
default = true

[[class]]
name = "batch-b"
policy = "FAIR_SHARE"
nodepool = "beta"
priority = 10
)toml";

const std::string& pool_of_node(const std::string& node) {
  static const std::string alpha = "alpha", beta = "beta", none;
  if (node.empty()) return none;
  return node[0] == 'b' ? beta : alpha;
}

core::work_map snapshot_of(const msg::work_slice& s) {
  core::work_map out;
  for (const auto& w : s.work) {
    auto item = to_core(w);
    auto id = item.id;
    out.emplace(std::move(id), std::move(item));
  }
  return out;
}

core::nodepool_scheduler make_scheduler(const config::rm_config& cfg, const std::string& pool) {
  core::nodepool_scheduler s(pool, cfg.scheduling, "p");
  for (const auto& n :
       pool == "alpha" ? std::vector<std::string>{"a1", "a2", "a3"} : std::vector<std::string>{"b1", "b2"})
    s.update_machine({core::machine_id{n}, "", 8 * 1024, false});
  return s;
}

// One pool's two schedulers: one fed the changes through a slice_chain, one fed a full slice every round.
struct pool_pair {
  core::nodepool_scheduler incremental;
  core::nodepool_scheduler whole;
  slice_chain chain;
};

// The orchestrator: starts a process for each new share, drops preempted and evicted ones. Returns the ids
// it changed.
std::vector<std::string> follow(workmap_chain::item_map& items, const core::schedule_plan& plan) {
  std::vector<std::string> changed;
  for (const auto& j : plan.jobs) {
    auto it = items.find(j.id.str());
    if (it == items.end()) continue;
    auto& procs = it->second.processes;
    bool touched = false;
    for (const auto& sh : j.shares) {
      auto p = std::find_if(procs.begin(), procs.end(), [&](const auto& x) { return x.id == sh.id.str(); });
      if (sh.status == core::share_status::new_share && p == procs.end()) {
        procs.push_back({sh.id.str(), sh.node.str(), msg::process_state::running, 10, 10, std::nullopt});
        touched = true;
      } else if ((sh.status == core::share_status::preempt || sh.status == core::share_status::evict) &&
                 p != procs.end()) {
        procs.erase(p);
        touched = true;
      }
    }
    if (touched) changed.push_back(j.id.str());
  }
  return changed;
}

}  // namespace

TEST_CASE("changed-only slices give each pool the same work map and the same plans as full slices") {
  const auto cfg = config::parse_native(config_text, "test.toml");
  const std::vector<std::string> pools{"alpha", "beta"};
  work_slicer changes, reference;
  changes.configure(cfg.scheduling, pools);
  reference.configure(cfg.scheduling, pools);
  std::map<std::string, pool_pair> pp;
  for (const auto& p : pools) pp.emplace(p, pool_pair{make_scheduler(cfg, p), make_scheduler(cfg, p), {}});

  const std::vector<std::string> classes{"normal", "fixed-a", "fixed-b", "batch-b", "", "no-such-class"};
  std::mt19937 rng(GENERATE(1u, 2u, 3u, 4u));
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  workmap_chain::item_map items;
  int next_id = 0;
  std::size_t routed_changes = 0, routed_reference = 0, given = 0;
  for (int round = 1; round <= 40; ++round) {
    INFO("round " << round);
    // The orchestrator's changes, as a delta (the ids named) or as a full map (compared).
    const bool as_delta = pick(0, 2) > 0;
    auto before = items;
    std::vector<std::string> touched;
    for (int k = pick(0, 4); k > 0; --k) {
      const int what = pick(0, 9);
      if (what < 4 || items.empty()) {  // arrival
        msg::work_item w;
        w.id = "j" + std::to_string(100 + next_id++);
        w.user = "u" + std::to_string(pick(1, 3));
        w.class_name = classes[static_cast<std::size_t>(pick(0, static_cast<int>(classes.size()) - 1))];
        w.kind = w.class_name.rfind("fixed", 0) == 0 ? msg::work_kind::service : msg::work_kind::job;
        w.memory_mb = static_cast<std::uint64_t>(pick(1, 3)) * 1024;
        w.submitted_ms = static_cast<std::uint64_t>(1000 + round);
        w.max_processes = static_cast<std::uint64_t>(pick(1, 6));
        // Now and then work already running on a node the pool has not heard of: refused until it comes.
        if (pick(0, 9) == 0)
          w.processes.push_back({"ext-" + w.id, "a5", msg::process_state::running, 5, 5, std::nullopt});
        touched.push_back(w.id);
        items[w.id] = w;
        continue;
      }
      auto it = items.begin();
      std::advance(it, pick(0, static_cast<int>(items.size()) - 1));
      touched.push_back(it->first);
      if (what < 6)
        items.erase(it);  // gone from the map
      else if (what < 8)
        it->second.state = msg::work_state::completed;  // completed, still listed
      else
        it->second.max_processes = static_cast<std::uint64_t>(pick(1, 6));
    }
    if (as_delta) {
      for (const auto& id : touched) changes.touch(id);
    } else {
      changes.compare(before, items);
    }
    reference.resync_all();  // the old way: every pool gets every item of its slice every round
    // Machine events, the same for both schedulers of a pool: a node down and back, the unknown node coming.
    auto both = [&](const std::string& pool, auto call) {
      call(pp.at(pool).incremental);
      call(pp.at(pool).whole);
    };
    if (round % 7 == 0) both("alpha", [](auto& s) { s.machine_down(core::machine_id{"a2"}); });
    if (round % 7 == 3)
      both("alpha", [](auto& s) { s.update_machine({core::machine_id{"a2"}, "", 8 * 1024, false}); });
    if (round == 20)
      both("alpha", [](auto& s) { s.update_machine({core::machine_id{"a5"}, "", 8 * 1024, false}); });
    if (round % 9 == 4) both("beta", [](auto& s) { s.machine_down(core::machine_id{"b1"}); });
    if (round % 9 == 6)
      both("beta", [](auto& s) { s.update_machine({core::machine_id{"b1"}, "", 8 * 1024, false}); });

    auto cut = changes.cut(items, pool_of_node);
    auto full = reference.cut(items, pool_of_node);
    routed_changes += changes.last_cut_routed();
    routed_reference += reference.last_cut_routed();
    CHECK(cut.refused == full.refused);
    const auto np = changes.non_preemptable_work(), np_full = reference.non_preemptable_work();
    REQUIRE(np.size() == np_full.size());
    for (std::size_t i = 0; i < np.size(); ++i) CHECK(np[i].job == np_full[i].job);
    std::vector<std::string> followed;
    for (const auto& p : pools) {
      INFO("pool " << p);
      const auto& slice = cut.slices.at(p);
      const auto& whole = full.slices.at(p);
      CHECK(whole.full());
      CHECK(slice.full() == (round == 1));
      CHECK(slice.foreign_processes == whole.foreign_processes);
      auto& x = pp.at(p);
      REQUIRE(x.chain.take("rm:diff", slice).what == slice_outcome::applied);
      const auto whole_map = snapshot_of(whole);
      REQUIRE(x.chain.work() == whole_map);
      core::round_input in;
      in.now_ms = 10'000 + round;
      // As the scheduler actor: a full slice is applied whole, a change as the ids it names.
      if (slice.full()) {
        x.incremental.apply_work(x.chain.work());
      } else {
        std::vector<core::job_id> named;
        for (const auto& w : slice.work) named.emplace_back(w.id);
        for (const auto& id : slice.removed) named.emplace_back(id);
        x.incremental.apply_changes(x.chain.work(), named);
      }
      x.whole.apply_work(whole_map);
      const auto a = x.incremental.schedule(in);
      const auto b = x.whole.schedule(in);
      REQUIRE(a == b);
      REQUIRE(x.incremental.nonpreemptable_mb_by_user() == x.whole.nonpreemptable_mb_by_user());
      given += static_cast<std::size_t>(a.counts.given);

      for (auto& id : follow(items, a)) followed.push_back(id);
    }
    // What the orchestrator started and stopped comes back in the next map, as a delta.
    for (const auto& id : followed) changes.touch(id);
  }
  // The point of it: after the first round, each round routed only what changed.
  CHECK(routed_changes * 3 < routed_reference);
  CHECK(given > 20);  // the schedules did something: shares were given, processes started
}

TEST_CASE("a lost change slice is detected, and a full slice recovers the pool's map") {
  const auto cfg = config::parse_native(config_text, "test.toml");
  work_slicer slicer;
  slicer.configure(cfg.scheduling, {"alpha", "beta"});
  workmap_chain::item_map items;
  auto add = [&](const std::string& id, const std::string& cls) {
    msg::work_item w;
    w.id = id;
    w.user = "u1";
    w.class_name = cls;
    w.memory_mb = 1024;
    items[id] = w;
    slicer.touch(id);
  };
  slice_chain alpha;
  add("j1", "normal");
  add("j2", "batch-b");
  auto first = slicer.cut(items, pool_of_node);
  REQUIRE(alpha.take("rm:diff", first.slices.at("alpha")).what == slice_outcome::applied);
  CHECK(alpha.work().size() == 1);

  add("j3", "normal");
  auto lost = slicer.cut(items, pool_of_node);  // alpha's slice never arrives
  CHECK(lost.slices.at("alpha").work.size() == 1);
  items.erase("j1");
  slicer.touch("j1");
  auto next = slicer.cut(items, pool_of_node);
  const auto& change = next.slices.at("alpha");
  CHECK(change.removed == std::vector<std::string>{"j1"});
  auto v = alpha.take("rm:diff", change);
  CHECK(v.what == slice_outcome::gap);
  CHECK(v.reason.find("the last slice applied is " + std::to_string(first.slices.at("alpha").seq)) !=
        std::string::npos);
  CHECK_FALSE(alpha.in_step());
  CHECK(alpha.work().size() == 1);  // left as it was: j1 only, j3 never heard of

  // The scheduler asks (rm.internal.worksync); differencing answers in the middle of the round.
  slicer.resync("alpha");
  auto now = slicer.full_slice("alpha", items);
  CHECK(now.full());
  CHECK(now.seq > change.seq);
  REQUIRE(alpha.take("rm:diff", now).what == slice_outcome::applied);
  REQUIRE(alpha.work().size() == 1);
  CHECK(alpha.work().begin()->first.str() == "j3");
  // And the chain goes on from the full slice.
  add("j4", "normal");
  auto after = slicer.cut(items, pool_of_node);
  CHECK_FALSE(after.slices.at("alpha").full());
  CHECK(after.slices.at("alpha").base_seq == now.seq);
  REQUIRE(alpha.take("rm:diff", after.slices.at("alpha")).what == slice_outcome::applied);
  CHECK(alpha.work().size() == 2);

  // A request answered by the next round instead: that round's slice is full.
  slicer.resync("alpha");
  add("j5", "batch-b");
  auto full_next = slicer.cut(items, pool_of_node);
  CHECK(full_next.slices.at("alpha").full());
  CHECK(full_next.slices.at("alpha").work.size() == 2);
  CHECK_FALSE(full_next.slices.at("beta").full());
}

TEST_CASE("a fresh scheduler's first change slice is a gap, and so is one from another sender") {
  const auto cfg = config::parse_native(config_text, "test.toml");
  work_slicer slicer;
  slicer.configure(cfg.scheduling, {"alpha", "beta"});
  workmap_chain::item_map items;
  msg::work_item w;
  w.id = "j1";
  w.class_name = "normal";
  items[w.id] = w;
  slicer.touch("j1");
  slice_chain first;
  REQUIRE(first.take("rm:diff", slicer.cut(items, pool_of_node).slices.at("alpha")).what ==
          slice_outcome::applied);
  items["j1"].max_processes = 3;
  slicer.touch("j1");
  const auto change = slicer.cut(items, pool_of_node).slices.at("alpha");

  slice_chain replacement;  // a replaced scheduler never had the base
  auto v = replacement.take("rm:diff", change);
  CHECK(v.what == slice_outcome::gap);
  CHECK(replacement.work().empty());
  // A change from another differencing actor (another process took over) does not build on this chain.
  auto other = first.take("rm2:diff", change);
  CHECK(other.what == slice_outcome::gap);
  CHECK(other.reason.find("rm2:diff") != std::string::npos);
  CHECK(first.work().at(core::job_id{"j1"}).max_processes == 0);  // nothing of it applied
}

TEST_CASE("a reconfiguration makes every pool's next slice full, numbered after the last") {
  const auto cfg = config::parse_native(config_text, "test.toml");
  work_slicer slicer;
  slicer.configure(cfg.scheduling, {"alpha", "beta"});
  workmap_chain::item_map items;
  msg::work_item w;
  w.id = "j1";
  items[w.id] = w;
  slicer.touch("j1");
  const auto a = slicer.cut(items, pool_of_node);
  const auto b = slicer.cut(items, pool_of_node);
  CHECK(b.slices.at("alpha").work.empty());  // nothing changed: an empty change
  CHECK(b.slices.at("alpha").base_seq == a.slices.at("alpha").seq);
  slicer.configure(cfg.scheduling, {"alpha", "beta"});
  const auto c = slicer.cut(items, pool_of_node);
  CHECK(c.slices.at("alpha").full());
  CHECK(c.slices.at("alpha").work.size() == 1);
  CHECK(c.slices.at("alpha").seq > b.slices.at("alpha").seq);
}
