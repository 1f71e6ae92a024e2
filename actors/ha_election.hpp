#pragma once
// Who is the active RM: the election of docs/architecture.md ("High availability"), without CAF, so that it
// can be tested alone with a fake clock. The HA actor (actors/ha.cpp) feeds it what the bus says and its own
// ticks, and carries out what it decides.
//
// One total order over candidates: a higher epoch first, then a lower rank, then the smaller instance name
// (ha_key, outranks). The active beacons on rm.ha; every standby beacons too, so each knows its peers.
//   * A standby that has heard no active for takeover_ms takes over, unless a standby better in (rank,
//     instance) was heard within takeover_ms (that one takes over first; after twice takeover_ms of silence
//     any standby does). A process that has heard no work map yet waits 3 takeover_ms from its start, so that
//     it knows the epoch the orchestrator echoes. Its epoch is a ballot (messages/ha_ballot.hpp): the round
//     after that of every epoch it has heard (on rm.ha, on another RM's rm.state, the orchestrator's echoed
//     rm_epoch) with its own rank, so two candidates of distinct ranks never coin the same epoch, even when
//     they cannot hear each other.
//   * A standby also counts as hearing an active the orchestrator's rm_cycle advancing under an echoed epoch
//     above every epoch it heard from an RM itself: that active is alive though its beacons do not arrive (a
//     link cut between the candidates only), and taking over would only start the two taking turns.
//   * A handover beacon naming a standby makes that standby take over at once.
//   * An active steps down at once when it hears an epoch above its own (a beacon in any state, another RM's
//     schedule, the orchestrator's echo), or another active of the same epoch that outranks it. Equal epochs
//     need two candidates of one rank, a configuration error (same_rank_peers): the one that outranks raises
//     its epoch to a new ballot then, so that the fence tells the two apart from that moment.
//
// Bounds: at most max_peers peers are kept (a peer silent longest is dropped first), so a flood of invented
// instance names on rm.ha cannot grow the table; an epoch above messages::max_epoch is ignored wherever it is
// heard, so a takeover's next round cannot wrap.
//
// Time is an input (milliseconds); not thread-safe; one owner.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "messages/rm_ha.hpp"

namespace rmbus::actors {

struct ha_key {
  std::uint64_t epoch = 0;
  std::uint64_t rank = 0;
  std::string instance;
};

// True when `a` comes before `b` in the total order: higher epoch, then lower rank, then smaller instance.
bool outranks(const ha_key& a, const ha_key& b);

enum class ha_role { standby, active };

struct ha_peer {
  std::string instance;
  std::uint64_t rank = 0;
  std::uint64_t epoch = 0;
  messages::ha_state state = messages::ha_state::standby;
  std::string admin;
  std::int64_t heard_ms = 0;  // when its last beacon arrived
};

class ha_election {
 public:
  static constexpr std::size_t max_peers = 64;

  struct options {
    std::string instance;
    std::uint64_t rank = 0;
    std::int64_t takeover_ms = 1000;
    std::string admin;  // this process's admin endpoint, told to peers
  };

  // raised: still the active, under a new epoch (epoch): it met another active of its own epoch (a candidate
  // of its rank) that comes after it in the order, which steps down; the raise lets orchestrators refuse that
  // one's late schedules, which the same epoch would not.
  enum class change { none, took_over, demoted, handed_over, raised };
  struct outcome {
    change what = change::none;
    std::uint64_t epoch = 0;        // took_over: the new epoch; demoted: the epoch heard that deposed it
    std::int64_t silence_ms = 0;    // took_over: how long no active was heard
    std::string by;                 // demoted: the instance (or "orchestrator") that outranked it;
                                    // took_over: the previous active, if one was known; handed_over: the target
    std::string reason;             // for the log and the event
  };

  ha_election(options opt, std::int64_t now_ms);

  // ---- what the bus says. Each returns what changed (at most one change per call).
  outcome heard_beacon(const messages::rm_ha& b, std::int64_t now_ms);
  // An rm.state (or other RM output) carrying `epoch`, sent by `instance` (not this process).
  outcome heard_schedule(std::uint64_t epoch, const std::string& instance, std::int64_t now_ms);
  // The orchestrator's echoed rm_epoch and rm_cycle in a work map; any work map at all (`echo` nullopt)
  // counts as heard.
  outcome heard_workmap(std::optional<std::uint64_t> echo, std::int64_t now_ms,
                        std::optional<std::uint64_t> echoed_cycle = std::nullopt);
  // The clock: a standby may take over.
  outcome tick(std::int64_t now_ms);

  // ---- planned switch-over (rmbus-admin handover). On the active only: it steps down at once and names the
  // standby `to` (or the best standby heard) to take over. Returns the target, or an error text.
  struct handover_result {
    bool ok = false;
    std::string target;  // ok: the instance named to take over
    std::string error;   // !ok: why nothing changed
  };
  handover_result handover(const std::optional<std::string>& to, std::int64_t now_ms);

  // ---- what it holds
  ha_role role() const { return role_; }
  // The active's own epoch; for a standby, the highest epoch it has heard.
  std::uint64_t epoch() const { return role_ == ha_role::active ? epoch_ : highest_; }
  std::uint64_t highest_heard() const { return highest_; }
  const options& self() const { return opt_; }
  // The active this standby last heard (none for the active itself, or when none is known).
  std::optional<ha_peer> active_peer() const;
  // Peers heard within takeover_ms, by instance name.
  std::vector<ha_peer> peers(std::int64_t now_ms) const;
  // Peers heard within takeover_ms that have this process's rank: a configuration error, since only distinct
  // ranks make epochs unique.
  std::vector<ha_peer> same_rank_peers(std::int64_t now_ms) const;
  // Whether this process has been the active RM since it started.
  bool ever_active() const { return ever_active_; }
  // The beacon this process sends now.
  messages::rm_ha beacon(std::int64_t now_ms) const;

 private:
  outcome take_over(std::int64_t now_ms, std::string reason);
  outcome step_down(std::uint64_t epoch, std::string by, std::string reason, std::int64_t now_ms);
  void remember(const messages::rm_ha& b, std::int64_t now_ms);
  bool better_standby_alive(std::int64_t now_ms) const;

  options opt_;
  ha_role role_ = ha_role::standby;
  std::uint64_t epoch_ = 0;    // own epoch while active
  std::uint64_t highest_ = 0;  // highest epoch heard anywhere (own included)
  std::uint64_t heard_live_ = 0;  // highest epoch heard from an RM publishing it (active beacons, schedules, its own)
  std::optional<std::pair<std::uint64_t, std::uint64_t>> last_echo_;  // the last map's (rm_epoch, rm_cycle)
  std::int64_t started_ms_ = 0;
  std::int64_t active_heard_ms_ = 0;  // last beacon of an active (or handover); start time before any
  std::string active_instance_;       // the active heard last (standby only)
  bool workmap_heard_ = false;
  bool ever_active_ = false;
  std::optional<std::string> handing_to_;  // after handover: named in our beacons until an active is heard
  std::map<std::string, ha_peer> peers_;
};

}  // namespace rmbus::actors
