#pragma once
// The whole resolved configuration of one rmbus process: the scheduling policy the core consumes
// (core::scheduler_config) plus the runtime settings only the process needs (timing, bus endpoints, logging,
// bounds on untrusted messages). Both configuration roads (native TOML, DUCC's own files) and the embedded
// default produce this value with every default resolved, so two configurations describing the same site
// compare equal with operator==.
//
// Defaults are those of DUCC's shipped default.ducc.properties (the "file default" column of
// shared/ducc-rm.md section 4.3), not the Java code defaults. Times are in milliseconds.

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/policy.hpp"

namespace rmbus::config {

// Bounds applied when decoding bus messages (mirrors messages::decode_limits; config/ may not depend on
// messages/, so the actors copy these values across).
struct decode_limit_settings {
  std::size_t max_body_bytes = 16u * 1024u * 1024u;
  std::size_t max_string_bytes = 64u * 1024u;
  std::size_t max_array_len = 1'000'000;
  std::size_t max_map_len = 4096;
  std::size_t max_depth = 16;
  // Distinct node names the heartbeat intake keeps. A heartbeat from a new name beyond it is refused with a
  // `limit` event, so a storm of invented names cannot grow the RM's memory without bound.
  std::size_t max_nodes = 100'000;
  // A node down for longer than this (ms) whose machine holds no share is forgotten: removed from the node
  // table, so names invented by a storm do not hold max_nodes for ever. 0: never forgotten (DUCC).
  std::int64_t forget_down_ms = 3'600'000;
  // Heartbeats the bus subscriber has handed toward the heartbeat intake and the intake has not yet taken.
  // Beyond it a heartbeat is shed (counted, and a `limit` event), so a storm faster than the intake cannot
  // queue without bound in the actors' mailboxes.
  std::size_t max_heartbeats_queued = 50'000;

  bool operator==(const decode_limit_settings&) const = default;
};

// Where the process logs. No file: stderr only. With a file, it is rotated when a write would take it past
// max_bytes: FILE -> FILE.1 -> ... -> FILE.<max_files> (the oldest dropped), and with `compress` every
// rotated file is gzip-compressed (FILE.1.gz ...): logging/rotating_sink.hpp. DUCC rotates through log4j.
// Bounds on the rotation settings, shared by both configuration roads: a file of at least a few lines, and
// no more rotated files than a person would list.
inline constexpr std::int64_t min_log_bytes = 1024;
inline constexpr std::int64_t max_log_bytes = 1LL << 40;  // 1 TiB
inline constexpr std::int64_t max_log_files = 1000;

struct logging_settings {
  std::string file;                              // empty: stderr only
  std::uint64_t max_bytes = 64u * 1024u * 1024u;  // per file, before it is rotated
  int max_files = 5;                             // rotated files kept besides the live one
  bool compress = true;                          // gzip the rotated files

  bool operator==(const logging_settings&) const = default;
};

// Maui's SystemProfiler: a `health` rm.events event every heartbeat interval (resident memory, round lag,
// mailbox depths, free space where the process logs), warning when free space falls under disk_warn_percent.
struct health_settings {
  bool enabled = false;
  int disk_warn_percent = 10;  // 0: never warn

  bool operator==(const health_settings&) const = default;
};

// Maui's JobChecker: one record per finished job, in a JSON-lines file and as an rm.events `job_done` event.
struct accounting_settings {
  bool enabled = false;
  std::string file;  // JSON lines, appended; empty: the events only

  bool operator==(const accounting_settings&) const = default;
};

// CURVE on the bus and the admin endpoint (docs/bus.md, "Security"). Off by default; `curve = true` turns it
// on. The paths are resolved against the configuration file's folder when read; the files themselves are read
// when the process starts (bus/curve.hpp), so a missing or malformed key file stops rmbus with its name.
struct security_settings {
  bool curve = false;
  std::string key = "curve/rmbus.key";  // this process's key pair: the server key of its forwarder and admin
                                        // endpoint, and its own client key on the bus (role rm)
  std::string server_key;               // the forwarder's public key when it is not embedded; empty: `key`
  std::string keys = "curve/keys";      // the allowed public keys, each with its roles and a name

