#include "tools/load/bus_clients.hpp"

#include <algorithm>
#include <future>

#include <zmq_addon.hpp>

#include "bus/endpoint_list.hpp"
#include "bus/sequence_tracker.hpp"
#include "messages/detail/peek.hpp"
#include "messages/envelope.hpp"
#include "messages/rm_cycle.hpp"
#include "messages/rm_event.hpp"

#include "messages/topics.hpp"

namespace rmbus::load {

namespace {
// The RM's rm.nodes at 200,000 nodes is far above the bus's default body limit; the observer reads its own.
const messages::decode_limits dedup_limits{256u << 20, 1u << 20, 10'000'000, 100'000, 16};

std::uint64_t wall_ms() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}
}  // namespace

stamped_publisher::stamped_publisher(zmq::context_t& ctx, const bus_access& at, std::string src)
    : sock_(ctx, zmq::socket_type::pub), src_(std::move(src)) {
  // Bursts of hundreds of thousands of heartbeats: a deep queue, so the sender blocks on nothing and drops
  // nothing it could have sent (the receiving side's drops are what is measured).
  sock_.set(zmq::sockopt::sndhwm, 2'000'000);
  sock_.set(zmq::sockopt::linger, 500);
  if (at.curve) bus::apply_curve_client(sock_, *at.curve);
  bus::connect_all(sock_, at.endpoint);  // several forwarders: each message goes through every one
}

messages::envelope stamped_publisher::next(const std::string& topic) {
  return messages::envelope{messages::schema_version, ++seq_[topic], wall_ms(), src_};
}

void stamped_publisher::send(const std::string& topic, const std::string& body) {
  sock_.send(zmq::buffer(topic), zmq::send_flags::sndmore);
  sock_.send(zmq::buffer(body), zmq::send_flags::none);
}

observer::observer(zmq::context_t& ctx, const bus_access& at, const std::vector<std::string>& extra_topics,
                   schedule_topic schedule) {
  std::promise<void> connected;
  auto ready = connected.get_future();
  const std::string schedule_of{schedule == schedule_topic::state ? messages::topics::rm_state
                                                                  : messages::topics::rm_schedule_changes};
  thread_ = std::thread([this, &ctx, at, extra_topics, schedule_of, &connected] {
    zmq::socket_t sock{ctx, zmq::socket_type::sub};
    sock.set(zmq::sockopt::rcvhwm, 2'000'000);
    for (const auto& t : {schedule_of, std::string{messages::topics::rm_nodes},
                          std::string{messages::topics::rm_cycle}})
      sock.set(zmq::sockopt::subscribe, t);
    for (const auto& t : extra_topics) sock.set(zmq::sockopt::subscribe, t);
    if (at.curve) bus::apply_curve_client(sock, *at.curve);
    // Several forwarders: every message arrives once through each, and only the first copy may count. The
    // envelope is read only then, so the single-forwarder figures pay nothing for it.
    const bool copies = bus::connect_all(sock, at.endpoint).size() > 1;
    bus::sequence_tracker tracker;
    connected.set_value();
    while (!stop_.load()) {
      zmq::pollitem_t items[] = {{sock.handle(), 0, ZMQ_POLLIN, 0}};
      zmq::poll(items, 1, std::chrono::milliseconds(50));
      if ((items[0].revents & ZMQ_POLLIN) == 0) continue;
      for (int i = 0; i < 100000; ++i) {
        std::vector<zmq::message_t> frames;
        if (!zmq::recv_multipart(sock, std::back_inserter(frames), zmq::recv_flags::dontwait)) break;
        const auto now = clock_type::now();
        if (frames.size() != 2) continue;
        auto topic = frames[0].to_string();
        if (copies) {
          const auto env = messages::decode_envelope(topic, frames[1].to_string_view(), dedup_limits);
          std::uint64_t missing = 0;
          if (env && !bus::handed_on(tracker.observe(env.value().src, topic, env.value().seq, env.value().ts_ms, missing))) {
            ++copies_dropped_;
            continue;
          }
        }
        std::lock_guard<std::mutex> lock(mu_);
        // rm.events, when asked for, is read (the events phase answers a resync); other extra topics counted.
        const bool extra = topic != messages::topics::rm_events &&
                           (topic.rfind("rm.", 0) != 0 ||  // (with CURVE the extra topic is an rm.* one)
                            std::find(extra_topics.begin(), extra_topics.end(), topic) != extra_topics.end());
        if (extra) {  // a burst on an extra topic: counted here, not queued
          if (extra_arrived_++ == 0) first_extra_at_ = now;
          last_extra_at_ = now;
          continue;
        }
        queue_.push_back({std::move(topic), frames[1].to_string(), now});
      }
      cv_.notify_all();
    }
  });
  ready.wait();
}

observer::~observer() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void observer::take(const arrival& a) {
  const auto limits = messages::decode_limits{256u << 20, 1u << 20, 10'000'000, 100'000, 16};
  if (a.topic == messages::topics::rm_state) {
    if (!decode_states) return;
    if (peek_states) {
      const auto epoch = messages::detail::peek_top_level_uint(a.body, "epoch");
      const auto seq = messages::detail::peek_top_level_uint(a.body, "workmap_seq");
      const auto cycle = messages::detail::peek_top_level_uint(a.body, "cycle");
      if (fence.accept(epoch, cycle.value_or(0)) && seq) state_for_map.emplace(*seq, a.at);
      return;
    }
    messages::envelope env;
    auto s = messages::decode_rm_state(a.topic, a.body, limits, &env);
    if (!s || !fence.accept(env.epoch, s.value().cycle)) return;
    if (s.value().workmap_seq) state_for_map.emplace(*s.value().workmap_seq, a.at);
    last_state = observed_state{a.at, std::move(s.value())};
  } else if (a.topic == messages::topics::rm_schedule_changes) {
    // Decoded whatever peek_states says: a changes message is what the round changed, and an orchestrator
    // that follows the changes reads every one of them.
    messages::envelope env;
    auto m = messages::decode_rm_schedule_changes(a.topic, a.body, limits, &env);
    if (!m || follower.take(m.value(), env.epoch) != messages::schedule_follower::outcome::applied) return;
    fence.accept(env.epoch, m.value().cycle);
    if (!m.value().full) changes_listed.push_back(static_cast<double>(m.value().jobs.size() + m.value().removed.size()));
    if (m.value().workmap_seq) state_for_map.emplace(*m.value().workmap_seq, a.at);
    if (!peek_states) last_state = observed_state{a.at, follower.schedule()};
  } else if (a.topic == messages::topics::rm_nodes) {
    auto n = messages::decode_rm_nodes(a.topic, a.body, limits);
    if (!n) return;
    observed_nodes o;
    o.at = a.at;
    for (const auto& r : n.value().nodes) {
      if (r.node.rfind("load-probe", 0) == 0) {  // rmbus-load's own readiness probe: not a cluster node
        probe_seen = true;
        continue;
      }
      ++o.total;
      if (r.state == messages::node_state::up) ++o.up;
      if (r.state == messages::node_state::missing || r.state == messages::node_state::down) {
        ++o.missing;
        ever_missing.insert(r.node);
      }
    }
    last_nodes = o;
  } else if (a.topic == messages::topics::rm_events) {
    auto e = messages::decode_rm_event(a.topic, a.body, limits);
    if (e && e.value().kind == "settling") settling = true;
    if (e && e.value().kind == "settled") settled = true;
    if (!e || (e.value().kind != messages::event_kinds::workmap_resync &&
               e.value().kind != messages::event_kinds::workmap_delta_refused))
      return;
    auto src = e.value().detail.find("src");
    if (src != e.value().detail.end() && src->second == orchestrator_src) ++full_map_requests;
  } else if (a.topic == messages::topics::rm_cycle) {
    if (auto c = messages::decode_rm_cycle(a.topic, a.body, limits)) {
      const auto& v = c.value();
      round_total_ms.push_back(v.total_us / 1000.0);
      const auto staged = v.how_much_us + v.what_of_us + v.preempt_us + v.defrag_us;
      round_stage_ms.push_back({v.how_much_us / 1000.0, v.what_of_us / 1000.0, v.preempt_us / 1000.0,
                                v.defrag_us / 1000.0, v.total_us > staged ? (v.total_us - staged) / 1000.0 : 0.0});
    }
  }
}

bool observer::wait(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = clock_type::now() + timeout;
  while (true) {
    std::deque<arrival> got;
    {
      std::unique_lock<std::mutex> lock(mu_);
      extra_received = extra_arrived_;
      first_extra = first_extra_at_;
      last_extra = last_extra_at_;
      if (queue_.empty() && !done()) cv_.wait_until(lock, std::min(deadline, clock_type::now() + std::chrono::milliseconds(50)));
      got.swap(queue_);
      extra_received = extra_arrived_;
      last_extra = last_extra_at_;
    }
    for (const auto& a : got) take(a);
    if (done()) return true;
    if (clock_type::now() >= deadline) return false;
  }
}

heartbeat_loop::heartbeat_loop(zmq::context_t& ctx, const bus_access& at, std::vector<messages::heartbeat> nodes,
                               std::chrono::milliseconds interval) {
  thread_ = std::thread([this, &ctx, at, nodes = std::move(nodes), interval] {
    stamped_publisher pub{ctx, at, "rmbus-load.agents"};
    const std::string topic{messages::topics::heartbeat};
    // Slices of 10 ms: every node once per interval, spread evenly (as agents started at random times are).
    const std::size_t slices = std::max<std::size_t>(1, static_cast<std::size_t>(interval.count() / 10));
    auto next = clock_type::now();
    std::size_t at = 0;
    while (!stop_.load()) {
      const std::size_t per_slice = (nodes.size() + slices - 1) / slices;
      for (std::size_t k = 0; k < per_slice && !nodes.empty(); ++k) {
        pub.publish(topic, nodes[at]);
        at = (at + 1) % nodes.size();
        sent_.fetch_add(1);
      }
      next += std::chrono::milliseconds(10);
      std::this_thread::sleep_until(next);
    }
  });
}

heartbeat_loop::~heartbeat_loop() { stop(); }

void heartbeat_loop::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

}  // namespace rmbus::load
