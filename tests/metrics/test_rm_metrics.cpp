// What a process sees, as metrics (actors/rm_metrics.hpp), without CAF: rm.state into jobs, processes and
// quanta per class with the arithmetic shown; rm.cycle into histograms; rm.events into counters by reason;
// heartbeats late and missed with explicit times; nodes by state; the bus subscriber's statistics with their
// bounded topic table.
#include <memory>

#include <catch2/catch.hpp>

#include "actors/rm_metrics.hpp"
#include "config/loader.hpp"
#include "messages/schedule_tally.hpp"
#include "metrics/metrics_registry.hpp"
#include "tests/messages/samples.hpp"

namespace msg = rmbus::messages;
using rmbus::actors::bus_metrics;
using rmbus::actors::rm_metric_families;
using rmbus::actors::rm_metrics;
using rmbus::actors::rm_metrics_settings_of;
using rmbus::metrics::metrics_registry;

namespace {

// Two top-level pools with different quanta; "big" is a nested pool of "wide", so its classes use 4 GB quanta.
const char* config_text = R"toml(
[scheduling]
quantum = "1G"

[timing]
heartbeat_interval_ms = 1000

[[nodepool]]
name = "narrow"

[[nodepool]]
name = "wide"
quantum = "4G"
nodes = ["w1"]

[[nodepool]]
name = "big"
parent = "wide"
nodes = ["bg1"]

[[class]]
name = "normal"
policy = "FAIR_SHARE"
nodepool = "narrow"
priority = 10
default = true

[[class]]
name = "bulk"
policy = "FAIR_SHARE"
nodepool = "big"
priority = 10
)toml";

struct fixture {
  metrics_registry registry;
  std::shared_ptr<const rm_metric_families> families = std::make_shared<const rm_metric_families>(registry);
  rmbus::config::rm_config cfg = rmbus::config::parse_native(config_text, "test.toml");
  rm_metrics m{families, rm_metrics_settings_of(cfg)};

  bool has(const std::string& line) const { return registry.render().find("\n" + line + "\n") != std::string::npos; }
};

using msg::samples::job_entry;
using msg::samples::share_entry;

}  // namespace

TEST_CASE("the quantum of a class is that of its top-level nodepool, also through a nested one") {
  fixture f;
  const auto s = rm_metrics_settings_of(f.cfg);
  CHECK(s.quantum_mb_by_class.at("normal") == 1024);
  CHECK(s.quantum_mb_by_class.at("bulk") == 4096);
}

