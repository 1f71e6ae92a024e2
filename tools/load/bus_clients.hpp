#pragma once
// rmbus-load's ends of the bus: a publisher that stamps envelopes as every sender on the bus must (src, seq
// per topic, ts_ms), an observer that reads what the RM publishes, and the agents' heartbeat loop.
//
// Each owns its ZeroMQ socket on one thread (ZeroMQ sockets are not thread-safe): the heartbeat loop runs
// on a thread of its own, so agents stay on time while the main thread publishes work maps and waits.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "bus/curve.hpp"
#include "messages/epoch_fence.hpp"
#include "messages/heartbeat.hpp"
#include "messages/rm_nodes.hpp"
#include "messages/rm_state.hpp"
#include "messages/schedule_follower.hpp"

namespace rmbus::load {

using clock_type = std::chrono::steady_clock;

// Where a client connects, and its CURVE keys when the RM under test runs with CURVE (rmbus-load --curve).
struct bus_access {
  std::string endpoint;  // one, or several forwarders separated by commas (rmbus-load --forwarders)
  std::optional<bus::curve_client> curve;
};

class stamped_publisher {
 public:
  stamped_publisher(zmq::context_t& ctx, const bus_access& at, std::string src);
  // Encodes `msg` under a fresh envelope and sends [topic, body]. Returns the envelope's seq.
  template <class T>
  std::uint64_t publish(const std::string& topic, const T& msg) {
    auto env = next(topic);
    send(topic, encode(env, msg));
    return env.seq;
  }
  void send(const std::string& topic, const std::string& body);
  messages::envelope next(const std::string& topic);

 private:
  zmq::socket_t sock_;
  std::string src_;
  std::map<std::string, std::uint64_t> seq_;
};

// What the observer saw, with the steady-clock time it arrived.
struct observed_state {
  clock_type::time_point at;
  messages::rm_state state;
};
struct observed_nodes {
  clock_type::time_point at;
  std::size_t up = 0;
  std::size_t missing = 0;
  std::size_t total = 0;
};

// Reads what the RM publishes. A thread of its own receives and timestamps every message the moment it
// arrives; decoding happens later, on the caller's thread in wait(), so the time spent decoding one big
// rm.nodes never delays the timestamp of the rm.state behind it.
class observer {
 public:
  // Which topic carries the schedule: rm.state, or rm.schedule.changes followed by the snapshot-and-changes
  // rule (docs/protocol.md 4.3.1) while nothing subscribes to rm.state.
  enum class schedule_topic { state, changes };
  // Subscribes to the schedule's topic, rm.nodes, rm.cycle and `extra_topics`.
  observer(zmq::context_t& ctx, const bus_access& at, const std::vector<std::string>& extra_topics = {},
           schedule_topic schedule = schedule_topic::state);
  ~observer();
  // Takes what arrived, for up to `timeout`; returns as soon as `done()` holds (or at the deadline).
  bool wait(const std::function<bool()>& done, std::chrono::milliseconds timeout);

  std::optional<observed_state> last_state;
  std::optional<observed_nodes> last_nodes;
  std::map<std::uint64_t, clock_type::time_point> state_for_map;  // workmap_seq -> when its rm.state came
  std::set<std::string> ever_missing;                             // nodes ever reported missing or down
  bool probe_seen = false;                                        // rm.nodes named rmbus-load's probe node
  std::uint64_t extra_received = 0;                               // messages on the extra topics
  clock_type::time_point first_extra{}, last_extra{};
  bool decode_states = true;  // off during intake bursts: only counting matters there
  // The events phase: rm.state is not decoded, only its workmap_seq and epoch read (a schedule of 100,000 jobs
  // takes longer to decode than the 10 ms between two events); last_state stays as it was.
  bool peek_states = false;
  // rm.events asking this src for a full work map (workmap_resync, workmap_delta_refused; docs/protocol.md
  // 4.2.1): counted when the observer was made with rm.events among its extra topics.
  std::string orchestrator_src;
  std::uint64_t full_map_requests = 0;
  bool settling = false, settled = false;  // the RM's settle window began / ended (rm.events, as above)
  // HA: schedules are taken only from the highest epoch seen; maps echo it (docs/protocol.md 4.8).
  messages::epoch_fence fence;
  // schedule_topic::changes: the schedule followed; state_for_map is filled when a message is applied.
  messages::schedule_follower follower;
  // Copies dropped (connected to several forwarders, every message arrives once through each); read after
  // the observer is destroyed or while nothing arrives.
  std::uint64_t copies_dropped() const { return copies_dropped_.load(); }
  std::vector<double> round_total_ms;  // rm.cycle total_us of every pool round seen (apply_work + schedule)
  // The same rounds' stages, ms: How Much (with the job caps), What Of, preemption, defragmentation, and the
  // rest of the total (the work's apply, the plan).
  struct round_stages {
    double how_much = 0, what_of = 0, preempt = 0, defrag = 0, rest = 0;
  };
  std::vector<round_stages> round_stage_ms;
  // Per rm.schedule.changes message applied that is not full: the jobs it lists (new or changed) and removes.
  std::vector<double> changes_listed;

 private:
  struct arrival {
    std::string topic, body;
    clock_type::time_point at;
  };
  void take(const arrival& a);
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> copies_dropped_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<arrival> queue_;
  std::uint64_t extra_arrived_ = 0;  // counted by the receiving thread (bursts are not queued)
  clock_type::time_point first_extra_at_{}, last_extra_at_{};
  std::thread thread_;
};

// Sends every node's heartbeat once per `interval`, spread evenly over it, until stopped.
class heartbeat_loop {
 public:
  heartbeat_loop(zmq::context_t& ctx, const bus_access& at, std::vector<messages::heartbeat> nodes,
                 std::chrono::milliseconds interval);
  ~heartbeat_loop();
  void stop();
  std::uint64_t sent() const { return sent_.load(); }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> sent_{0};
  std::thread thread_;
};

}  // namespace rmbus::load