  bool operator==(const security_settings&) const = default;
};

// High availability (docs/architecture.md, "High availability"): several rmbus processes with the same
// configuration on one bus, one active and the others warm standbys, elected over the bus (topic rm.ha).
// Bounds on its timings, shared by both configuration roads.
inline constexpr std::int64_t min_ha_beacon_ms = 10;
inline constexpr std::int64_t max_ha_ms = 600'000;
inline constexpr int max_ha_rank = 1000;

struct ha_settings {
  bool enabled = false;
  std::int64_t beacon_ms = 200;    // the active (and every standby) says it is alive this often on rm.ha
  std::int64_t takeover_ms = 1000; // a standby that hears no active for this long takes over; >= 2 beacons
  int rank = 0;                    // lower wins among standbys taking over at once, and among equal epochs
  // The admin endpoint a standby names when it redirects a client; empty: the process's own admin endpoint
  // (useful only when that is an address clients can reach, not a wildcard).
  std::string advertise_admin;

  bool operator==(const ha_settings&) const = default;
};

struct runtime_settings {
  std::int64_t heartbeat_interval_ms = 30000;    // ducc.agent.node.metrics.publish.rate
  int node_stability = 6;                        // ducc.rm.node.stability: missed heartbeats until down
  int init_stability = 2;                        // ducc.rm.init.stability: start-up ticks before scheduling
  bool fast_recovery = true;                     // ducc.rm.fast.recovery: start on the first map naming live nodes
  std::int64_t orchestrator_publish_ms = 10000;  // ducc.orchestrator.state.publish.rate
  int state_publish_ratio = 1;                   // ducc.rm.state.publish.ratio: maps per scheduling round
  // How long the publisher waits for every pool's answer before reporting the laggards and keeping their last
  // schedule. Not a DUCC key; when not configured it is one orchestrator period.
  std::int64_t round_timeout_ms = 10000;
  // Mass loss (actors/mass_loss_guard.hpp): more than this percent of a pool's nodes going missing within one
  // heartbeat interval paces the evictions to mass_loss_evict_percent of the pool per interval. 100: never.
  int mass_loss_percent = 30;
  int mass_loss_evict_percent = 10;
  // Settle window of a restarted RM (YARN's work-preserving restart waits the same way): when the first work
  // map names live processes, rounds only report what is held until this long after start and one work map
  // has been seen (round_input::settling). Not a DUCC key; when not configured it is one heartbeat interval.
  // 0: no window.
  std::int64_t settle_ms = 30000;
  // The forwarders' sides publishers and subscribers connect to: one endpoint, or several separated by commas
  // (every one connected to; with the embedded forwarder the first is the one it binds; docs/bus.md).
  std::string bus_pub = "tcp://127.0.0.1:5560";
  std::string bus_sub = "tcp://127.0.0.1:5561";
  std::string admin = "tcp://127.0.0.1:5562";    // admin REQ/REP endpoint rmbus binds
  std::string metrics = "127.0.0.1:9464";        // host:port of the metrics listener
  // Work maps from any src are taken (per-src order rules still apply). Off: the first src heard owns the work
  // map, and another takes over only after the owner was silent for 3 orchestrator periods.
  bool accept_any_orchestrator = false;
  // rm.schedule.changes (docs/protocol.md 4.3.1), opt-in: the schedule as changes every round, with a full
  // schedule every this many rounds (and first). 0: not published. rm.state is published as ever.
  int schedule_changes_full_every = 0;
  std::string log_level = "info";                // one of parse_log_level's names, stored lower-case
  decode_limit_settings limits;
  logging_settings logging;
  health_settings health;
  accounting_settings accounting;
  security_settings security;
  ha_settings ha;

  bool operator==(const runtime_settings&) const = default;
};

struct rm_config {
  core::scheduler_config scheduling;
  runtime_settings runtime;

  bool operator==(const rm_config&) const = default;
};

}  // namespace rmbus::config