TEST_CASE("rm.state: jobs and processes by class and status, quanta awarded and demanded per class") {
  fixture f;
  msg::rm_state s;
  s.cycle = 7;
  // normal (1 GB quanta): a1 is order 2 (2048 MB), given 3, demand 10, three shares;
  // a2 is order 1, pending, given 0, demand 4.
  s.jobs.push_back(job_entry(
      "a1", "normal", msg::job_status::scheduled, 2048, 3, 10,
      {share_entry("s1", 2, msg::share_status::running), share_entry("s2", 2, msg::share_status::running),
       share_entry("s3", 2, msg::share_status::new_)}));
  s.jobs.push_back(job_entry("a2", "normal", msg::job_status::pending, 1024, 0, 4));
  // bulk (4 GB quanta): b1 asks 8192 MB = order 2, given 1, demand 1, one share being preempted.
  s.jobs.push_back(job_entry("b1", "bulk", msg::job_status::scheduled, 8192, 1, 1,
                             {share_entry("s4", 2, msg::share_status::preempt)}));
  // normal again after bulk (jobs come in id order, classes interleaved): a3 is order 1, given 1, demand 1.
  s.jobs.push_back(job_entry("a3", "normal", msg::job_status::scheduled, 1024, 1, 1,
                             {share_entry("s7", 1, msg::share_status::running)}));
  // A class this configuration does not know: the order comes from its share (3 quanta); given 2.
  s.jobs.push_back(job_entry("c1", "gone", msg::job_status::scheduled, 0, 2, 2,
                             {share_entry("s5", 3, msg::share_status::evict)}));
  // Refused before reaching a pool: no class.
  s.jobs.push_back(job_entry("r1", "", msg::job_status::refused, 0, 0, 0));
  f.m.on_state(s, 42);

  CHECK(f.has("rmbus_jobs{class=\"normal\",status=\"scheduled\"} 2"));
  CHECK(f.has("rmbus_jobs{class=\"normal\",status=\"pending\"} 1"));
  CHECK(f.has("rmbus_jobs{class=\"normal\",status=\"refused\"} 0"));
  CHECK(f.has("rmbus_jobs{class=\"\",status=\"refused\"} 1"));
  CHECK(f.has("rmbus_processes{class=\"normal\",status=\"running\"} 3"));
  CHECK(f.has("rmbus_processes{class=\"normal\",status=\"new\"} 1"));
  CHECK(f.has("rmbus_processes{class=\"bulk\",status=\"preempt\"} 1"));
  CHECK(f.has("rmbus_processes{class=\"gone\",status=\"evict\"} 1"));
  // normal: 3 x 2 + 0 x 1 + 1 x 1 = 7 awarded; 10 x 2 + 4 x 1 + 1 x 1 = 25 demanded.
  CHECK(f.has("rmbus_quanta_awarded{class=\"normal\"} 7"));
  CHECK(f.has("rmbus_quanta_demanded{class=\"normal\"} 25"));
  // bulk: 1 x 2 = 2 both ways; gone: 2 x 3 = 6.
  CHECK(f.has("rmbus_quanta_awarded{class=\"bulk\"} 2"));
  CHECK(f.has("rmbus_quanta_demanded{class=\"bulk\"} 2"));
  CHECK(f.has("rmbus_quanta_awarded{class=\"gone\"} 6"));
  CHECK(f.has("rmbus_quanta_awarded{class=\"\"} 0"));  // r1: no class, no share, order 0
  CHECK(f.has("rmbus_state_last_seq 42"));
  CHECK(f.has("rmbus_rounds_total 1"));

  // The next complete schedule replaces the last: a class without work any more disappears.
  msg::rm_state next;
  next.jobs.push_back(job_entry("a2", "normal", msg::job_status::scheduled, 1024, 1, 4,
                                {share_entry("s6", 1, msg::share_status::new_)}));
  f.m.on_state(next, 43);
  const auto text = f.registry.render();
  CHECK(text.find("class=\"bulk\"") == std::string::npos);
  CHECK(text.find("class=\"gone\"") == std::string::npos);
  CHECK(f.has("rmbus_quanta_awarded{class=\"normal\"} 1"));
  CHECK(f.has("rmbus_state_last_seq 43"));
  CHECK(f.has("rmbus_rounds_total 2"));
}

TEST_CASE("rm.state with publication's tally: the same metrics as counting its jobs, read from the tally") {
  std::vector<msg::job_schedule> jobs{job_entry("a1", "normal", msg::job_status::scheduled, 2048, 3, 10,
                                                {share_entry("s1", 2, msg::share_status::running),
                                                 share_entry("s3", 2, msg::share_status::new_)}),
                                      job_entry("b1", "bulk", msg::job_status::scheduled, 8192, 1, 1,
                                                {share_entry("s4", 2, msg::share_status::preempt)}),
                                      job_entry("c1", "gone", msg::job_status::scheduled, 0, 2, 2,
                                                {share_entry("s5", 3, msg::share_status::evict)}),
                                      job_entry("r1", "", msg::job_status::refused, 0, 0, 0)};
  msg::rm_state counted;
  counted.jobs = jobs;
  msg::rm_state tallied = counted;
  tallied.tally = std::make_shared<const msg::schedule_tally>(msg::tally_of(jobs));
  fixture a, b;
  a.m.on_state(counted, 5);
  b.m.on_state(tallied, 5);
  CHECK(b.registry.render() == a.registry.render());
  CHECK(b.has("rmbus_quanta_awarded{class=\"normal\"} 6"));  // 3 x order 2
  CHECK(b.has("rmbus_quanta_awarded{class=\"bulk\"} 2"));    // 8192 MB at 4 GB quanta: order 2
  CHECK(b.has("rmbus_quanta_awarded{class=\"gone\"} 6"));    // unknown class: its share's 3 quanta

  // The tally is what is read: a schedule whose tally names one job more counts it.
  msg::rm_state more = counted;
  auto extra = jobs;
  extra.push_back(job_entry("a2", "normal", msg::job_status::pending, 1024, 0, 4));
  more.tally = std::make_shared<const msg::schedule_tally>(msg::tally_of(extra));
  b.m.on_state(more, 6);
  CHECK(b.has("rmbus_jobs{class=\"normal\",status=\"pending\"} 1"));
  CHECK(b.has("rmbus_quanta_demanded{class=\"normal\"} 24"));  // 10 x 2 + 4 x 1
}

