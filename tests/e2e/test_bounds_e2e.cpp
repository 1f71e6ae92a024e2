// End-to-end bounds on hostile input (docs/reliability.md, "Hostile input"): the real rmbus on loopback is
// sent a work map of a million processes, a work map of more items than max_array_len, a 100 MB body, a 10 MB
// string inside a heartbeat and inside a work map, and heartbeats from far more distinct node names than
// max_nodes. For each: the RM stays up, publishes the bad_message or limit event naming what was wrong, keeps
// scheduling (a new job still gets its shares), and its resident memory (VmRSS of the rmbus process) stays
// within a stated bound of its level before the flood. The figures are printed for docs/reliability.md.
//
// Waits are on published messages with generous deadlines (shared 2-core machine); nothing asserts a timing.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <msgpack.hpp>
#include <zmq.hpp>

#include "bus/publisher.hpp"
#include "bus/subscriber.hpp"
#include "messages/rm_event.hpp"
#include "messages/rm_nodes.hpp"
#include "messages/heartbeat.hpp"
#include "messages/topics.hpp"
#include "messages/workmap.hpp"

#include "tests/e2e/rm_fixture.hpp"

using namespace std::chrono_literals;
using rmbus::e2e::layout;
using rmbus::e2e::rm_fixture;
namespace ts = rmbus::test_support;
namespace msg = rmbus::messages;

