#include "bus/bridge.hpp"

#include <spdlog/spdlog.h>

#include <caf/all.hpp>

#include "messages/rm_event.hpp"
#include "messages/topics.hpp"

namespace rmbus::bus {

namespace {

// The publisher travels into the actor through this box, so that after initialisation the actor's state is
// its only owner (the spawn arguments may outlive the actor's run; a socket must not).
struct publisher_box {
  std::unique_ptr<publisher> pub;
};

struct publisher_actor_state {
  std::unique_ptr<publisher> pub;  // destroyed in on_exit, on the actor's thread: closes the socket there
  static inline const char* name = "rmbus.bus.publisher";
};

caf::behavior publisher_actor(caf::stateful_actor<publisher_actor_state>* self,
                              std::shared_ptr<publisher_box> box) {
  self->state.pub = std::move(box->pub);
  return {
      [self](const outbound_message& m) {
        if (!m.encode) {
          spdlog::error("bus publisher actor: outbound message for {} has no encoder", m.topic);
          return;
        }
        try {
          self->state.pub->publish_with(m.topic, m.encode);
        } catch (const std::exception& e) {
          // A failing encoder is the sender's bug; the publisher actor must keep serving everyone else.
          spdlog::error("bus publisher actor: encoding a message for {} failed: {}", m.topic, e.what());
        }
        if (m.handled) m.handled();
      },
  };
}

// Bounds how many bad_message events are published per second; the rest are only counted and logged.
class event_budget {
 public:
  explicit event_budget(int per_second) : per_second_(per_second) {}
  bool take() {
    const auto now = std::chrono::steady_clock::now();
    if (now - window_start_ >= std::chrono::seconds{1}) {
      window_start_ = now;
      used_ = 0;
    }
    if (used_ >= per_second_) return false;
    ++used_;
    return true;
  }

 private:
  int per_second_;
  int used_ = 0;
  std::chrono::steady_clock::time_point window_start_{};
};

}  // namespace

caf::actor spawn_publisher_actor(caf::actor_system& sys, publisher pub) {
  auto box = std::make_shared<publisher_box>();
  box->pub = std::make_unique<publisher>(std::move(pub));
  return sys.spawn<caf::detached>(publisher_actor, std::move(box));
}

subscriber_handlers deliver_to(const caf::actor& target) {
  subscriber_handlers h;
  h.on_message = [target](bus_message&& m) { caf::anon_send(target, std::move(m)); };
  h.on_batch = [target](bus_batch&& b) { caf::anon_send(target, std::move(b)); };
  h.on_bad_message = [target](const bad_message& m) { caf::anon_send(target, m); };
  return h;
}

struct bridge::impl {
  caf::actor_system& sys;
  caf::actor pub_actor;
  std::string pub_endpoint;
  std::unique_ptr<subscriber> sub;
  bool stopped = false;

  impl(zmq::context_t& ctx, caf::actor_system& s, bridge_options opts, const caf::actor& target) : sys(s) {
    publisher pub{ctx, opts.publish};
    pub_endpoint = pub.endpoint();
    pub_actor = spawn_publisher_actor(sys, std::move(pub));

    auto handlers = deliver_to(target);
    if (opts.publish_bad_message_events) {
      // Runs on the subscriber thread only, so the budget needs no lock; shared_ptr because std::function
      // must be copyable.
      auto budget = std::make_shared<event_budget>(opts.max_bad_message_events_per_s);
      handlers.on_bad_message = [target, pa = pub_actor, budget](const bad_message& m) {
        caf::anon_send(target, m);
        if (budget->take()) {
          caf::anon_send(
              pa, make_outbound(messages::topics::rm_events, messages::make_bad_message_event(m.error)));
        }
      };
    }
    try {
      sub = std::make_unique<subscriber>(ctx, std::move(opts.subscribe), std::move(handlers));
    } catch (...) {
      caf::anon_send_exit(pub_actor, caf::exit_reason::user_shutdown);
      throw;
    }
    sub->start();
  }
};

bridge::bridge(zmq::context_t& ctx, caf::actor_system& sys, bridge_options options,
               const caf::actor& inbound_target)
    : impl_(std::make_unique<impl>(ctx, sys, std::move(options), inbound_target)) {}

bridge::~bridge() { stop(); }

const caf::actor& bridge::publisher_actor() const { return impl_->pub_actor; }
const std::string& bridge::publish_endpoint() const { return impl_->pub_endpoint; }
const std::string& bridge::subscribe_endpoint() const { return impl_->sub->endpoint(); }
subscriber_stats bridge::inbound_stats() const { return impl_->sub->stats(); }

bool bridge::stop(std::chrono::milliseconds timeout) {
  if (impl_->stopped) return true;
  impl_->stopped = true;
  impl_->sub->stop();  // no more anon_sends from the subscriber thread after this returns

  bool gone = false;
  {
    caf::scoped_actor self{impl_->sys, true};  // hidden: must not hold up await_all_actors_done (trap 2)
    self->monitor(impl_->pub_actor);
    self->send_exit(impl_->pub_actor, caf::exit_reason::user_shutdown);
    self->receive(
        [&](const caf::down_msg&) { gone = true; },
        caf::after(timeout) >>
            [&] { spdlog::error("bus bridge: publisher actor did not exit within {} ms", timeout.count()); });
  }
  return gone;
}

}  // namespace rmbus::bus