TEST_CASE("rm.cycle: one observation per phase of the pool's round") {
  fixture f;
  msg::rm_cycle c;
  c.pool = "narrow";
  c.how_much_us = 80;
  c.what_of_us = 700;
  c.preempt_us = 3;
  c.defrag_us = 0;
  c.total_us = 2500000;
  f.m.on_cycle(c);
  CHECK(f.has("rmbus_round_duration_us_bucket{pool=\"narrow\",phase=\"how_much\",le=\"100\"} 1"));
  CHECK(f.has("rmbus_round_duration_us_bucket{pool=\"narrow\",phase=\"what_of\",le=\"500\"} 0"));
  CHECK(f.has("rmbus_round_duration_us_bucket{pool=\"narrow\",phase=\"what_of\",le=\"1000\"} 1"));
  CHECK(f.has("rmbus_round_duration_us_bucket{pool=\"narrow\",phase=\"total\",le=\"1000000\"} 0"));
  CHECK(f.has("rmbus_round_duration_us_bucket{pool=\"narrow\",phase=\"total\",le=\"5000000\"} 1"));
  CHECK(f.has("rmbus_round_duration_us_sum{pool=\"narrow\",phase=\"total\"} 2500000"));
  CHECK(f.has("rmbus_round_duration_us_count{pool=\"narrow\",phase=\"defrag\"} 1"));
}

TEST_CASE("rm.events: preemptions and evictions by reason, events by kind, bad messages of the body stage") {
  fixture f;
  f.m.on_event({"preempt", {{"job", "j"}, {"reason", "fair share"}}});
  f.m.on_event({"preempt", {{"job", "k"}, {"reason", "fair share"}}});
  f.m.on_event({"evict", {{"job", "j"}, {"reason", "node down"}}});
  f.m.on_event({"evict", {{"job", "j"}}});  // no reason given
  f.m.on_event({"bad_message", {{"topic", "agent.heartbeat"}, {"error", "x"}}});
  f.m.on_event({"node_up", {{"node", "n1"}}});
  CHECK(f.has("rmbus_preemptions_total{reason=\"fair share\"} 2"));
  CHECK(f.has("rmbus_evictions_total{reason=\"node down\"} 1"));
  CHECK(f.has("rmbus_evictions_total{reason=\"unknown\"} 1"));
  CHECK(f.has("rmbus_bus_bad_messages_total{stage=\"body\"} 1"));
  CHECK(f.has("rmbus_events_total{kind=\"preempt\"} 2"));
  CHECK(f.has("rmbus_events_total{kind=\"node_up\"} 1"));
}

namespace {
msg::node_changes batch(std::uint64_t heartbeats, std::uint64_t late,
                        std::vector<std::pair<std::string, std::uint64_t>> missed = {}) {
  msg::node_changes b;
  b.heartbeats = heartbeats;
  b.late_heartbeats = late;
  for (auto& [node, n] : missed) {
    msg::node_entry e;
    e.node = node;
    e.missed = n;
    b.changed.push_back(e);
  }
  return b;
}
}  // namespace

TEST_CASE("heartbeats received and late are the intake's counts, added batch by batch") {
  fixture f;
  f.m.on_node_changes(batch(6, 2));
  f.m.on_node_changes(batch(0, 0));  // a batch of changes only
  f.m.on_node_changes(batch(4, 1));
  // 6 + 0 + 4 received, 2 + 0 + 1 late
  CHECK(f.has("rmbus_heartbeats_received_total 10"));
  CHECK(f.has("rmbus_heartbeats_late_total 3"));
}

TEST_CASE("heartbeats missed: every rise of a node's missed-in-a-row number counts once") {
  fixture f;
  f.m.on_node_changes(batch(0, 0, {{"n1", 0}, {"n2", 0}}));  // healthy
  CHECK(f.has("rmbus_heartbeats_missed_total 0"));
  f.m.on_node_changes(batch(0, 0, {{"n1", 1}}));  // n1 missed one
  f.m.on_node_changes(batch(0, 0, {{"n1", 1}}));  // the same number again (a snapshot's replay): nothing new
  f.m.on_node_changes(batch(0, 0, {{"n1", 3}}));  // n1 missed two more: 3 in a row
  CHECK(f.has("rmbus_heartbeats_missed_total 3"));
  f.m.on_node_changes(batch(0, 0, {{"n1", 0}, {"n2", 2}}));  // n1 heard again; n2 missed two
  f.m.on_node_changes(batch(0, 0, {{"n1", 1}}));             // n1 misses one anew
  // 3 + 2 + 1
  CHECK(f.has("rmbus_heartbeats_missed_total 6"));
}

