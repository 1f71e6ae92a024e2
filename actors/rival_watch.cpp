// Rival watch: tells, in the log and as an rm.events `foreign_rm` event, that another RM drives this bus beside
// this one by mistake (actors/rival_rms.hpp decides when). A head process without HA listens to rm.ha (an HA
// candidate's beacons: a few small messages a second); an HA candidate to the rm.state it already hears for its
// election, reading of another instance's schedule only whether it carries an epoch, at most once per rival and
// warning period (the read of an epoch-less schedule walks its top-level map).
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/detail/spawn.hpp"
#include "actors/rival_rms.hpp"
#include "messages/detail/peek.hpp"
#include "messages/rm_event.hpp"
#include "messages/rm_ha.hpp"
#include "messages/topics.hpp"

namespace rmbus::actors {

namespace {

struct rival_watch_state {
  actor_env env;
  envelope_stamper stamper{"rivals"};
  std::optional<rival_rms> rivals;
  static inline const char* name = "rmbus.rivals";
};

using rival_watch_actor = caf::stateful_actor<rival_watch_state>;

void warn(rival_watch_actor* self, const std::string& instance, bool ha, const std::string& text) {
  auto& st = self->state;
  spdlog::warn("{}", text);
  route(self, st.env.router, st.stamper, std::string{messages::topics::rm_events},
        messages::rm_event{std::string{messages::event_kinds::foreign_rm},
                           {{"instance", instance}, {"ha", ha ? "true" : "false"}, {"reason", text}}});
}

void on_bus(rival_watch_actor* self, const std::string& topic, const std::string& body) {
  auto& st = self->state;
  const auto now = wall_clock_ms();
  if (topic == messages::topics::rm_ha) {
    auto b = messages::decode_rm_ha(topic, body, limits_of(*st.env.cfg));
    if (!b) return;  // the router and the HA actor report bad messages; a rival is told by a good one
    if (auto text = st.rivals->heard(b.value().instance, true, now)) warn(self, b.value().instance, true, *text);
    return;
  }
  if (topic != messages::topics::rm_state) return;
  const auto src = messages::detail::peek_top_level_str(body, "src");
  if (!src) return;
  const std::string instance{src->substr(0, src->find(':'))};
  if (!st.rivals->worth_reading(instance, now)) return;
  if (messages::detail::peek_top_level_uint(body, "epoch")) return;  // fenced: an HA candidate's
  if (auto text = st.rivals->heard(instance, false, now)) warn(self, instance, false, *text);
}

caf::behavior rival_watch(rival_watch_actor* self, actor_env env) {
  auto& st = self->state;
  st.env = env;
  st.stamper = envelope_stamper{env.src("rivals")};
  st.rivals.emplace(env.instance, env.cfg->runtime.ha.enabled);
  return {
      [self](atoms::probe) { return static_cast<std::uint64_t>(self->mailbox().size()); },  // health
      [self](atoms::deliver, const std::string& topic, const std::string& body) { on_bus(self, topic, body); },
      [self](atoms::reset, config_ptr cfg) { self->state.env.cfg = std::move(cfg); },
  };
}

}  // namespace

caf::actor spawn_rival_watch(caf::actor_system& sys, actor_env env) {
  auto router = env.router;
  const bool ha = env.cfg->runtime.ha.enabled;
  auto self = sys.spawn(rival_watch, std::move(env));
  caf::anon_send(router, atoms::listen::value, std::string{ha ? messages::topics::rm_state : messages::topics::rm_ha},
                 self);
  return self;
}

}  // namespace rmbus::actors
