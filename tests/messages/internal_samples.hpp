#pragma once
// Every internal message with every field set, shared by the internal codec tests. Values reach the wider
// MessagePack integer widths somewhere, as in samples.hpp.

#include <cstdint>

#include "messages/internal/payload.hpp"
#include "samples.hpp"

namespace rmbus::messages::samples {

inline node_entry full_node_entry(std::string node, node_liveness state = node_liveness::missing) {
  return node_entry{std::move(node), "alpha", "alpha-gpu", state, 3, 65536, 64, true};
}

inline node_ops full_node_ops() {
  return node_ops{{node_op{node_op_kind::update, "n01", "10.0.0.1", 98304, true, "alpha-gpu"},
                   node_op{node_op_kind::down, "n02", "", 0, false, ""},
                   node_op{node_op_kind::vary_off, "n03", "", 0, false, ""},
                   node_op{node_op_kind::vary_on, "n04", "", 0, false, ""},
                   node_op{node_op_kind::drain, "n05", "", 0, false, ""},
                   node_op{node_op_kind::undrain, "n06", "", 0, false, ""}}, {}};
}

inline node_changes full_node_changes() {
  return node_changes{70'000, {full_node_entry("n01"), full_node_entry("n02", node_liveness::down)}, 100'000, 17};
}

inline node_snapshot full_node_snapshot() {
  return node_snapshot{4'294'967'296, {full_node_entry("n01", node_liveness::up), full_node_entry("n02")}};
}

inline work_slice full_work_slice() {
  work_slice s;
  s.cycle = 300;
  s.now_ms = 1'700'000'000'999;
  s.other_np_mb = {{"alice", 61440}, {"bob", 0}};
  s.work = full_workmap().work;
  s.foreign_processes = {{"beta-n1", 2}, {"beta-n4", 1}};
  return s;
}

inline round_start full_round_start() {
  return round_start{12, {"alpha", "beta"}, {refused_work{"j9", "carol", "Cannot find class x for the work"}}, 977,
                     "orchestrator-1"};
}

inline pool_plan full_pool_plan() {
  pool_plan p;
  p.cycle = 12;
  p.pool = "alpha";
  p.quantum_mb = 15360;
  p.total_us = 31'800;
  p.how_much_us = 9'000;
  p.what_of_us = 12'000;
  p.preempt_us = 300;
  p.defrag_us = 70'000;
  p.jobs_count = 2;
  p.nodes = 10'000;
  p.given = 40;
  p.preempted = 1;
  p.evicted = 2;
  const auto state = full_rm_state();
  p.jobs.assign(state.jobs.begin(), state.jobs.end());
  p.np_mb = {{"alice", 30720}};
  p.machines = {machine_summary{"n01", "alpha", machine_status::up, false, 65536, 4, 1},
                machine_summary{"n02", "alpha-gpu", machine_status::varied_off, true, 32768, 2, 0},
                machine_summary{"n03", "alpha", machine_status::down, false, 32768, 2, 2},
                machine_summary{"n04", "alpha", machine_status::blacklisted, false, 32768, 2, 0}};
  p.machines_complete = true;
  p.generation = 1'700'000'000'123;
  return p;
}

inline admin_query full_admin_query() {
  value::map args;
  args["job"] = value{"j1"};
  args["work"] = value{value::map{{"id", value{"w"}}, {"memory_mb", value{std::uint64_t{4096}}}}};
  return admin_query{42, "explain", std::move(args)};
}

inline admin_answer full_admin_answer() {
  value::map result;
  result["nodes"] = value{value::array{value{"n1"}, value{"n2"}}};
  result["unknown"] = value{value::array{}};
  result["negative"] = value{std::int64_t{-5}};
  return admin_answer{42, "eviction", std::move(result)};
}

inline vary_request full_vary_request() { return vary_request{43, true, {"n1", "n2"}}; }

inline recovered_nodes full_recovered_nodes() {
  return recovered_nodes{{recovered_node{"n1", 65536}, recovered_node{"n2", 0}}};
}

// node_changes naming forgotten nodes (the optional key present).
inline node_changes node_changes_with_forgotten() {
  auto c = full_node_changes();
  c.forgotten = {"storm-1", "storm-2"};
  return c;
}

inline node_ops node_ops_forget() { return node_ops{{node_op{node_op_kind::forget, "storm-1", "", 0, false, ""}}, {}}; }

inline machines_forgotten full_machines_forgotten() { return machines_forgotten{"alpha", {"storm-1", "storm-2"}, {"n7"}}; }

}  // namespace rmbus::messages::samples
