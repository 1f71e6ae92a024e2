#include "actors/rm_metrics.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <string_view>

#include "messages/schedule_tally.hpp"

namespace rmbus::actors {

namespace {

constexpr std::array<messages::job_status, 3> job_statuses{messages::job_status::scheduled, messages::job_status::pending,
                                                           messages::job_status::refused};
constexpr std::array<messages::share_status, 4> share_statuses{
    messages::share_status::running, messages::share_status::new_, messages::share_status::preempt,
    messages::share_status::evict};
constexpr std::array<messages::node_state, 6> node_states{
    messages::node_state::up,         messages::node_state::missing,  messages::node_state::down,
    messages::node_state::varied_off, messages::node_state::quiesced, messages::node_state::blacklisted};

// Microseconds: a round of a small pool takes well under a millisecond, a large one up to seconds.
const std::vector<double> duration_bounds_us{100, 500, 1e3, 5e3, 1e4, 5e4, 1e5, 5e5, 1e6, 5e6};

std::string detail_or(const messages::rm_event& e, const std::string& key, const char* fallback) {
  auto it = e.detail.find(key);
  return it == e.detail.end() || it->second.empty() ? std::string{fallback} : it->second;
}

// An event's detail that must be a whole number; nothing when absent or malformed (the sample is skipped).
std::optional<double> detail_number(const messages::rm_event& e, const std::string& key) {
  auto it = e.detail.find(key);
  if (it == e.detail.end()) return std::nullopt;
  std::uint64_t n = 0;
  auto [p, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), n);
  if (ec != std::errc{} || p != it->second.data() + it->second.size()) return std::nullopt;
  return double(n);
}

}  // namespace