TEST_CASE("untrusted node names: the per-node table is bounded") {
  fixture f;
  auto settings = rm_metrics_settings_of(f.cfg);
  settings.max_tracked_nodes = 2;
  f.m.reconfigure(settings);
  f.m.on_node_changes(batch(0, 0, {{"a", 2}, {"b", 2}, {"c", 2}}));  // c is beyond the table: 2 + 2
  CHECK(f.has("rmbus_heartbeats_missed_total 4"));
  f.m.on_node_changes(batch(0, 0, {{"c", 3}}));  // still not judged
  CHECK(f.has("rmbus_heartbeats_missed_total 4"));
  f.m.on_node_changes(batch(0, 0, {{"a", 0}, {"c", 1}}));  // a leaves the table (heard again), c enters
  f.m.on_node_changes(batch(0, 0, {{"c", 2}}));            // c missed one more
  // 4 + 1 (c from 0 to 1) + 1
  CHECK(f.has("rmbus_heartbeats_missed_total 6"));
}

TEST_CASE("rm.nodes: nodes by state, every state present") {
  fixture f;
  msg::rm_nodes n;
  for (auto [name, state] :
       {std::pair{"a", msg::node_state::up}, std::pair{"b", msg::node_state::up},
        std::pair{"c", msg::node_state::down}, std::pair{"d", msg::node_state::varied_off},
        std::pair{"e", msg::node_state::blacklisted}}) {
    msg::node_report r;
    r.node = name;
    r.state = state;
    n.nodes.push_back(r);
  }
  f.m.on_nodes(n);
  CHECK(f.has("rmbus_nodes{state=\"up\"} 2"));
  CHECK(f.has("rmbus_nodes{state=\"down\"} 1"));
  CHECK(f.has("rmbus_nodes{state=\"varied_off\"} 1"));
  CHECK(f.has("rmbus_nodes{state=\"missing\"} 0"));
  CHECK(f.has("rmbus_nodes{state=\"quiesced\"} 0"));
  CHECK(f.has("rmbus_nodes{state=\"blacklisted\"} 1"));
}

TEST_CASE("bus statistics: totals copied, topics beyond the bound summed under (other)") {
  fixture f;
  bus_metrics b{f.families, 2};
  rmbus::bus::subscriber_stats s;
  s.by_topic = {{"agent.heartbeat", 10}, {"orchestrator.workmap", 3}};
  s.gaps = 1;
  s.missing = 4;
  s.restarts = 2;
  s.bad_messages = 5;
  b.update(s);
  CHECK(f.has("rmbus_bus_messages_total{topic=\"agent.heartbeat\"} 10"));
  CHECK(f.has("rmbus_bus_messages_total{topic=\"orchestrator.workmap\"} 3"));
  CHECK(f.has("rmbus_bus_sequence_gaps_total 1"));
  CHECK(f.has("rmbus_bus_missing_messages_total 4"));
  CHECK(f.has("rmbus_bus_publisher_restarts_total 2"));
  CHECK(f.has("rmbus_bus_bad_messages_total{stage=\"envelope\"} 5"));
  // Two topics already have their series; new ones (sorted before them or not) go to (other), with the
  // subscriber's own overflow: 7 + 1 + 2.
  s.by_topic["aaa.spam"] = 7;
  s.by_topic["zzz.spam"] = 1;
  s.other_topics = 2;
  s.by_topic["agent.heartbeat"] = 11;
  b.update(s);
  CHECK(f.has("rmbus_bus_messages_total{topic=\"(other)\"} 10"));
  CHECK(f.has("rmbus_bus_messages_total{topic=\"agent.heartbeat\"} 11"));
  CHECK(f.registry.render().find("spam") == std::string::npos);
}

TEST_CASE("health and job_done events: gauges of the process's health, finished jobs and their quanta-seconds") {
  fixture f;
  f.m.on_event({"health",
                {{"rss_bytes", "52428800"}, {"round_lag_ms", "1200"}, {"disk_free_bytes", "9000"},
                 {"mailbox.router", "3"}, {"mailbox.scheduler.alpha", "0"}, {"mailbox.bad", "x1"}}});
  CHECK(f.has("rmbus_resident_memory_bytes 52428800"));
  CHECK(f.has("rmbus_round_lag_ms 1200"));
  CHECK(f.has("rmbus_log_disk_free_bytes 9000"));
  CHECK(f.has("rmbus_mailbox_depth{actor=\"router\"} 3"));
  CHECK(f.has("rmbus_mailbox_depth{actor=\"scheduler.alpha\"} 0"));
  CHECK(f.registry.render().find("actor=\"bad\"") == std::string::npos);  // not a number: skipped
  // Two finished jobs: 22.000 + 1.500 = 23.5 quanta-seconds; one completed, one gone.
  f.m.on_event({"job_done", {{"ended", "gone"}, {"quanta_seconds", "22.000"}}});
  f.m.on_event({"job_done", {{"ended", "completed"}, {"quanta_seconds", "1.500"}}});
  f.m.on_event({"job_done", {{"ended", "completed"}, {"quanta_seconds", "-4"}}});  // negative: not added
  CHECK(f.has("rmbus_jobs_finished_total{ended=\"gone\"} 1"));
  CHECK(f.has("rmbus_jobs_finished_total{ended=\"completed\"} 2"));
  CHECK(f.has("rmbus_job_quanta_seconds_total 23.5"));
}

