// work_map: snapshot + edit (diff / apply) and the per-process events of a changed work item.
#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "core/work_map.hpp"

using namespace rmbus::core;

namespace {

process_report proc(const std::string& share, const std::string& node, process_state st, std::int64_t init_ms = 0,
                    std::int64_t run_ms = 0) {
  process_report p;
  p.id = share_id(share);
  p.node = machine_id(node);
  p.state = st;
  p.init_ms = init_ms;
  p.run_ms = run_ms;
  return p;
}

work_item item(const std::string& id, const std::string& user = "alice") {
  work_item w;
  w.id = job_id(id);
  w.user = user_id(user);
  w.class_name = "normal";
  w.memory_mb = 4096;
  w.items_total = 100;
  return w;
}

work_map map_of(std::initializer_list<work_item> items) {
  work_map m;
  for (const auto& w : items) m.emplace(w.id, w);
  return m;
}

// A random work map over a small id space, so that two maps share ids often.
work_map random_map(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  work_map m;
  const int n = pick(0, 12);
  for (int i = 0; i < n; ++i) {
    work_item w = item("j" + std::to_string(pick(0, 15)), "u" + std::to_string(pick(0, 3)));
    w.kind = static_cast<work_kind>(pick(0, 3));
    w.state = static_cast<work_state>(pick(0, 3));
    w.memory_mb = static_cast<std::uint64_t>(pick(1, 4)) * 1024;
    w.items_done = pick(0, 100);
    w.item_ms = pick(0, 3) * 1000;
    const int np = pick(0, 4);
    for (int k = 0; k < np; ++k) {
      w.processes.push_back(proc("s" + std::to_string(pick(0, 6)), "n" + std::to_string(pick(0, 3)),
                                 static_cast<process_state>(pick(0, 3)), pick(0, 2) * 500, pick(0, 2) * 700));
    }
    m.insert_or_assign(w.id, w);
  }
  return m;
}

// b as a small edit of a: the realistic case (most items unchanged).
work_map mutate(work_map a, std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (auto it = a.begin(); it != a.end();) {
    const int r = pick(0, 9);
    if (r == 0) {
      it = a.erase(it);
      continue;
    }
    if (r == 1) it->second.items_done += 1;
    if (r == 2 && !it->second.processes.empty()) it->second.processes.front().state = process_state::ended;
    ++it;
  }
  if (pick(0, 1) == 1) {
    work_item w = item("k" + std::to_string(pick(0, 9)));
    a.insert_or_assign(w.id, w);
  }
  return a;
}

}  // namespace

TEST_CASE("diff: added, changed and removed work, each sorted by id") {
  work_item a = item("a"), b = item("b"), c = item("c"), d = item("d");
  work_map before = map_of({a, b, c});
  work_item b2 = b;
  b2.items_done = 10;  // changed
  work_map after = map_of({b2, c, d});

  const work_edit e = diff(before, after);
  REQUIRE(e.added.size() == 1);
  CHECK(e.added[0].id == job_id("d"));
  REQUIRE(e.changed.size() == 1);
  CHECK(e.changed[0] == b2);  // the new value travels in the edit
  CHECK(e.removed == std::vector<job_id>{job_id("a")});
  CHECK(apply(before, e) == after);
}

TEST_CASE("diff of a map with itself is empty: diff from empty adds everything in id order") {
  work_map m = map_of({item("z"), item("a"), item("m")});
  CHECK(diff(m, m).empty());
  const auto e = diff(work_map{}, m);
  REQUIRE(e.added.size() == 3);
  CHECK(e.added[0].id == job_id("a"));
  CHECK(e.added[1].id == job_id("m"));
  CHECK(e.added[2].id == job_id("z"));
  CHECK(diff(m, work_map{}).removed == std::vector<job_id>{job_id("a"), job_id("m"), job_id("z")});
}