rm_metric_families::rm_metric_families(metrics::metrics_registry& r)
    : up(r.add_gauge("rmbus_up", "1 while this rmbus process runs.")),
      build_info(r.add_gauge("rmbus_build_info", "Always 1; the labels name the build and this process's instance "
                                                 "(the prefix of its src on the bus).",
                             {"version", "instance"}, 4)),
      round_duration_us(r.add_histogram("rmbus_round_duration_us",
                                        "Duration of a scheduling round per top-level nodepool and phase "
                                        "(how_much, what_of, preempt, defrag, total), in microseconds, from rm.cycle.",
                                        {"pool", "phase"}, duration_bounds_us)),
      rounds(r.add_counter("rmbus_rounds_total", "Scheduling rounds this process published (rm.state messages).")),
      state_last_seq(r.add_gauge("rmbus_state_last_seq", "Envelope seq of the last rm.state this process published.")),
      jobs(r.add_gauge("rmbus_jobs", "Work items in the last published rm.state by class and status "
                                     "(scheduled, pending, refused); class is empty for work refused before "
                                     "reaching a pool.",
                       {"class", "status"})),
      processes(r.add_gauge("rmbus_processes", "Shares (processes) in the last published rm.state by class and "
                                               "status (running, new, preempt, evict).",
                            {"class", "status"})),
      quanta_awarded(r.add_gauge("rmbus_quanta_awarded", "Quanta awarded per class in the last published rm.state: "
                                                         "the sum over its jobs of given (the How Much count) x order.",
                                 {"class"})),
      quanta_demanded(r.add_gauge("rmbus_quanta_demanded", "Quanta demanded per class in the last published rm.state: "
                                                           "the sum over its jobs of demand x order.",
                                  {"class"})),
      preemptions(r.add_counter("rmbus_preemptions_total", "Shares marked preempt, by reason (rm.events).", {"reason"})),
      evictions(r.add_counter("rmbus_evictions_total", "Shares marked evict, by reason (rm.events).", {"reason"})),
      events(r.add_counter("rmbus_events_total", "rm.events published by this process, by kind.", {"kind"})),
      heartbeats_received(r.add_counter("rmbus_heartbeats_received_total", "Agent heartbeats received.")),
      heartbeats_late(r.add_counter("rmbus_heartbeats_late_total",
                                    "Heartbeats that arrived more than 1.5 heartbeat intervals after the node's "
                                    "previous one.")),
      heartbeats_missed(r.add_counter("rmbus_heartbeats_missed_total",
                                      "Heartbeat intervals in which a watched node sent no heartbeat, as the "
                                      "watchdog counted them (rm.internal.nodestate).")),
      nodes_forgotten(r.add_counter("rmbus_nodes_forgotten_total",
                                    "Nodes removed from the node table after being down longer than [limits] "
                                    "forget_down_ms with nothing held on them.")),
      heartbeats_shed(r.add_counter("rmbus_heartbeats_shed_total",
                                    "Heartbeats the bus subscriber dropped because [limits] max_heartbeats_queued "
                                    "were already on their way to the heartbeat intake.")),
      nodes(r.add_gauge("rmbus_nodes", "Nodes in the last rm.nodes by state.", {"state"})),
      bus_messages(r.add_counter("rmbus_bus_messages_total",
                                 "Messages this process's bus subscriber accepted, by topic; topics beyond the "
                                 "first 200 are summed under topic=\"(other)\".",
                                 {"topic"})),
      bus_gaps(r.add_counter("rmbus_bus_sequence_gaps_total", "Jumps in seq within a (src, topic) stream.")),
      bus_missing(r.add_counter("rmbus_bus_missing_messages_total", "Sequence numbers skipped over by those jumps.")),
      bus_restarts(r.add_counter("rmbus_bus_publisher_restarts_total", "Publisher restarts detected (seq went down).")),
      bus_untracked(r.add_counter("rmbus_bus_untracked_messages_total",
                                  "Messages accepted beyond the bounded table of (src, topic) streams, so not "
                                  "sequence-checked.")),
      bus_duplicates(r.add_counter("rmbus_bus_duplicate_messages_total",
                                   "Copies of a message already received, dropped: a client connected to several "
                                   "forwarders receives each message once per forwarder.")),
      bus_late(r.add_counter("rmbus_bus_late_messages_total",
                             "Messages dropped because a later message of their (src, topic) stream was already "
                             "handed on (they came through a slower forwarder).")),
      bus_bad_messages(r.add_counter("rmbus_bus_bad_messages_total",
                                     "Bad messages: stage=envelope rejected by the bus subscriber (frames, topic, "
                                     "envelope); stage=body failed their message decoder here (a bad_message event; "
                                     "a damaged work-map item counts once per item).",
                                     {"stage"}, 2)),
      resident_memory_bytes(r.add_gauge("rmbus_resident_memory_bytes",
                                        "Resident memory of this process at its last health report.")),
      round_lag_ms(r.add_gauge("rmbus_round_lag_ms", "Milliseconds since the last round this process saw published "
                                                     "(or since it started), at its last health report.")),
      log_disk_free_bytes(r.add_gauge("rmbus_log_disk_free_bytes",
                                      "Free bytes (for unprivileged users) on the file system where this process "
                                      "logs, at its last health report.")),
      mailbox_depth(r.add_gauge("rmbus_mailbox_depth",
                                "Messages waiting in each main actor's mailbox at the last health report.",
                                {"actor"}, 64)),
      jobs_finished(r.add_counter("rmbus_jobs_finished_total",
                                  "Jobs accounted as finished (job_done events), by how they ended (completed, gone).",
                                  {"ended"}, 4)),
      job_quanta_seconds(r.add_counter("rmbus_job_quanta_seconds_total",
                                       "Quanta-seconds held by the jobs accounted as finished.")),
      bus_refused(r.add_counter("rmbus_bus_refused_total",
                                "CURVE: reason=role messages the embedded forwarder dropped because the sender's "
                                "roles may not publish the topic; reason=key connections refused (unknown key, or "
                                "not an admin key at the admin endpoint).",
                                {"reason"}, 2)),
      bus_shed(r.add_counter("rmbus_bus_shed_total",
                             "Heartbeats the embedded forwarder dropped because the same node sent more than two "
                             "back to back and then more than one per minimum gap (one publisher flooding).")),
      // Only an HA candidate exports the HA families (the runtime sets them at start): a role of 0 on an RM
      // without HA would read as "standby" and page "no active" (RmbusNoActive).
      ha_role(r.add_gauge("rmbus_ha_role", "HA ([ha] enabled): 1 while this process is the active RM, 0 while a standby.",
                          {}, 0, metrics::presence::from_first_update)),
      ha_epoch(r.add_gauge("rmbus_ha_epoch", "HA: the epoch this process publishes under while active; the highest it has "
                                             "heard while a standby.",
                           {}, 0, metrics::presence::from_first_update)),
      ha_takeovers(r.add_counter("rmbus_ha_takeovers_total",
                                 "HA: times this process became the active RM (after silence, or by a handover).", {},
                                 0, metrics::presence::from_first_update)),
      ha_rank_conflicts(r.add_counter("rmbus_ha_rank_conflicts_total",
                                      "HA: other candidates heard with this process's [ha] rank (a configuration "
                                      "error: two candidates of one rank can coin the same epoch).",
                                      {}, 0, metrics::presence::from_first_update)),
      guard_refusals(r.add_counter("rmbus_guard_refusals_total",
                                   "Plans publication's last-line guard refused because they would put a node above "
                                   "its order (invariant_violation events). Should stay 0: the core never plans so.")),
      over_order_repairs(r.add_counter("rmbus_over_order_repairs_total",
                                       "Nodes the work map showed above their order that a round brought back under "
                                       "it (over_order_repaired events).")) {}