namespace {

constexpr auto deadline = 60s;
constexpr std::size_t mb = 1024 * 1024;

// Resident memory of a process in MB, from /proc/<pid>/status (VmRSS is in kB); 0 when unreadable.
double rss_mb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

// Peak resident memory of a process in MB (VmHWM); 0 when unreadable.
double peak_mb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

ts::job_spec job(const std::string& id, const std::string& user, std::uint64_t max_processes) {
  ts::job_spec j;
  j.id = id;
  j.user = user;
  j.class_name = "normal";
  j.memory_mb = 1024;
  j.max_processes = max_processes;
  return j;
}

// The RM's rm.events other than node life-cycle ones (node_up / node_missing / node_down), which a storm of
// names produces by the hundred thousand: the fake cluster keeps only the first 100,000 events of any kind.
class event_watch {
 public:
  event_watch(zmq::context_t& ctx, const std::string& endpoint) {
    rmbus::bus::subscriber_options so;
    so.name = "bounds-events";
    so.endpoint = endpoint;
    so.topics = {std::string{msg::topics::rm_events}};
    rmbus::bus::subscriber_handlers h;
    h.on_message = [this](rmbus::bus::bus_message&& m) {
      auto e = msg::decode_rm_event(m.topic, m.body);
      if (!e || e.value().kind.rfind("node_", 0) == 0) return;
      std::lock_guard lock{mutex_};
      events_.push_back(std::move(e.value()));
    };
    sub_ = std::make_unique<rmbus::bus::subscriber>(ctx, so, h);
    sub_->start();
  }
  std::vector<msg::rm_event> events() const {
    std::lock_guard lock{mutex_};
    return events_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<msg::rm_event> events_;
  std::unique_ptr<rmbus::bus::subscriber> sub_;
};

// How many events of `kind` have a detail `key` containing `part`, and the last of them.
std::size_t count_events(const event_watch& w, const std::string& kind, const std::string& key,
                         const std::string& part, msg::rm_event* last = nullptr) {
  std::size_t n = 0;
  for (const auto& e : w.events()) {
    if (e.kind != kind) continue;
    auto it = e.detail.find(key);
    if (it == e.detail.end() || it->second.find(part) == std::string::npos) continue;
    ++n;
    if (last) *last = e;
  }
  return n;
}

std::optional<msg::rm_event> find_event(const event_watch& w, const std::string& kind, const std::string& key,
                                        const std::string& part) {
  msg::rm_event last;
  if (count_events(w, kind, key, part, &last) == 0) return std::nullopt;
  return last;
}

// Waits (bounded) for a new rm.state in which `job_id` holds `shares` active shares: the RM still schedules.
bool still_schedules(ts::fake_cluster& c, const std::string& job_id, std::size_t shares) {
  return c.wait_state([&](const msg::rm_state& s) { return ts::active_shares(s, job_id) == shares; }, deadline);
}

// The envelope's four keys, packed as the first entries of a body map of `entries` entries in all.
void pack_envelope(msgpack::packer<msgpack::sbuffer>& pk, const msg::envelope& env, std::uint32_t entries) {
  pk.pack_map(entries);
  pk.pack("v");
  pk.pack(std::uint64_t{env.v});
  pk.pack("seq");
  pk.pack(env.seq);
  pk.pack("ts_ms");
  pk.pack(env.ts_ms);
  pk.pack("src");
  pk.pack(env.src);
}

// A work map of one job holding `processes` processes, packed straight into its bytes (a million process
// structs would cost the test more than the body does).
std::string workmap_with_processes(const msg::envelope& env, std::size_t processes) {
  msgpack::sbuffer buf(64 * mb);
  msgpack::packer<msgpack::sbuffer> pk{buf};
  pack_envelope(pk, env, 5);
  pk.pack("work");
  pk.pack_array(1);
  pk.pack_map(6);
  pk.pack("id");
  pk.pack("flood-1");
  pk.pack("kind");
  pk.pack("job");
  pk.pack("user");
  pk.pack("mallory");
  pk.pack("memory_mb");
  pk.pack(std::uint64_t{1024});
  pk.pack("state");
  pk.pack("running");
  pk.pack("processes");
  pk.pack_array(static_cast<std::uint32_t>(processes));
  std::string id;
  for (std::size_t i = 0; i < processes; ++i) {
    id = "p" + std::to_string(i);
    pk.pack_map(3);
    pk.pack("id");
    pk.pack(id);
    pk.pack("node");
    pk.pack("a1");
    pk.pack("state");
    pk.pack("running");
  }
  return {buf.data(), buf.size()};
}

// A work map whose `work` array declares `items` entries, each an empty map (one byte), so the array's length
// is what is wrong, not the body's size.
std::string workmap_with_items(const msg::envelope& env, std::size_t items) {
  msgpack::sbuffer buf(items + 256);
  msgpack::packer<msgpack::sbuffer> pk{buf};
  pack_envelope(pk, env, 5);
  pk.pack("work");
  pk.pack_array(static_cast<std::uint32_t>(items));
  for (std::size_t i = 0; i < items; ++i) pk.pack_map(0);
  return {buf.data(), buf.size()};
}

// A body with a valid envelope and one more key `key` holding a string of `bytes` bytes.
std::string body_with_string(const msg::envelope& env, const std::string& key, std::size_t bytes) {
  msgpack::sbuffer buf(bytes + 256);
  msgpack::packer<msgpack::sbuffer> pk{buf};
  pack_envelope(pk, env, 5);
  pk.pack(key);
  pk.pack(std::string(bytes, 'x'));
  return {buf.data(), buf.size()};
}

// A heartbeat whose node name is `bytes` bytes long.
std::string heartbeat_with_long_name(const msg::envelope& env, std::size_t bytes) {
  msg::heartbeat hb;
  hb.node = std::string(bytes, 'n');
  hb.ip = "10.0.0.9";
  hb.memory_mb = 8192;
  return msg::encode(env, hb);
}

// Publishes `encode` on `topic` until an event satisfying `seen` arrives (a publisher's first messages may be
// dropped before its subscription reached it), at most `attempts` times, each waiting up to one round.
bool publish_until(rmbus::bus::publisher& pub, ts::fake_cluster& c, std::string_view topic,
                   const rmbus::bus::publisher::encoder& encode, const std::function<bool()>& seen, int attempts = 10) {
  for (int i = 0; i < attempts && !seen(); ++i) {
    pub.publish_with(topic, encode);
    c.wait_state([](const msg::rm_state&) { return true; }, 5s);  // the next round (its predicate runs locked)
  }
  return seen();
}

// A running RM with alice's job scheduled, and its memory before any hostile input.
struct scene {
  rm_fixture f;
  zmq::context_t ctx;
  rmbus::bus::publisher pub;
  event_watch watch;
  double before_mb = 0;