TEST_CASE("process events: appeared, state changed with times, ended, vanished") {
  work_item before = item("j1");
  before.processes = {proc("s3", "n1", process_state::initializing), proc("s1", "n1", process_state::running, 500, 100),
                      proc("s2", "n2", process_state::running, 400, 50)};
  work_item after = item("j1");
  after.processes = {proc("s1", "n1", process_state::running, 500, 900),  // investment grew
                     proc("s3", "n1", process_state::running, 7000, 0),   // finished initializing
                     proc("s4", "n3", process_state::starting)};          // new; s2 vanished
  const auto ev = process_events(before, after);
  REQUIRE(ev.size() == 4);
  // sorted by share id: s1, s2, s3, s4
  CHECK(ev[0].share == share_id("s1"));
  CHECK(ev[0].kind == process_event_kind::state_changed);
  CHECK(ev[0].run_ms == 900);
  CHECK(ev[1].share == share_id("s2"));
  CHECK(ev[1].kind == process_event_kind::vanished);
  CHECK(ev[1].node == machine_id("n2"));
  CHECK(ev[1].from == process_state::running);
  CHECK(ev[2].share == share_id("s3"));
  CHECK(ev[2].kind == process_event_kind::state_changed);
  CHECK(ev[2].from == process_state::initializing);
  CHECK(ev[2].to == process_state::running);
  CHECK(ev[2].init_ms == 7000);
  CHECK(ev[3].share == share_id("s4"));
  CHECK(ev[3].kind == process_event_kind::appeared);
  CHECK(ev[3].node == machine_id("n3"));

  work_item ended = after;
  ended.processes[0].state = process_state::ended;
  const auto ev2 = process_events(after, ended);
  REQUIRE(ev2.size() == 1);
  CHECK(ev2[0].kind == process_event_kind::ended);
  CHECK(ev2[0].from == process_state::running);
  CHECK(ev2[0].to == process_state::ended);
  // Already ended, then gone from the map: reported once (when it ended), not again.
  work_item gone = ended;
  gone.processes.erase(gone.processes.begin());
  CHECK(process_events(ended, gone).empty());
}

TEST_CASE("process events of an edit: added work recovers its live processes, removed work gives none") {
  work_item a = item("a");
  a.processes = {proc("s1", "n1", process_state::running)};
  work_item gone = item("g");
  gone.processes = {proc("s9", "n1", process_state::running)};
  work_map before = map_of({a, gone});

  work_item a2 = a;
  a2.processes.push_back(proc("s2", "n2", process_state::starting));
  work_item b = item("b");  // recovered after a restart: a process already running, one already ended
  b.processes = {proc("s7", "n4", process_state::running, 3000, 100), proc("s8", "n4", process_state::ended)};
  work_map after = map_of({a2, b});

  const auto ev = process_events(before, diff(before, after));
  REQUIRE(ev.size() == 2);
  // job a then job b (job id order)
  CHECK(ev[0].job == job_id("a"));
  CHECK(ev[0].share == share_id("s2"));
  CHECK(ev[0].kind == process_event_kind::appeared);
  CHECK(ev[1].job == job_id("b"));
  CHECK(ev[1].share == share_id("s7"));
  CHECK(ev[1].kind == process_event_kind::appeared);
  CHECK(ev[1].init_ms == 3000);
}

TEST_CASE("a duplicated share id in one item: the later entry wins") {
  work_item before = item("j");
  before.processes = {proc("s1", "n1", process_state::running)};
  work_item after = item("j");
  after.processes = {proc("s1", "n1", process_state::running), proc("s1", "n1", process_state::ended)};
  const auto ev = process_events(before, after);
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].kind == process_event_kind::ended);
}

TEST_CASE("property: apply(a, diff(a, b)) == b and diff(a, a) is empty, over random pairs (seeded)") {
  std::mt19937 rng(20261122);
  int nonempty_edits = 0;
  for (int i = 0; i < 600; ++i) {
    CAPTURE(i);
    const work_map a = random_map(rng);
    const work_map b = (i % 2 == 0) ? random_map(rng) : mutate(a, rng);
    const work_edit e = diff(a, b);
    REQUIRE(apply(a, e) == b);
    REQUIRE(diff(a, a).empty());
    REQUIRE(diff(b, b).empty());
    // Every id appears at most once across the edit, and the lists are sorted.
    for (std::size_t k = 1; k < e.added.size(); ++k) REQUIRE(e.added[k - 1].id < e.added[k].id);
    for (std::size_t k = 1; k < e.changed.size(); ++k) REQUIRE(e.changed[k - 1].id < e.changed[k].id);
    for (std::size_t k = 1; k < e.removed.size(); ++k) REQUIRE(e.removed[k - 1] < e.removed[k]);
    // The events of an edit are deterministic and sorted by job, then share.
    const auto ev = process_events(a, e);
    REQUIRE(ev == process_events(a, e));
    for (std::size_t k = 1; k < ev.size(); ++k) {
      REQUIRE((ev[k - 1].job < ev[k].job || (ev[k - 1].job == ev[k].job && ev[k - 1].share < ev[k].share)));
    }
    if (!e.empty()) ++nonempty_edits;
  }
  CHECK(nonempty_edits > 400);  // the generator really produces different maps
}
