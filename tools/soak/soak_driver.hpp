#pragma once
// The I/O shell of rmbus-soak: it runs rmbus as a child process (with --ha: two HA candidates on rmbus-proxy,
// the active SIGKILLed each time; with --partition three, cut off from each other at each kill;
// docs/reliability.md "HA soak") on private loopback ports (its embedded
// forwarder is the bus, so every kill takes the bus down too), plays a small cluster and its orchestrator on
// that bus (tests/support/fake_cluster), changes the work at seeded moments, and SIGKILLs rmbus at seeded
// random moments, restarting it each time. Every rm.state it receives goes through the checks of
// soak_checks.hpp; one progress line per kill and a summary go to `out`.
//
// The seed decides the work (which jobs arrive and leave, their users, classes, sizes) and the moment of
// each kill after the previous recovery (uniform in [kill_min_ms, kill_max_ms]), so a kill lands anywhere in
// a round: before, during or after a schedule is computed or published.
//
// Thread-safety: run_soak() is called once, from one thread.

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace rmbus::soak {

struct soak_options {
  std::string rmbus_path;
  std::string work_dir;            // config, logs; created when missing
  int kills = 100;
  std::uint64_t seed = 1;
  std::chrono::seconds time_bound{1500};  // the whole run; reaching it is a failure (fewer kills than asked)
  int recover_rounds = 10;         // rule 4's bound, in rm.state messages after a restart
  int heartbeat_ms = 250;          // the RM's heartbeat interval (also its round cadence here)
  int nodes = 6;                   // each 8 GB = order 8 at the 1 GB quantum
  int kill_min_ms = 100;
  int kill_max_ms = 2500;
  bool trace = false;              // print every job's processes in each round after a restart
  // HA soak (--ha): two candidates with [ha] enabled (default timing: beacon 200 ms, takeover 1000 ms) on a
  // standalone rmbus-proxy; each kill SIGKILLs the active, the standby takes over, and the killed one is
  // started again as a standby once the new active's first schedule has come.
  bool ha = false;
  std::string proxy_path;
  // HA partition soak (--ha --partition): three candidates, each on a forwarder of its own that the cluster
  // also reaches and on one forwarder they share; before each kill of the active, at a seeded moment, the
  // shared forwarder is stopped (the standbys cannot hear each other, both reach the orchestrator), and it is
  // started again a seeded time after the recovery. The orchestrator counts every node it sees above its order.
  bool partition = false;
  // The orchestrator lists its processes without node_memory_mb, as DUCC's does: a restarted RM recovers work on
  // nodes it has not heard yet without their sizes (--no-node-memory).
  bool no_node_memory = false;
  // Whether the orchestrator maps at once when it accepts a new epoch (true, as docs/protocol.md 4.8 advises) or
  // only at its next period (two thirds of heartbeat_ms, at least 50 ms; its agents heartbeat at the same period).
  bool map_on_new_epoch = true;
};

struct soak_summary {
  int kills_asked = 0;
  int kills_survived = 0;  // restarts after which every rule held
  bool ready = false;      // the first RM published a schedule
  bool time_bound_hit = false;
  std::uint64_t processes_at_kills = 0;
  std::uint64_t processes_lost = 0;
  std::uint64_t over_order = 0;    // rm.state messages with a node above its order (rule 2)
  // rm.state messages above an order only when shares taken back before they started count too (the space the RM
  // holds for them until the orchestrator acts): printed, not a violation.
  std::uint64_t over_order_held = 0;
  std::uint64_t reused_ids = 0;
  std::uint64_t not_back = 0;      // restarts whose schedule did not return within recover_rounds
  std::size_t steady_kills = 0;        // kills while the schedule was steady (see soak_checks.hpp, rule 4)
  std::size_t back_at_fair_share = 0;  // changing-schedule kills that came back to the fair share
  std::size_t back_settled = 0;        // changing-schedule kills that settled on another steady schedule
  std::uint64_t states_checked = 0;
  std::uint64_t share_ids = 0;
  std::vector<int> rounds_to_recover;
  std::vector<double> seconds_to_recover;  // from the restart to the schedule being back
  // HA: from each SIGKILL of the active to the first rm.state of the new epoch the orchestrator acted on, and
  // schedules it acted on from below the highest epoch it had accepted (rule 5; the fence makes it 0).
  std::vector<double> failover_ms;
  // HA: the epoch each failover reached, and how long it waited for the orchestrator's echo (its
  // ha_echo_accepted event; epochs without one counted). From each kill (and from the new epoch's first state)
  // to the first `new` share coined under the new epoch, over the failovers whose handshake held work back; the
  // failovers that granted with no work held back, and those that granted nothing before the next kill or the end.
  std::vector<std::uint64_t> failover_epochs;
  // HA: processes running at a kill that the new active's first state, computed before a map echoed its epoch,
  // did not list (rule 1 is checked on its first state from such a map).
  std::uint64_t unlisted_before_echo = 0;
  std::vector<double> echo_wait_ms;
  std::uint64_t echo_waits_unreported = 0;
  std::vector<double> first_grant_ms, first_grant_after_epoch_ms;
  std::uint64_t failovers_without_held_work = 0, failovers_without_grant = 0;
  std::uint64_t lower_epoch_acted = 0;
  std::uint64_t no_takeover = 0;  // kills after which no new epoch came within 30 s
  // Times the orchestrator saw a node above its order (its own count, over every schedule acted on); partition:
  // kills after which it acted on more than one instance from the first schedule of the last new epoch on.
  std::uint64_t orchestrator_over_order = 0;
  std::uint64_t split_actives = 0;
  std::vector<double> epochs_per_failover;  // new epochs the orchestrator acted on after each kill
  std::uint64_t violations() const {
    return processes_lost + over_order + reused_ids + not_back + lower_epoch_acted + no_takeover +
           orchestrator_over_order + split_actives;
  }
};

// Exit status of rmbus-soak: 0 every rule held through every kill; 1 a violation; 3 the RM never published
// a first schedule; 4 the time bound ended the run before the last kill.
int exit_status(const soak_summary& s);

soak_summary run_soak(const soak_options& options, std::ostream& out);

}  // namespace rmbus::soak
