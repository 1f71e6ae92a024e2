#pragma once
// Sample messages with every field (and every optional field) set, shared by the message tests. Values are
// chosen so that each integer width of MessagePack (fixint, uint8/16/32/64) shows up somewhere.

#include <cstdint>

#include "messages/admin.hpp"
#include "messages/heartbeat.hpp"
#include "messages/rm_cycle.hpp"
#include "messages/rm_event.hpp"
#include "messages/rm_nodes.hpp"
#include "messages/rm_state.hpp"
#include "messages/workmap.hpp"

namespace rmbus::messages::samples {

inline envelope env(std::uint64_t seq = 7, std::string src = "sample-src") {
  return envelope{1, seq, 1'700'000'000'123, std::move(src)};
}

// An rm.state job with what the metrics and the tally count of it, and a share of it on node n1.
inline share_schedule share_entry(const std::string& id, std::uint64_t quanta, share_status s) {
  return share_schedule{id, "n1", quanta, s, {}};
}
inline job_schedule job_entry(const std::string& id, const std::string& cls, job_status status,
                              std::uint64_t memory_mb, std::uint64_t given, std::uint64_t demand,
                              std::vector<share_schedule> shares = {}) {
  job_schedule j;
  j.id = id;
  j.class_name = cls;
  j.status = status;
  j.memory_mb = memory_mb;
  j.given = given;
  j.demand = demand;
  j.shares = std::move(shares);
  return j;
}

inline heartbeat full_heartbeat() { return heartbeat{"n01", "10.0.0.1", 65536, 98304, true, 32}; }
inline heartbeat bare_heartbeat() { return heartbeat{"n02", "10.0.0.2", 512, {}, {}, {}}; }

inline work_item job_item(std::string id, std::uint64_t submitted_ms) {
  work_item w;
  w.id = std::move(id);
  w.kind = work_kind::job;
  w.user = "alice";
  w.class_name = "normal";
  w.memory_mb = 30720;  // 30 GB
  w.submitted_ms = submitted_ms;
  w.state = work_state::running;
  w.max_processes = 10;
  w.threads = 4;
  w.items_total = 1000;
  w.items_done = 250;
  w.item_ms = 1200;
  w.processes = {
      work_process{"s-1", "n01", process_state::running, 15'000, 4'800, 65536},
      work_process{"s-2", "n02", process_state::initializing, 2'000, 0, std::nullopt},
  };
  return w;
}

inline workmap full_workmap() {
  workmap m;
  m.work.push_back(job_item("j1", 1'700'000'000'000));
  work_item svc;
  svc.id = "svc-7";
  svc.kind = work_kind::service;
  svc.user = "bob";
  svc.class_name = "";
  svc.memory_mb = 4096;
  svc.submitted_ms = 1'699'999'000'000;
  svc.state = work_state::waiting;
  svc.service_id = 7;
  svc.hosts = {"n01", "n02"};
  m.work.push_back(svc);
  work_item res;
  res.id = "r9";
  res.kind = work_kind::reservation;
  res.user = "carol";
  res.class_name = "reserve";
  res.memory_mb = 262144;
  res.state = work_state::completed;
  m.work.push_back(res);
  return m;
}

inline rm_state full_rm_state() {
  rm_state s;
  s.cycle = 4242;
  s.workmap_seq = 977;
  s.workmap_src = "orchestrator-1";
  s.jobs.push_back(job_schedule{"j1", job_status::scheduled, "", 30720,
                                {share_schedule{"s-1", "n01", 2, share_status::running, {}},
                                 share_schedule{"s-3", "n03", 2, share_status::new_, {}},
                                 share_schedule{"s-4", "n04", 2, share_status::preempt, {}},
                                 share_schedule{"s-5", "n05", 2, share_status::evict, {}}},
                                "alice", "normal", 4, 9, 3, "physics", ""});
  s.jobs.push_back(job_schedule{"j2", job_status::pending, "no free order-4 share in nodepool default", 61440, {},
                                "bob", "normal", 0, 2, 3, "", ""});
  s.jobs.push_back(job_schedule{"j3", job_status::refused, "memory 300000 MB exceeds largest machine", 300000, {},
                                "carol", "", 0, 0, 0, "", ""});
  return s;
}

inline rm_nodes full_rm_nodes() {
  rm_nodes n;
  const node_state states[] = {node_state::up,         node_state::missing,  node_state::down,
                               node_state::varied_off, node_state::quiesced, node_state::blacklisted};
  std::uint64_t i = 0;
  for (auto st : states) {
    ++i;
    n.nodes.push_back(node_report{"n0" + std::to_string(i), "default", i % 2 ? "default" : "nested-a", st,
                                  65536 * i, 4 * i, i, i - 1});
  }
  return n;
}

inline rm_cycle full_rm_cycle() {
  return rm_cycle{"default", 4242, 120, 200, 31, 5, 2, 150, 2300, 800, 70000, 73250};
}

inline rm_event full_rm_event() {
  return rm_event{"preempt", {{"job", "j1"}, {"share", "s-4"}, {"node", "n04"}, {"reason", "fair share"}}};
}

inline admin_request full_admin_request() {
  admin_request r;
  r.cmd = "whatif";
  value::map work;
  work["id"] = "hypo";
  work["kind"] = "job";
  work["user"] = "dave";
  work["class"] = "normal";
  work["memory_mb"] = 8192;
  work["submitted_ms"] = 0;
  work["state"] = "waiting";
  work["max_processes"] = 3;
  work["threads"] = 1;
  work["items_total"] = 0;
  work["items_done"] = 0;
  work["item_ms"] = 0;
  work["processes"] = value::array{};
  r.args["work"] = std::move(work);
  r.args["verbose"] = true;
  r.args["scale"] = -3;
  r.args["ratio"] = 0.25;
  r.args["nothing"] = value{};
  return r;
}

inline admin_reply full_admin_reply() {
  admin_reply r;
  r.ok = true;
  r.results["nodes"] = value::array{value{"n01"}, value{"n02"}};
  r.results["count"] = 2;
  return r;
}

}  // namespace rmbus::messages::samples
