// rmbus-top's screen over hand-built messages: whole screens compared line for line, so a wrong number, a
// wrong order or a moved column fails.
#include <catch2/catch.hpp>
#include <sstream>

#include "tests/tools/top/top_fixtures.hpp"
#include "tools/top/render.hpp"

namespace msg = rmbus::messages;
using namespace rmbus::top;
using namespace rmbus::top::fixtures;

namespace {

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

// Two rounds of the fixture's schedule a second apart (the last at 10.0 s), its nodes, both pools' cycles
// (beta's of the round before: it did not answer round 42), an eviction, a preemption, a node going missing,
// a body the monitor could not decode, and the subscriber's counts.
monitor_model busy_cluster() {
  monitor_model m;
  m.on_state(schedule(), 9'000, "rmbus.77.1");
  m.on_state(schedule(), 10'000, "rmbus.77.1");
  m.on_nodes(two_pools(), 10'000);
  m.on_cycle(cycle("alpha", 42), 10'000);
  m.on_cycle(cycle("beta", 41), 10'000);
  m.on_event(preempt_event("j-alice", "j-alice.2"), 9'000);
  m.on_event({"node_missing", {{"node", "a3"}}}, 9'500);
  m.on_event(evict_event("svc", "svc.2"), 9'800);
  m.on_bad_message("rm.cycle: total_us: expected unsigned integer, got string", 10'000, false);
  m.set_bus({120, 2, 5, 1, 0, {{"rm.cycle", 40}, {"rm.events", 20}, {"rm.nodes", 30}, {"rm.state", 30}}});
  return m;
}

}  // namespace

TEST_CASE("the whole picture, as --once prints it") {
  const auto m = busy_cluster();
  render_options o;
  o.now_ms = 12'500;
  o.width = 130;
  o.endpoint = "tcp://rm-host:5561";
  // Header: rm.state arrived at 10.0 s, now 12.5 s; bad messages 0 (subscriber) + 1 (undecodable here).
  // Pools: alpha 3 nodes, a1 and a2 up (8 + 8 quanta, 2 + 0 free), a3 missing; beta: b2 up (16, 5 free),
  // b1 down, b3 varied off.
  // Classes: normal given 1 + 4 = 5 < min(demand 17, fair 8), and alice 1 < min(7, 4): below fair share;
  // bob 4 = 4 is not. The refused job apart, with its reason (and counted in the header). Jobs: pending, then
  // scheduled by id; alice's preemption at 9.0 s (3.5 s ago),
  // carol's eviction at 9.8 s (2.7 s ago). Events newest first. beta's rm.cycle is of round 41: behind.
  const std::string expected =
      R"(rmbus-top  cycle 42  rm.state 2.5s ago  jobs 5  REFUSED 1  nodes 6  tcp://rm-host:5561  from rmbus.77.1
bus: 120 messages, 2 gaps (5 missing), 1 publisher restarts, 1 bad messages
topics: rm.cycle 40, rm.events 20, rm.nodes 30, rm.state 30

NODEPOOL              nodes    up   quanta     free missing  down   off quiesced blacklisted
alpha                     3     2       16        2       1     0     0        0           0
beta                      3     1       16        5       0     1     1        0           0

CLASS / USER          jobs active  quanta  given demand   fair
-                        1      0       0      0      0      0
  dave                   1      0       0      0      0      0
fixed                    1      1       2      1      1      0
  carol                  1      1       2      1      1      0
normal                   3      4       8      5     17      8  below fair share
  alice                  2      1       2      1      7      4  below fair share
  bob                    1      3       6      4     10      4

REFUSED: work the RM will not run as submitted, and why
  lost (user dave): Cannot find class gpu for the work

JOB                  USER       CLASS      STATUS    MB/proc active leaving given demand  NOTE
j-alice2             alice      normal     pending      2048      0       0     0      2  Waiting for preemptions.
j-alice              alice      normal     scheduled    2048      1       1     1      5  preempted 1, last 3.5s ago
j-bob                bob        normal     scheduled    2048      3       0     4     10
svc                  carol      fixed      scheduled    2048      1       1     1      1  evicted 1, last 2.7s ago

RECENT EVENTS, newest first (rm.events seen: evict 1, node_missing 1, preempt 1)
    2.5s ago  bad_message    received here: rm.cycle: total_us: expected unsigned integer, got string
    2.7s ago  evict          job=svc node=n1 reason=node down share=svc.2
    3.0s ago  node_missing   node=a3
    3.5s ago  preempt        job=j-alice node=n1 reason=fair share share=j-alice.2

LAST CYCLE        cycle  jobs nodes given preempted evicted how_much_us what_of_us preempt_us defrag_us total_us
alpha                42     5     2     1         1       1         120         45          7         3      200
beta                 41     5     2     1         1       1         120         45          7         3      200  behind
)";
  const auto s = render(m, o);
  CHECK(joined(s.lines) == expected);
  CHECK(s.jobs_total == 4);
  CHECK(s.jobs_first == 0);
  CHECK(s.jobs_shown == 4);
}

TEST_CASE("a short screen keeps the most important sections: each its first rows, then the rest in order") {
  const auto m = busy_cluster();
  render_options o;
  o.now_ms = 12'500;
  o.width = 130;
  o.endpoint = "tcp://rm-host:5561";
  o.height = 24;
  // 24 lines: header 3 -> 21 left. Pools: heading 2 + both rows = 4 -> 17. Classes: 2 + first 4 of 7 -> 11.
  // Refused: 2 + its row -> 8. Jobs: 2 + all 4 (fewer than its 6) -> 2. Events and cycle timings, the least
  // important, need 3 each and do not fit; the 2 left go to the classes, cut short.
  const std::string expected =
      R"(rmbus-top  cycle 42  rm.state 2.5s ago  jobs 5  REFUSED 1  nodes 6  tcp://rm-host:5561  from rmbus.77.1
bus: 120 messages, 2 gaps (5 missing), 1 publisher restarts, 1 bad messages
topics: rm.cycle 40, rm.events 20, rm.nodes 30, rm.state 30

NODEPOOL              nodes    up   quanta     free missing  down   off quiesced blacklisted
alpha                     3     2       16        2       1     0     0        0           0
beta                      3     1       16        5       0     1     1        0           0

CLASS / USER          jobs active  quanta  given demand   fair
-                        1      0       0      0      0      0
  dave                   1      0       0      0      0      0
fixed                    1      1       2      1      1      0
  carol                  1      1       2      1      1      0
normal                   3      4       8      5     17      8  below fair share
  ... 2 more

REFUSED: work the RM will not run as submitted, and why
  lost (user dave): Cannot find class gpu for the work

JOB                  USER       CLASS      STATUS    MB/proc active leaving given demand  NOTE
j-alice2             alice      normal     pending      2048      0       0     0      2  Waiting for preemptions.
j-alice              alice      normal     scheduled    2048      1       1     1      5  preempted 1, last 3.5s ago
j-bob                bob        normal     scheduled    2048      3       0     4     10
svc                  carol      fixed      scheduled    2048      1       1     1      1  evicted 1, last 2.7s ago
)";
  const auto s = render(m, o);
  CHECK(s.lines.size() == 24);
  CHECK(joined(s.lines) == expected);
  // 32 lines: the first rows of every section take 3 + 4 + 6 + 3 + 6 + (2 + all 4 events) + (2 + 2) = 32:
  // the classes stay cut short
  o.height = 32;
  const auto taller = render(m, o);
  REQUIRE(taller.lines.size() == 32);
  CHECK(taller.lines[11] == "fixed                    1      1       2      1      1      0");
  CHECK(taller.lines[12] == "  ... 4 more");
  CHECK(taller.lines[15] == "  lost (user dave): Cannot find class gpu for the work");
  CHECK(taller.lines[26] == "    3.0s ago  node_missing   node=a3");
  CHECK(taller.lines[27] ==
        "    3.5s ago  preempt        job=j-alice node=n1 reason=fair share share=j-alice.2");
  CHECK(taller.lines[31].rfind("beta ", 0) == 0);
  // A screen shorter than the header shows what of the header fits
  o.height = 2;
  CHECK(render(m, o).lines.size() == 2);
}

TEST_CASE("a long job list shows a window at the offset, says which jobs it shows, and scrolls") {
  msg::rm_state s;
  s.cycle = 5;
  for (int i = 0; i < 30; ++i) {
    const std::string id = (i < 10 ? "j0" : "j") + std::to_string(i);
    s.jobs.push_back(job(id, "u", "c", msg::job_status::scheduled, {msg::share_status::running}, 1, 1, 1));
  }
  monitor_model m;
  m.on_state(s, 0);
  msg::rm_nodes n;
  n.nodes = {{"n1", "p", "p", msg::node_state::up, 65536, 64, 34, 0}};
  m.on_nodes(n, 0);
  render_options o;
  o.height = 20;
  // 20 lines: header 3 -> 17; pools 2 + 1 -> 14; classes 2 + 2 (c, u) -> 10; jobs 2 + 6 -> 2; events and
  // cycles need 3 each: skipped; jobs take the 2 left: 8 rows, 7 jobs and the line saying which.
  auto screen = render(m, o);
  REQUIRE(screen.lines.size() == 20);
  CHECK(screen.jobs_total == 30);
  CHECK(screen.jobs_first == 0);
  CHECK(screen.jobs_shown == 7);
  CHECK(screen.lines[12].rfind("j00 ", 0) == 0);
  CHECK(screen.lines[18].rfind("j06 ", 0) == 0);
  CHECK(screen.lines[19] == "  -- jobs 1-7 of 30 (Up/Down, PgUp/PgDn, Home/End scroll) --");
  o.jobs_offset = 10;
  screen = render(m, o);
  CHECK(screen.jobs_first == 10);
  CHECK(screen.lines[12].rfind("j10 ", 0) == 0);
  CHECK(screen.lines[19] == "  -- jobs 11-17 of 30 (Up/Down, PgUp/PgDn, Home/End scroll) --");
  // past the end: the window stays full, ending at the last job
  o.jobs_offset = scroll_jobs(10, scroll_step::last, 7, 30);
  CHECK(o.jobs_offset == 29);
  screen = render(m, o);
  CHECK(screen.jobs_first == 23);
  CHECK(screen.lines[12].rfind("j23 ", 0) == 0);
  CHECK(screen.lines[18].rfind("j29 ", 0) == 0);
  CHECK(screen.lines[19] == "  -- jobs 24-30 of 30 (Up/Down, PgUp/PgDn, Home/End scroll) --");
}

TEST_CASE("scrolling the job list stays within it") {
  CHECK(scroll_jobs(0, scroll_step::line_up, 7, 30) == 0);
  CHECK(scroll_jobs(0, scroll_step::line_down, 7, 30) == 1);
  CHECK(scroll_jobs(29, scroll_step::line_down, 7, 30) == 29);
  CHECK(scroll_jobs(5, scroll_step::page_up, 7, 30) == 0);
  CHECK(scroll_jobs(23, scroll_step::page_up, 7, 30) == 16);
  CHECK(scroll_jobs(23, scroll_step::page_down, 7, 30) == 29);
  CHECK(scroll_jobs(3, scroll_step::page_down, 0, 30) == 4);  // a page is at least one line
  CHECK(scroll_jobs(17, scroll_step::first, 7, 30) == 0);
  CHECK(scroll_jobs(1000, scroll_step::line_up, 7, 30) == 28);  // an offset from a longer list is clamped
  CHECK(scroll_jobs(4, scroll_step::line_down, 7, 0) == 0);
}

TEST_CASE("started before the RM it says what it waits for, and fills in as the snapshots arrive") {
  monitor_model m;
  render_options o;
  o.endpoint = "tcp://127.0.0.1:5561";
  const std::string waiting = R"(rmbus-top  no rm.state yet  tcp://127.0.0.1:5561
bus: 0 messages, 0 gaps (0 missing), 0 publisher restarts, 0 bad messages
topics: none yet

waiting for the RM's first rm.state on tcp://127.0.0.1:5561

NODEPOOL              nodes    up   quanta     free missing  down   off quiesced blacklisted
  (waiting for rm.nodes)

RECENT EVENTS, newest first
  (none yet)

LAST CYCLE        cycle  jobs nodes given preempted evicted how_much_us what_of_us preempt_us defrag_us total_us
  (no rm.cycle yet)
)";
  CHECK(joined(render(m, o).lines) == waiting);
  // rm.state before any rm.nodes: classes and jobs shown, the pools still waiting
  msg::rm_state s;
  s.cycle = 3;
  s.jobs = {schedule().jobs[0]};
  m.on_state(s, 0);
  auto lines = render(m, o).lines;
  CHECK(lines[0] == "rmbus-top  cycle 3  rm.state 0.0s ago  jobs 1  tcp://127.0.0.1:5561");
  CHECK(lines[3].empty());
  CHECK(lines[4].rfind("NODEPOOL", 0) == 0);
  CHECK(lines[5] == "  (waiting for rm.nodes)");
  CHECK(lines[12] ==
        "j-bob                bob        normal     scheduled    2048      3       0     4     10");
  // then rm.nodes
  m.on_nodes(two_pools(), 0);
  lines = render(m, o).lines;
  CHECK(lines[0] == "rmbus-top  cycle 3  rm.state 0.0s ago  jobs 1  nodes 6  tcp://127.0.0.1:5561");
  CHECK(lines[5] ==
        "alpha                     3     2       16        2       1     0     0        0           0");
  // an RM with no work and no nodes yet is shown as such, not as waiting
  monitor_model idle;
  idle.on_state({}, 0);
  idle.on_nodes({}, 0);
  const auto idle_text = joined(render(idle, o).lines);
  CHECK(idle_text.find("waiting") == std::string::npos);
  CHECK(idle_text.find("\n  (no nodes)\n") != std::string::npos);
  CHECK(idle_text.find("\nCLASS / USER          jobs active  quanta  given demand   fair\n  (no jobs)\n") !=
        std::string::npos);
}

TEST_CASE("a silent RM is flagged stale in the header") {
  const auto m = busy_cluster();
  render_options o;
  // rounds came 1 s apart; 3.1 s after the last one is more than three of them
  o.now_ms = 13'100;
  CHECK(render(m, o).lines[0] ==
        "rmbus-top  cycle 42  rm.state 3.1s ago  STALE: rounds came every 1.0s  jobs 5  REFUSED 1  nodes 6  "
        "from "
        "rmbus.77.1");
}

TEST_CASE("narrow screens cut every line, names are cut to their column and made safe for a terminal") {
  auto s = schedule();
  s.jobs[0].id = "evil\x1b[2Jjob-\xc3\xa9";  // an escape sequence and a two-byte character
  s.jobs[0].user = "a-very-long-user-name";
  monitor_model m;
  m.on_state(s, 0);
  m.on_nodes(two_pools(), 0);
  m.on_event({"node_up", {{"node", "bell\x07"}}}, 0);
  render_options o;
  o.width = 40;
  const auto lines = render(m, o).lines;
  for (const auto& l : lines) {
    CHECK(l.size() <= 40);
    for (const char c : l) CHECK((c >= 0x20 && c < 0x7f));
  }
  // one '?' per character, so the columns after it stay where they belong
  CHECK(std::find(lines.begin(), lines.end(), "evil?[2Jjob-?        a-very-lo~ normal") != lines.end());
  CHECK(std::find(lines.begin(), lines.end(), "    0.0s ago  node_up        node=bell?") != lines.end());
}

TEST_CASE("ages read at a glance") {
  CHECK(format_age(0) == "0.0s");
  CHECK(format_age(2'549) == "2.5s");
  CHECK(format_age(59'999) == "59.9s");
  CHECK(format_age(60'000) == "1m00s");
  CHECK(format_age(245'000) == "4m05s");
  CHECK(format_age(3'600'000) == "1h00m");
  CHECK(format_age(11'220'000) == "3h07m");
  CHECK(format_age(-5) == "0.0s");  // a clock that stepped back is not shown as the future
}

TEST_CASE("share groups under their class, and reclaim deadlines in the job notes and the header") {
  monitor_model m;
  // sent at grouped_sent_at_ms on the RM's clock, arrived at 10.0 s here; bob lost a process at 9.0 s
  m.on_state(grouped_schedule(), 10'000, "rmbus.77.1", grouped_sent_at_ms);
  m.on_nodes(two_pools(), 10'000);
  m.on_event(preempt_event("j-bob", "j-bob.3"), 9'000);
  render_options o;
  o.now_ms = 10'500;
  o.width = 140;
  o.endpoint = "tcp://rm-host:5561";
  // Header: reclaiming 2 (j-ann) + 1 (j-bob's running share; his preempted one is leaving) = 3.
  // Classes: fixed has no group and reads as ever. normal = physics + bio + dan: jobs 3 + 1 + 1, active
  // 6 + 2 + 1, quanta 12 + 4 + 2, given 6 + 2 + 1, demand 11 + 4 + 3, fair 9 + 2 + 1; 9 < min(18, 12).
  // dan (no group) directly under it, then the groups by name: bio = bob (2 running of 2 quanta; given 2,
  // demand 4, fair 2); physics = ann (3 + 1 running: active 4, quanta 8, given 3 + 1, demand 8 + 1, fair
  // 6 + 1; 4 < min(9, 7)) + cat (running + new: 2, quanta 4, given 2, demand 2, fair 2); 6 < min(11, 9).
  // Jobs: j-ann's soonest deadline 1.5 s after sending = 11.5 s here, 1.0 s from now; j-bob's was 0.2 s
  // before sending: due, then his preemption 1.5 s ago.
  const std::string expected =
      R"(rmbus-top  cycle 43  rm.state 0.5s ago  jobs 6  reclaiming 3  nodes 6  tcp://rm-host:5561  from rmbus.77.1
bus: 0 messages, 0 gaps (0 missing), 0 publisher restarts, 0 bad messages
topics: none yet

NODEPOOL              nodes    up   quanta     free missing  down   off quiesced blacklisted
alpha                     3     2       16        2       1     0     0        0           0
beta                      3     1       16        5       0     1     1        0           0

CLASS / USER          jobs active  quanta  given demand   fair
fixed                    1      1       2      1      1      0
  carol                  1      1       2      1      1      0
normal                   5      9      18      9     18     12  below fair share
  dan                    1      1       2      1      3      1
  group bio              1      2       4      2      4      2
    bob                  1      2       4      2      4      2
  group physics          3      6      12      6     11      9  below fair share
    ann                  2      4       8      4      9      7  below fair share
    cat                  1      2       4      2      2      2

JOB                  USER       CLASS      STATUS    MB/proc active leaving given demand  NOTE
j-ann                ann        normal     scheduled    2048      3       0     3      8  reclaim 2 in 1.0s
j-ann2               ann        normal     scheduled    2048      1       0     1      1
j-bob                bob        normal     scheduled    2048      2       1     2      4  reclaim 1 due; preempted 1, last 1.5s ago
j-cat                cat        normal     scheduled    2048      2       0     2      2
j-dan                dan        normal     scheduled    2048      1       0     1      3
svc                  carol      fixed      scheduled    2048      1       0     1      1

RECENT EVENTS, newest first (rm.events seen: preempt 1)
    1.5s ago  preempt        job=j-bob node=n1 reason=fair share share=j-bob.3

LAST CYCLE        cycle  jobs nodes given preempted evicted how_much_us what_of_us preempt_us defrag_us total_us
  (no rm.cycle yet)
)";
  CHECK(joined(render(m, o).lines) == expected);
  // 1.4 s on, j-ann's deadline (11.5 s) has passed too
  o.now_ms = 11'900;
  auto lines = render(m, o).lines;
  CHECK(std::find(lines.begin(), lines.end(),
                  "j-ann                ann        normal     scheduled    2048      3       0     3      8  "
                  "reclaim 2 due") != lines.end());
  // a deadline 75 s away reads in minutes
  auto far = grouped_schedule();
  far.jobs[0].shares[1].reclaim_at_ms = grouped_sent_at_ms + 75'000;
  far.jobs[0].shares[0].reclaim_at_ms = grouped_sent_at_ms + 80'000;
  m.on_state(far, 10'000, "rmbus.77.1", grouped_sent_at_ms);
  o.now_ms = 10'000;
  lines = render(m, o).lines;
  CHECK(std::find(lines.begin(), lines.end(),
                  "j-ann                ann        normal     scheduled    2048      3       0     3      8  "
                  "reclaim 2 in 1m15s") != lines.end());
  // an rm.state without its send time: the count without a time
  m.on_state(grouped_schedule(), 10'000);
  lines = render(m, o).lines;
  CHECK(std::find(lines.begin(), lines.end(),
                  "j-ann                ann        normal     scheduled    2048      3       0     3      8  "
                  "reclaim 2") != lines.end());
}

TEST_CASE("a group's name is cut to its column and made safe, and a reclaim note goes below a narrow row") {
  auto s = grouped_schedule();
  for (auto& j : s.jobs)
    if (j.group == "physics") j.group = "a-very-long-group\x1b[2J";
  monitor_model m;
  m.on_state(s, 0, "rm", grouped_sent_at_ms);
  m.on_nodes(two_pools(), 0);
  render_options o;
  o.width = 60;
  const auto lines = render(m, o).lines;
  for (const auto& l : lines) {
    CHECK(l.size() <= 60);
    for (const char c : l) CHECK((c >= 0x20 && c < 0x7f));
  }
  // "  group " and 12 columns of name: 11 kept and '~'; the fair column (61-62) is past the 60 kept
  CHECK(std::find(lines.begin(), lines.end(), "  group a-very-long~     3      6      12      6     11") !=
        lines.end());
  // the jobs' columns end at 92: on 60 the row is cut, and its note is not lost but on the line below
  const auto row =
      std::find(lines.begin(), lines.end(), "j-ann                ann        normal     scheduled    2048");
  REQUIRE(row != lines.end());
  REQUIRE(row + 1 != lines.end());
  CHECK(*(row + 1) == "      reclaim 2 in 1.5s");  // arrived and read at 0: its first deadline is 1.5 s on
}

TEST_CASE("a note longer than the line is wrapped below it, never cut: its end stays in view (issue 17)") {
  msg::rm_state s;
  s.cycle = 7;
  const std::string reason =
      "no machine of order 48 (48 GB) in pool general: the largest machine there is of order 32 (32 GB), so "
      "this work can never fit as submitted";
  s.jobs.push_back(job("big-1", "erin", "normal", msg::job_status::pending, {}, 0, 1, 0, reason));
  s.jobs.push_back(
      job("lost", "dave", "", msg::job_status::refused, {}, 0, 0, 0,
          "Cannot find class gpu for the work, nor any class of that name in any pool: check the name"));
  monitor_model m;
  m.on_state(s, 0);
  m.on_nodes(two_pools(), 0);
  render_options o;
  o.width = 100;
  const auto lines = render(m, o).lines;
  for (const auto& l : lines) CHECK(l.size() <= 100);
  const auto at = std::find_if(lines.begin(), lines.end(),
                               [](const std::string& l) { return l.rfind("big-1 ", 0) == 0; });
  REQUIRE(at != lines.end());
  // The row, then the rest of its note on indented lines: every word of the reason is on the screen.
  std::string note = at->substr(at->find("no machine"));
  for (auto next = at + 1; next != lines.end() && next->rfind("      ", 0) == 0; ++next)
    note += " " + next->substr(6);
  CHECK(note == reason);
  // The refused work in its own section, its reason wrapped the same way.
  const auto refused =
      std::find(lines.begin(), lines.end(), "REFUSED: work the RM will not run as submitted, and why");
  REQUIRE(refused != lines.end());
  CHECK(*(refused + 1) ==
        "  lost (user dave): Cannot find class gpu for the work, nor any class of that name in any pool:");
  CHECK(*(refused + 2) == "      check the name");
}

TEST_CASE(
    "a job capped by design is named so, and does not make its user read as below fair share (issue 17)") {
  msg::rm_state s;
  s.cycle = 9;
  // ann's job: given 2 of a fair share of 8, its work could use 40, held by DUCC's prediction.
  auto capped = job("ann-1", "ann", "normal", msg::job_status::scheduled,
                    {msg::share_status::running, msg::share_status::running}, 2, 40, 8);
  capped.capped_by = "prediction";
  // bob's job: given 2 of 8, its work could use 40, nothing holds it back by design: it is below its share.
  auto starved = job("bob-1", "bob", "normal", msg::job_status::scheduled,
                     {msg::share_status::running, msg::share_status::running}, 2, 40, 8);
  s.jobs = {capped, starved};
  monitor_model m;
  m.on_state(s, 0);
  m.on_nodes(two_pools(), 0);
  render_options o;
  o.width = 140;
  const auto lines = render(m, o).lines;
  auto line_of = [&](const std::string& start) {
    for (const auto& l : lines)
      if (l.rfind(start, 0) == 0) return l;
    return std::string{};
  };
  CHECK(line_of("  ann ") ==
        "  ann                    1      2       4      2     40      8  capped by design");
  CHECK(line_of("  bob ") ==
        "  bob                    1      2       4      2     40      8  below fair share");
  CHECK(line_of("ann-1 ").find("  capped by prediction (by design)") != std::string::npos);
  CHECK(line_of("bob-1 ").find("capped by") == std::string::npos);
}