TEST_CASE("CURVE refusals: messages refused for their sender's role and refused keys, each under its reason") {
  fixture f;
  bus_metrics b{f.families};
  CHECK(f.registry.render().find("rmbus_bus_refused_total{") == std::string::npos);  // CURVE off: no series
  b.update_refused(3, 1);
  CHECK(f.has("rmbus_bus_refused_total{reason=\"role\"} 3"));
  CHECK(f.has("rmbus_bus_refused_total{reason=\"key\"} 1"));
  b.update_refused(5, 1);  // totals, copied at each scrape
  CHECK(f.has("rmbus_bus_refused_total{reason=\"role\"} 5"));
}

TEST_CASE("shed heartbeats: the embedded forwarder's total is copied at each scrape") {
  fixture f;
  bus_metrics b{f.families};
  b.update_shed(0);
  CHECK(f.has("rmbus_bus_shed_total 0"));
  b.update_shed(123456);
  CHECK(f.has("rmbus_bus_shed_total 123456"));
}

TEST_CASE("forgotten nodes are counted from the batches that name them, and leave the missed table") {
  fixture f;
  f.m.on_node_changes(batch(0, 0, {{"s1", 2}, {"s2", 2}}));
  CHECK(f.has("rmbus_heartbeats_missed_total 4"));  // 2 + 2
  rmbus::messages::node_changes gone;
  gone.seq = 9;
  gone.forgotten = {"s1", "s2", "s3"};
  f.m.on_node_changes(gone);
  CHECK(f.has("rmbus_nodes_forgotten_total 3"));
  // s1 is new again: its missed count starts from nothing, so a first miss of 1 counts 1 (not 1 - 2).
  f.m.on_node_changes(batch(0, 0, {{"s1", 1}}));
  CHECK(f.has("rmbus_heartbeats_missed_total 5"));
}

TEST_CASE("heartbeats the subscriber shed beyond max_heartbeats_queued are copied at each scrape") {
  fixture f;
  bus_metrics b{f.families};
  rmbus::bus::subscriber_stats s;
  s.shed = 70;
  b.update(s);
  CHECK(f.has("rmbus_heartbeats_shed_total 70"));
}

TEST_CASE("HA events: role, epoch and takeovers from this process's own ha_* events") {
  fixture f;
  // Not an HA candidate (the runtime sets the HA families of candidates at start): no HA series at all, so an
  // RM without HA does not read as a standby.
  const auto before = f.registry.render();
  CHECK(before.find("\nrmbus_ha_role ") == std::string::npos);
  CHECK(before.find("\nrmbus_ha_epoch ") == std::string::npos);
  CHECK(before.find("\nrmbus_ha_takeovers_total ") == std::string::npos);
  CHECK(before.find("\nrmbus_ha_rank_conflicts_total ") == std::string::npos);
  f.m.on_event({"ha_takeover", {{"epoch", "3"}, {"silence_ms", "1004"}}});
  CHECK(f.has("rmbus_ha_role 1"));
  CHECK(f.has("rmbus_ha_epoch 3"));
  CHECK(f.has("rmbus_ha_takeovers_total 1"));
  f.m.on_event({"ha_demoted", {{"epoch", "3"}, {"heard_epoch", "5"}}});
  CHECK(f.has("rmbus_ha_role 0"));
  CHECK(f.has("rmbus_ha_epoch 5"));
  f.m.on_event({"ha_takeover", {{"epoch", "six"}}});  // not a number: the epoch stays, the takeover counts
  CHECK(f.has("rmbus_ha_epoch 5"));
  CHECK(f.has("rmbus_ha_takeovers_total 2"));
  f.m.on_event({"ha_handover", {{"epoch", "7"}, {"to", "rmbus.2.b"}}});
  CHECK(f.has("rmbus_ha_role 0"));
  CHECK(f.has("rmbus_ha_epoch 7"));
  CHECK(f.has("rmbus_events_total{kind=\"ha_handover\"} 1"));
}