rm_metrics_settings rm_metrics_settings_of(const config::rm_config& cfg) {
  rm_metrics_settings s;
  const auto& pools = cfg.scheduling.nodepools;
  auto top_level_of = [&](std::string name) {
    for (std::size_t hops = 0; hops <= pools.size(); ++hops) {  // bounded: the configuration has no cycles
      auto it = std::find_if(pools.begin(), pools.end(), [&](const auto& p) { return p.name == name; });
      if (it == pools.end()) return pools.end();
      if (it->parent.empty()) return it;
      name = it->parent;
    }
    return pools.end();
  };
  for (const auto& c : cfg.scheduling.classes) {
    auto top = top_level_of(c.nodepool);
    if (top == pools.end()) continue;
    const auto quantum = top->quantum_mb != 0 ? top->quantum_mb : cfg.scheduling.settings.quantum_mb;
    s.quantum_mb_by_class[c.name] = quantum;
  }
  return s;
}

rm_metrics::rm_metrics(std::shared_ptr<const rm_metric_families> families, rm_metrics_settings settings)
    : f_(std::move(families)), settings_(std::move(settings)) {}

void rm_metrics::reconfigure(rm_metrics_settings settings) { settings_ = std::move(settings); }

void rm_metrics::on_state(const messages::rm_state& state, std::uint64_t seq) {
  // From the tally publication keeps beside the schedule (a round's changes counted, not its 100,000 jobs),
  // or counted here from the jobs when the schedule came without one.
  std::optional<messages::schedule_tally> counted;
  if (!state.tally) counted = messages::tally_of(state.jobs);
  const messages::schedule_tally& tally = state.tally ? *state.tally : *counted;
  std::vector<std::pair<metrics::label_values, double>> jobs, processes, awarded, demanded;
  for (const auto& [name, c] : tally.classes) {
    // Every status of every class present, 0 included, so a series does not vanish when its count drops to 0.
    for (auto s : job_statuses)
      jobs.push_back({{name, std::string{messages::to_string(s)}}, double(c.jobs[static_cast<std::size_t>(s)])});
    for (auto s : share_statuses)
      processes.push_back(
          {{name, std::string{messages::to_string(s)}}, double(c.processes[static_cast<std::size_t>(s)])});
    // A job's quanta: its count times its order, the memory per process over the class's quantum, or the
    // quanta of its first share when the class's quantum is not known here.
    const auto q = settings_.quantum_mb_by_class.find(name);
    const std::uint64_t quantum_mb = q == settings_.quantum_mb_by_class.end() ? 0 : q->second;
    std::uint64_t given = 0, demand = 0;
    for (const auto& [size, s] : quantum_mb > 0 ? c.by_memory_mb : c.by_first_quanta) {
      const std::uint64_t order = quantum_mb > 0 ? size / quantum_mb : size;
      given += s.given * order;
      demand += s.demand * order;
    }
    awarded.push_back({{name}, double(given)});
    demanded.push_back({{name}, double(demand)});
  }
  f_->jobs.replace(jobs);
  f_->processes.replace(processes);
  f_->quanta_awarded.replace(awarded);
  f_->quanta_demanded.replace(demanded);
  f_->state_last_seq.set({}, double(seq));
  f_->rounds.inc();
}