  // `extra_config`: appended to the fixture's configuration (e.g. a [limits] table).
  explicit scene(std::string extra_config = {}, layout how = layout::single)
      : f(how, {}, std::move(extra_config)), pub(ctx, options(f.bus_pub())), watch(ctx, f.bus_sub()) {
    f.cluster().start();
    f.cluster().submit(job("alice-1", "alice", 2));
    REQUIRE(still_schedules(f.cluster(), "alice-1", 2));
    before_mb = rss_mb(f.rm_pid());
    REQUIRE(before_mb > 0);
  }
  static rmbus::bus::publisher_options options(const std::string& endpoint) {
    rmbus::bus::publisher_options po;
    po.name = "mallory";
    po.endpoint = endpoint;
    po.sndhwm = 0;  // never drop on our side: the RM's own bounds are what is tested
    return po;
  }
  ts::fake_cluster& c() { return f.cluster(); }
  double now_mb() { return rss_mb(f.rm_pid()); }
};

// How far above its level before any flood the RM's resident memory may be after each of `rounds` floods. A
// refused body is freed at once, but rmbus keeps freed blocks below 64 MB in glibc's heaps for reuse
// (tools/rmbus_main.cpp), and ZeroMQ's buffer of a body is allocated on its I/O thread and freed on another,
// so a block may stay cached per allocator arena that saw one: measured +43 MB after one round, and up to
// +85 MB after four (a third arena keeping a 32 MB block), never more. Repeats are not required to add
// nothing: which arena serves a buffer is glibc's choice.
constexpr double cache_bound_mb = 128;
// The storm: 100,000 refused heartbeats may leave no more than this above the level at the bound.
constexpr double flat_bound_mb = 32;
constexpr int rounds = 4;

}  // namespace

TEST_CASE("a work map of a million processes, one of more items than max_array_len and one with a 10 MB string are refused with bad_message events and memory stays flat") {
  scene s;
  // Each flood twice: the first may leave the allocator's cache behind (bounded), the second must add nothing.
  std::vector<double> after_mb;
  for (int round = 1; round <= rounds; ++round) {
    // A million processes of ~30 bytes each: a body of about 32 MB, beyond max_body_bytes (16 MiB), so it is
    // refused as a whole before anything is unpacked.
    const auto bodies = count_events(s.watch, "bad_message", "error", "exceeds max_body_bytes");
    const auto t0 = std::chrono::steady_clock::now();
    std::size_t million_size = 0;
    REQUIRE(publish_until(
        s.pub, s.c(), msg::topics::workmap,
        [&](const msg::envelope& env) {
          auto body = workmap_with_processes(env, 1'000'000);
          million_size = body.size();
          return body;
        },
        [&] { return count_events(s.watch, "bad_message", "error", "exceeds max_body_bytes") > bodies; }));
    std::printf("bounds: a million processes: body %.1f MB (built and sent in %.1f s)\n",
                static_cast<double>(million_size) / mb,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    CHECK(million_size > 16 * mb);
    auto ev = find_event(s.watch, "bad_message", "error", "exceeds max_body_bytes");
    CHECK(ev->detail.at("topic") == "orchestrator.workmap");

    // 1,000,001 items of one byte each: a 1 MB body within max_body_bytes whose `work` array is one longer
    // than max_array_len (1,000,000).
    const auto arrays = count_events(s.watch, "bad_message", "error", "max_array_len");
    REQUIRE(publish_until(s.pub, s.c(), msg::topics::workmap,
                          [](const msg::envelope& env) { return workmap_with_items(env, 1'000'001); },
                          [&] { return count_events(s.watch, "bad_message", "error", "max_array_len") > arrays; }));
    ev = find_event(s.watch, "bad_message", "error", "max_array_len");
    CHECK(ev->detail.at("topic") == "orchestrator.workmap");
    CHECK(ev->detail.at("error").find("limit 1000000") != std::string::npos);

    // A 10 MB string inside a work map (10,485,760 bytes > max_string_bytes, 65,536).
    const auto strings = count_events(s.watch, "bad_message", "error", "max_string_bytes");
    REQUIRE(publish_until(s.pub, s.c(), msg::topics::workmap,
                          [](const msg::envelope& env) { return body_with_string(env, "work", 10 * mb); },
                          [&] { return count_events(s.watch, "bad_message", "error", "max_string_bytes") > strings; }));
    ev = find_event(s.watch, "bad_message", "error", "max_string_bytes");
    CHECK(ev->detail.at("topic") == "orchestrator.workmap");

    // Still scheduling: the orchestrator's own map is taken again, and a new job gets its shares.
    const auto id = "bob-" + std::to_string(round);
    s.c().submit(job(id, "bob", 2));
    CHECK(still_schedules(s.c(), id, 2));
    CHECK(ts::active_shares(*s.c().last_state(), "alice-1") == 2);
    after_mb.push_back(s.now_mb());
    std::printf("bounds: work maps, round %d: RSS before %.1f MB, after %.1f MB\n", round, s.before_mb,
                after_mb.back());
  }
  for (double a : after_mb) CHECK(a < s.before_mb + cache_bound_mb);
}

TEST_CASE("a 100 MB body and a heartbeat with a 10 MB node name are refused with bad_message events and memory stays flat") {
  scene s;
  std::vector<double> after_mb;
  for (int round = 1; round <= rounds; ++round) {
    // 100 MB: refused by the bus subscriber on its size alone (max_body_bytes, 16 MiB), never copied.
    const auto bodies = count_events(s.watch, "bad_message", "error", "exceeds max_body_bytes");
    std::size_t body_size = 0;
    REQUIRE(publish_until(
        s.pub, s.c(), msg::topics::heartbeat,
        [&](const msg::envelope& env) {
          auto body = body_with_string(env, "pad", 100 * mb);
          body_size = body.size();
          return body;
        },
        [&] { return count_events(s.watch, "bad_message", "error", "exceeds max_body_bytes") > bodies; }, 3));
    auto ev = find_event(s.watch, "bad_message", "error", "exceeds max_body_bytes");
    CHECK(ev->detail.at("error").find("body of " + std::to_string(body_size) + " bytes") != std::string::npos);
    CHECK(ev->detail.at("topic") == "agent.heartbeat");
    const double after_body_mb = s.now_mb();

    // A heartbeat naming a node of 10 MB (10,485,760 bytes > max_string_bytes, 65,536).
    const auto strings = count_events(s.watch, "bad_message", "error", "max_string_bytes");
    REQUIRE(publish_until(s.pub, s.c(), msg::topics::heartbeat,
                          [](const msg::envelope& env) { return heartbeat_with_long_name(env, 10 * mb); },
                          [&] { return count_events(s.watch, "bad_message", "error", "max_string_bytes") > strings; }));
    ev = find_event(s.watch, "bad_message", "error", "max_string_bytes");
    CHECK(ev->detail.at("topic") == "agent.heartbeat");

    const auto id = "bob-" + std::to_string(round);
    s.c().submit(job(id, "bob", 2));
    CHECK(still_schedules(s.c(), id, 2));
    after_mb.push_back(s.now_mb());
    std::printf("bounds: 100 MB body and 10 MB name, round %d: RSS before %.1f MB, after the body %.1f MB, after "
                "both %.1f MB\n",
                round, s.before_mb, after_body_mb, after_mb.back());
  }
  for (double a : after_mb) CHECK(a < s.before_mb + cache_bound_mb);
}

TEST_CASE("heartbeats from 100,000 invented node names fill max_nodes, the rest are refused with a limit event, and memory stops growing at the bound") {
  scene s;
  constexpr std::size_t storm = 100'000;  // with the 6 real nodes, 6 more than max_nodes (100,000)
  // Sends heartbeats from `count` names `prefix`0.. at a bounded pace: 500 per 20 ms, at most 25,000 a second,
  // what one intake drains on this shared machine. Faster storms queue in the intake's mailbox, which this
  // test would measure instead of the table's bound (docs/reliability.md: an open finding).
  constexpr std::size_t pace_batch = 500;
  auto send_storm = [&](const std::string& prefix, std::size_t count) {
    msg::heartbeat hb;
    hb.ip = "10.1.0.1";
    hb.memory_mb = 8192;
    for (std::size_t i = 0; i < count; ++i) {
      hb.node = prefix + std::to_string(i);
      s.pub.publish(msg::topics::heartbeat, hb);
      // Pacing the sender, not waiting for a result.
      if (i % pace_batch == pace_batch - 1) std::this_thread::sleep_for(20ms);
    }
  };
  const auto limit_event = [&] { return find_event(s.watch, "limit", "what", "max_nodes"); };

  // Storm A until the intake's table is full: rm.nodes lists 100,000 nodes (the bus may drop some of a pass,
  // so passes repeat; a limit event for storm A's last names may itself be lost among its 100,000 node_up
  // events on rm.events, so it is not waited for here).
  const auto t0 = std::chrono::steady_clock::now();
  const auto full = [](const msg::rm_nodes& n) { return n.nodes.size() == 100'000; };
  for (int pass = 0; pass < 5; ++pass) {
    send_storm("storm-a-", storm);
    const bool is_full = s.c().wait_nodes(full, 15s);
    const auto nodes = s.c().last_nodes();
    std::printf("bounds: storm pass %d: rm.nodes lists %zu nodes, RSS %.1f MB\n", pass + 1,
                nodes ? nodes->nodes.size() : 0, s.now_mb());
    if (is_full) break;
  }
  REQUIRE(s.c().last_nodes()->nodes.size() == 100'000);
  // Measured once the storm's nodes, silent since, have gone down: the intake's table at its bound, at rest.
  const auto storm_down = [](const msg::rm_nodes& n) {
    std::size_t storm_nodes = 0, down = 0;
    for (const auto& r : n.nodes) {
      if (r.node.rfind("storm-a-", 0) != 0) continue;
      ++storm_nodes;
      down += r.state == msg::node_state::down ? 1 : 0;
    }
    return n.nodes.size() == 100'000 && down == storm_nodes;
  };
  REQUIRE(s.c().wait_nodes(storm_down, deadline));
  const double full_mb = s.now_mb();
  std::printf("bounds: storm of %zu names filled max_nodes in %.1f s; RSS before %.1f MB, at the bound %.1f MB\n",
              storm, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), s.before_mb,
              full_mb);

  // Storm B: 100,000 further new names, every one refused; memory does not grow with them.
  const auto events_before = s.watch.events().size();
  send_storm("storm-b-", storm);
  const auto storm_b_refused = [&] {
    const auto ev = s.watch.events();
    for (std::size_t i = events_before; i < ev.size(); ++i) {
      const auto it = ev[i].detail.find("node");
      if (ev[i].kind == "limit" && it != ev[i].detail.end() && it->second.rfind("storm-b-", 0) == 0) return true;
    }
    return false;
  };
  for (int round = 0; round < 10 && !storm_b_refused(); ++round)
    s.c().wait_state([](const msg::rm_state&) { return true; }, 5s);
  if (!storm_b_refused()) {
    const auto ev = s.watch.events();
    std::printf("bounds: no limit event for storm B; %zu events since, the last:\n", ev.size() - events_before);
    for (std::size_t i = ev.size() > events_before + 5 ? ev.size() - 5 : events_before; i < ev.size(); ++i) {
      std::string text = ev[i].kind;
      for (const auto& [k, v] : ev[i].detail) text += " " + k + "=" + v.substr(0, 60);
      std::printf("  %s\n", text.c_str());
    }
  }
  REQUIRE(storm_b_refused());
  CHECK(limit_event()->detail.at("limit") == "100000");
  std::size_t refused = 0;
  for (const auto& e : s.watch.events())
    if (e.kind == "limit") refused += std::stoul(e.detail.at("refused"));
  std::printf("bounds: heartbeats refused at the bound (limit events' sum): %zu\n", refused);
  // None of storm B's names was kept: rm.nodes still lists the table as it was.
  REQUIRE(s.c().wait_nodes([](const msg::rm_nodes&) { return true; }, deadline));
  const auto listed = *s.c().last_nodes();
  CHECK(listed.nodes.size() == 100'000);
  CHECK(std::none_of(listed.nodes.begin(), listed.nodes.end(),
                     [](const msg::node_report& r) { return r.node.rfind("storm-b-", 0) == 0; }));

  // Still scheduling on the real nodes.
  s.c().submit(job("bob-1", "bob", 2));
  CHECK(still_schedules(s.c(), "bob-1", 2));
  const double after_mb = s.now_mb();
  std::printf("bounds: storm B of %zu more names: RSS %.1f MB (at the bound %.1f MB; bound: +%.0f MB)\n", storm,
              after_mb, full_mb, flat_bound_mb);
  CHECK(after_mb < full_mb + flat_bound_mb);
}

TEST_CASE("a storm fills max_nodes and a real new node is refused, then after forget_down_ms the invented names are forgotten and the real node is admitted and gets work, and nothing running is lost or double-booked") {
  // A table of 1,000 nodes; a node down for 3 s (down itself after 4 ticks of 300 ms) is forgotten.
  scene s{"\n[limits]\nmax_nodes = 1000\nforget_down_ms = 3000\n"};
  // An unmanaged reservation on a real node whose agent then dies: it must outlive the storm's forgetting.
  s.c().submit(rmbus::e2e::job("keep-1", "rita", "reserve", 8192, 1, msg::work_kind::reservation));
  REQUIRE(s.c().wait_state([](const msg::rm_state& st) { return ts::active_shares(st, "keep-1") == 1; }, deadline));
  const auto reserved_node = ts::nodes_of(*s.c().last_state(), "keep-1").at(0);
  s.c().set_alive(reserved_node, false);

  // 1,000 invented names, paced as in the storm above: 994 fill the table beside the 6 real nodes.
  msg::heartbeat hb;
  hb.ip = "10.1.0.1";
  hb.memory_mb = 8192;
  for (int pass = 0; pass < 5; ++pass) {
    for (int i = 0; i < 1000; ++i) {
      hb.node = "storm-" + std::to_string(i);
      s.pub.publish(msg::topics::heartbeat, hb);
      if (i % 500 == 499) std::this_thread::sleep_for(20ms);  // pacing the sender, not waiting for a result
    }
    if (s.c().wait_nodes([](const msg::rm_nodes& n) { return n.nodes.size() == 1000; }, 10s)) break;
  }
  REQUIRE(s.c().last_nodes()->nodes.size() == 1000);

  // A real new node: refused while the table is full (its name in a max_nodes limit event).
  auto spec = rmbus::e2e::node_quanta();
  spec["c1"] = 8;
  s.c().add_node("c1", 8192);
  const auto c1_refused = s.c().wait_event(
      [](const msg::rm_event& e) {
        return e.kind == "limit" && e.detail.count("node") && e.detail.at("node") == "c1";
      },
      deadline);
  REQUIRE(c1_refused);
  CHECK(c1_refused->detail.at("what") == "max_nodes");

  // After the forget time: no invented name is listed, c1 is, up; the reservation's dead node is still
  // listed (its machine holds the reservation, so its scheduler kept it).
  const auto t0 = std::chrono::steady_clock::now();
  const auto forgotten_and_admitted = [&](const msg::rm_nodes& n) {
    bool c1_up = false, reserved_listed = false;
    for (const auto& r : n.nodes) {
      if (r.node.rfind("storm-", 0) == 0) return false;
      if (r.node == "c1") c1_up = r.state == msg::node_state::up;
      if (r.node == reserved_node) reserved_listed = true;
    }
    return c1_up && reserved_listed;
  };
  REQUIRE(s.c().wait_nodes(forgotten_and_admitted, deadline));
  std::printf("forget: the storm's names forgotten and c1 admitted %.1f s after c1 was refused\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  const auto listed = *s.c().last_nodes();
  CHECK(listed.nodes.size() == 7);  // the 6 real nodes (one of them down) and c1
  // The node_forgotten events count every invented name, in a few events, never one per node (the last
  // may follow the rm.nodes that no longer lists its names by a tick: waited for, a round at a time).
  std::size_t forgotten = 0, events = 0;
  for (int round = 0; round < 20 && forgotten < 994; ++round) {
    if (round > 0) s.c().wait_state([](const msg::rm_state&) { return true; }, 5s);
    forgotten = events = 0;
    for (const auto& e : s.c().events())
      if (e.kind == "node_forgotten") {
        ++events;
        forgotten += std::stoul(e.detail.at("count"));
        CHECK(e.detail.at("forget_down_ms") == "3000");
      }
  }
  std::printf("forget: %zu nodes forgotten in %zu node_forgotten events\n", forgotten, events);
  CHECK(forgotten == 994);  // 1,000 - 6 real ones
  CHECK(events < 50);

  // c1 gets work: carol's whole-machine processes (order 8) fill the free machines of pool alpha: a1..a4
  // less the reservation's dead one, less the one holding alice's 2 quanta, plus c1.
  s.c().submit(rmbus::e2e::job("carol-1", "carol", "normal", 8192, 10));
  REQUIRE(s.c().wait_state(
      [](const msg::rm_state& st) {
        const auto nodes = ts::nodes_of(st, "carol-1");
        return std::find(nodes.begin(), nodes.end(), "c1") != nodes.end();
      },
      deadline));
  const auto state = *s.c().last_state();
  CHECK(ts::active_shares(state, "alice-1") == 2);  // nothing running lost
  CHECK(ts::active_shares(state, "keep-1") == 1);   // the reservation on the dead node kept
  CHECK(ts::double_bookings(state, spec).empty());
}

namespace {

// The measurement behind docs/reliability.md's storm-rate figures (hidden: run by hand, `test_bounds_e2e
// "[.storm_rate]"`), resident memory (now, and peak: VmHWM) of the RM under storms of new names:
//   paced: 100,000 names at 100,000 a second (2,000 per 20 ms; passes repeat until the table is full), then
//          100,000 further names, refused at the bound, as fast as one publisher sends;
//   unpaced: three passes of 100,000 names, each as fast as one publisher sends (far faster than the intake
//          admits new nodes), each followed by up to 10 s for rm.nodes to list the full table.
void storm_rate(const std::string& extra_config, const char* label, bool unpaced, layout how = layout::single) {
  scene s{extra_config, how};
  msg::heartbeat hb;
  hb.ip = "10.1.0.1";
  hb.memory_mb = 8192;
  auto send = [&](const std::string& prefix, std::size_t count, std::size_t per_20ms) {
    for (std::size_t i = 0; i < count; ++i) {
      hb.node = prefix + std::to_string(i);
      s.pub.publish(msg::topics::heartbeat, hb);
      if (i % per_20ms == per_20ms - 1) std::this_thread::sleep_for(20ms);  // pacing the sender
    }
  };
  const auto shed = [&] {
    std::size_t n = 0;
    for (const auto& e : s.watch.events())
      if (e.kind == "limit" && e.detail.at("what") == "max_heartbeats_queued") n += std::stoul(e.detail.at("refused"));
    return n;
  };
  const auto full = [](const msg::rm_nodes& n) { return n.nodes.size() == 100'000; };
  const auto listed = [&] { return s.c().last_nodes() ? s.c().last_nodes()->nodes.size() : 0; };
  if (unpaced) {
    for (int pass = 1; pass <= 3; ++pass) {
      send("storm-a-", 100'000, 100'000);
      s.c().wait_nodes(full, 10s);
      std::printf("storm rate (%s): pass %d: rm.nodes lists %zu, RSS %.1f MB, peak %.1f MB, %zu shed%s\n", label, pass,
                  listed(), s.now_mb(), peak_mb(s.f.rm_pid()), shed(),
                  how == layout::split_proxy
                      ? (", forwarder (rmbus-proxy) peak " + std::to_string(peak_mb(s.f.proxy_pid())) + " MB").c_str()
                      : "");
    }
    s.c().submit(job("bob-1", "bob", 2));
    CHECK(still_schedules(s.c(), "bob-1", 2));
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  int passes = 0;
  for (; passes < 5; ++passes) {
    send("storm-a-", 100'000, 2'000);
    if (s.c().wait_nodes(full, 15s)) break;
  }
  REQUIRE(listed() == 100'000);
  const double fill_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(s.c().wait_nodes(
      [](const msg::rm_nodes& n) {
        return std::count_if(n.nodes.begin(), n.nodes.end(),
                             [](const auto& r) { return r.state == msg::node_state::down; }) >= 99'994;
      },
      deadline));
  const double full_mb = s.now_mb();
  const double full_peak_mb = peak_mb(s.f.rm_pid());
  const auto t1 = std::chrono::steady_clock::now();
  send("storm-b-", 100'000, 100'000);  // unpaced
  const double sent_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  // Settled: the RM still schedules (every queued heartbeat has been taken by then).
  s.c().submit(job("bob-1", "bob", 2));
  CHECK(still_schedules(s.c(), "bob-1", 2));
  std::printf("storm rate (%s): table full after %d pass(es) in %.1f s: RSS %.1f MB, peak %.1f MB; storm B sent in "
              "%.2f s: RSS %.1f MB, peak %.1f MB; %zu heartbeats shed\n",
              label, passes + 1, fill_s, full_mb, full_peak_mb, sent_s, s.now_mb(), peak_mb(s.f.rm_pid()), shed());
}

}  // namespace

TEST_CASE("at the in-flight bound a storm of new names is shed and no node heartbeating on time goes missing") {
  // A queue of 20 heartbeats toward the intake and a table of 2,000 names, so the storm keeps the queue full.
  scene s{"\n[limits]\nmax_heartbeats_queued = 20\nmax_nodes = 2000\n"};
  const auto missing_before = s.c().events().size();
  msg::heartbeat hb;
  hb.ip = "10.1.0.1";
  hb.memory_mb = 8192;
  // 3 s of new names (10 heartbeat intervals of 300 ms; node_stability is 4), 1,000 every millisecond at most.
  std::size_t sent = 0;
  const auto until = std::chrono::steady_clock::now() + 3s;
  while (std::chrono::steady_clock::now() < until) {
    for (int i = 0; i < 1000; ++i) {
      hb.node = "storm-" + std::to_string(sent++);
      s.pub.publish(msg::topics::heartbeat, hb);
    }
    std::this_thread::sleep_for(1ms);  // pacing the sender, not waiting for a result
  }
  // The queue was full: heartbeats were shed, and said so.
  const auto shed_event = s.c().wait_event(
      [](const msg::rm_event& e) { return e.kind == "limit" && e.detail.count("what") && e.detail.at("what") == "max_heartbeats_queued"; },
      deadline);
  REQUIRE(shed_event);
  std::size_t shed = 0, missing = 0;
  const auto events = s.c().events();
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    if (e.kind == "limit" && e.detail.count("what") && e.detail.at("what") == "max_heartbeats_queued") shed += std::stoul(e.detail.at("refused"));
    if (i >= missing_before && (e.kind == "node_missing" || e.kind == "node_down") && e.detail.count("node") &&
        rmbus::e2e::node_quanta().count(e.detail.at("node")))
      ++missing;
  }
  std::printf("in-flight bound: %zu new names sent in 3 s, %zu heartbeats shed, %zu real nodes reported missing\n", sent, shed, missing);
  CHECK(shed > 0);
  CHECK(missing == 0);
  s.c().submit(job("bob-1", "bob", 2));
  CHECK(still_schedules(s.c(), "bob-1", 2));
}

TEST_CASE("storm rate bounded: 100000 new names a second at the table bound with the default in-flight bound", "[.storm_rate]") {
  storm_rate({}, "paced, bounded", false);
}

TEST_CASE("storm rate unbounded: the same with an in-flight bound too large to matter", "[.storm_rate]") {
  storm_rate("\n[limits]\nmax_heartbeats_queued = 1000000000\n", "paced, unbounded", false);
}

TEST_CASE("storm rate unpaced bounded: storm A as fast as one publisher sends", "[.storm_rate]") {
  storm_rate({}, "unpaced, bounded", true);
}

TEST_CASE("storm rate unpaced unbounded: storm A as fast as one publisher sends", "[.storm_rate]") {
  storm_rate("\n[limits]\nmax_heartbeats_queued = 1000000000\n", "unpaced, unbounded", true);
}

TEST_CASE("storm rate unpaced bounded behind a standalone forwarder: where the memory sits", "[.storm_rate]") {
  storm_rate({}, "unpaced, bounded, rmbus-proxy", true, layout::split_proxy);
}
