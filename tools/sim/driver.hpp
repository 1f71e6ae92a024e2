#pragma once
// The I/O shell of rmbus-sim: it joins the pure models (agent_model, orchestrator_model, recorder) to the
// real bus and the wall clock. Part of the executable only; the rmbus_sim library knows no sockets.
//
// One publisher (heartbeats and the work map) and one subscriber (rm.state, rm.nodes, rm.events), both
// connecting to the RM's forwarder. The subscriber's thread only decodes and keeps the newest rm.state and
// rm.nodes (complete snapshots: the newest supersedes the rest) and the events; the driver's thread owns the
// models and does everything else, waking at its next deadline (a heartbeat, a publication, a summary, the
// end) or when a schedule arrives, whichever is first.
//
// Two phases. Warm-up: every node heartbeats and an empty work map is published until the first rm.state
// arrives (the RM schedules only after its start-up gating, init_stability heartbeat intervals: 60 s on the
// embedded default); no rm.state within ready_timeout is exit status 3. Then the scenario runs, scenario
// time 0 being that moment: scenario ms = wall ms since then x speed.
//
// Thread-safety: run() is called once, from one thread.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "bus/curve.hpp"
#include "tools/sim/recorder.hpp"
#include "tools/sim/report.hpp"
#include "tools/sim/scenario.hpp"

namespace rmbus::sim {

struct driver_options {
  std::string bus_pub = "tcp://127.0.0.1:5560";
  std::string bus_sub = "tcp://127.0.0.1:5561";
  double speed = 1.0;
  std::chrono::milliseconds run_limit{60000};      // wall time of the scenario phase
  std::chrono::milliseconds ready_timeout{90000};  // wall time to wait for the first rm.state
  std::chrono::milliseconds summary_every{2000};   // 0: no progress lines
  std::string name = "rmbus-sim";                  // envelope src
  std::optional<bus::curve_client> curve;          // CURVE keys (roles agent,orchestrator); none: CURVE off
  bool drain_on_reclaim = false;  // drain processes given a reclaim_at_ms (orchestrator_model)
  // Delta work maps (docs/protocol.md 4.2.1): the full map every publish period as before, and between them
  // a delta on every step that changed the map; a full map at once when the RM asks (workmap_resync,
  // workmap_delta_refused naming this src).
  bool deltas = false;
};

struct driver_outcome {
  bool ready = false;  // an rm.state arrived during warm-up
  std::uint64_t full_maps = 0, deltas = 0, resyncs = 0;  // work maps published; full maps the RM asked for
  report_figures figures;
  std::string csv;
  std::string svg;
};

// Runs the scenario against the RM on the bus. Progress lines go to `progress`. `interrupted` is polled
// between steps (SIGINT/SIGTERM): the run then ends early and still reports. Throws zmq::error_t for an
// endpoint ZeroMQ refuses.
driver_outcome run_simulation(const scenario& sc, const driver_options& options, std::ostream& progress,
                              const std::function<bool()>& interrupted);

}  // namespace rmbus::sim