void rm_metrics::on_cycle(const messages::rm_cycle& c) {
  const std::pair<const char*, std::uint64_t> phases[] = {
      {"how_much", c.how_much_us}, {"what_of", c.what_of_us}, {"preempt", c.preempt_us},
      {"defrag", c.defrag_us},     {"total", c.total_us}};
  for (const auto& [phase, us] : phases) f_->round_duration_us.observe({c.pool, phase}, double(us));
}

void rm_metrics::on_nodes(const messages::rm_nodes& n) {
  // Counted into an array by state (a tree's insertion per node was 1 ms a round at 50,000 nodes).
  static_assert(static_cast<std::size_t>(messages::node_state::blacklisted) + 1 == node_states.size());
  std::array<std::uint64_t, node_states.size()> count{};
  for (const auto& r : n.nodes)
    if (const auto k = static_cast<std::size_t>(r.state); k < count.size()) ++count[k];
  std::vector<std::pair<metrics::label_values, double>> series;
  for (auto s : node_states)
    series.push_back({{std::string{messages::to_string(s)}}, double(count[static_cast<std::size_t>(s)])});
  f_->nodes.replace(series);
}

void rm_metrics::on_event(const messages::rm_event& e) {
  f_->events.inc({e.kind});
  if (e.kind == messages::event_kinds::preempt) f_->preemptions.inc({detail_or(e, "reason", "unknown")});
  else if (e.kind == messages::event_kinds::evict) f_->evictions.inc({detail_or(e, "reason", "unknown")});
  else if (e.kind == messages::event_kinds::bad_message) f_->bus_bad_messages.inc({"body"});
  else if (e.kind == messages::event_kinds::health) on_health(e);
  else if (e.kind == messages::event_kinds::job_done) on_job_done(e);
  else if (e.kind == messages::event_kinds::invariant_violation) f_->guard_refusals.inc({});
  else if (e.kind == messages::event_kinds::over_order_repaired) f_->over_order_repairs.inc({});
  else if (e.kind.starts_with("ha_")) on_ha(e);
}

void rm_metrics::on_ha(const messages::rm_event& e) {
  auto number = [&](const std::string& key) { return detail_number(e, key); };
  if (e.kind == messages::event_kinds::ha_takeover) {
    f_->ha_role.set({}, 1);
    f_->ha_takeovers.inc({});
    if (auto v = number("epoch")) f_->ha_epoch.set({}, *v);
  } else if (e.kind == messages::event_kinds::ha_demoted || e.kind == messages::event_kinds::ha_handover) {
    f_->ha_role.set({}, 0);
    if (auto v = number(e.kind == messages::event_kinds::ha_demoted ? "heard_epoch" : "epoch")) f_->ha_epoch.set({}, *v);
  } else if (e.kind == messages::event_kinds::ha_rank_conflict) {
    f_->ha_rank_conflicts.inc({});
  }
}

void rm_metrics::on_health(const messages::rm_event& e) {
  auto number = [&](const std::string& key) { return detail_number(e, key); };
  if (auto v = number("rss_bytes")) f_->resident_memory_bytes.set({}, *v);
  if (auto v = number("round_lag_ms")) f_->round_lag_ms.set({}, *v);
  if (auto v = number("disk_free_bytes")) f_->log_disk_free_bytes.set({}, *v);
  constexpr std::string_view prefix = "mailbox.";
  for (auto it = e.detail.lower_bound(std::string{prefix}); it != e.detail.end() && it->first.starts_with(prefix); ++it)
    if (auto v = number(it->first)) f_->mailbox_depth.set({it->first.substr(prefix.size())}, *v);
}

void rm_metrics::on_job_done(const messages::rm_event& e) {
  f_->jobs_finished.inc({detail_or(e, "ended", "unknown")});
  auto it = e.detail.find("quanta_seconds");
  if (it == e.detail.end()) return;
  double qs = 0;
  auto [p, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), qs);
  if (ec == std::errc{} && p == it->second.data() + it->second.size() && qs >= 0) f_->job_quanta_seconds.inc({}, qs);
}

void rm_metrics::on_node_changes(const messages::node_changes& batch) {
  if (batch.heartbeats > 0) f_->heartbeats_received.inc({}, double(batch.heartbeats));
  if (batch.late_heartbeats > 0) f_->heartbeats_late.inc({}, double(batch.late_heartbeats));
  std::uint64_t newly_missed = 0;
  for (const auto& e : batch.changed) {
    auto before = missed_.find(e.node);
    // Beyond the bounded table a node is not judged: it cannot be told from one already counted.
    if (before == missed_.end() && e.missed > 0 && missed_.size() >= settings_.max_tracked_nodes) continue;
    const std::uint64_t was = before == missed_.end() ? 0 : before->second;
    // A lower number means a heartbeat reset the count (or the intake restarted): nothing missed anew.
    if (e.missed > was) newly_missed += e.missed - was;
    if (e.missed == 0) {
      if (before != missed_.end()) missed_.erase(before);
    } else if (before != missed_.end()) {
      before->second = e.missed;
    } else {
      missed_.emplace(e.node, e.missed);
    }
  }
  if (newly_missed > 0) f_->heartbeats_missed.inc({}, double(newly_missed));
  for (const auto& n : batch.forgotten) missed_.erase(n);
  if (!batch.forgotten.empty()) f_->nodes_forgotten.inc({}, double(batch.forgotten.size()));
}

bus_metrics::bus_metrics(std::shared_ptr<const rm_metric_families> families, std::size_t max_topics)
    : f_(std::move(families)), max_topics_(max_topics) {}

void bus_metrics::update(const bus::subscriber_stats& stats) {
  std::uint64_t other = stats.other_topics;
  for (const auto& [topic, n] : stats.by_topic) {
    if (!exported_.count(topic)) {
      if (exported_.size() >= max_topics_) {
        other += n;
        continue;
      }
      exported_.insert(topic);
    }
    f_->bus_messages.set({topic}, double(n));
  }
  if (other > 0) f_->bus_messages.set({"(other)"}, double(other));
  f_->bus_gaps.set({}, double(stats.gaps));
  f_->bus_missing.set({}, double(stats.missing));
  f_->bus_restarts.set({}, double(stats.restarts));
  f_->bus_untracked.set({}, double(stats.untracked));
  f_->bus_duplicates.set({}, double(stats.duplicates));
  f_->bus_late.set({}, double(stats.late));
  f_->bus_bad_messages.set({"envelope"}, double(stats.bad_messages));
  f_->heartbeats_shed.set({}, double(stats.shed));
}

void bus_metrics::update_shed(std::uint64_t shed) { f_->bus_shed.set({}, double(shed)); }

void bus_metrics::update_refused(std::uint64_t by_role, std::uint64_t by_key) {
  f_->bus_refused.set({"role"}, double(by_role));
  f_->bus_refused.set({"key"}, double(by_key));
}

}  // namespace rmbus::actors
