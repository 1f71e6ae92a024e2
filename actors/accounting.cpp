// Accounting (Maui's JobChecker): one record per finished job, appended as a JSON line to the configured
// file and published as an rm.events `job_done` event.
//
// A thin shell over job_accounting (actors/job_accounting.hpp). It runs with the publisher, whose rm.state
// it reads as published (typed, in this process), and it reads the work of each round from the pools'
// slices (rm.internal.work.*), which differencing sends just before the round's rm.internal.round. Slices
// carry only what changed, so it keeps each pool's map as the scheduler does (actors/slice_chain.hpp, asking
// for a full slice on a gap); the whole work is handed over when the round's round_start arrives (one
// sender, so in order), and the round's time is its slices' now_ms. Nothing is decoded in the single-process
// layout.
//
// The file is opened for appending at start (the runtime checked it can be, before any actor ran) and each
// record is flushed as it is written, so a crash loses none that were published. A write that fails is
// logged (once until one succeeds again); the event is published either way.
#include <fstream>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/detail/spawn.hpp"
#include "actors/job_accounting.hpp"
#include "actors/slice_chain.hpp"
#include "messages/topics.hpp"

namespace rmbus::actors {

namespace {

struct accounting_state {
  actor_env env;
  envelope_stamper stamper{"accounting"};
  job_accounting model;
  std::ofstream file;
  std::string file_name;
  bool write_failed = false;
  std::map<std::string, wire_slice_chain> pools;  // pool -> its work map, from the slices
  std::uint64_t cycle = 0;                        // the cycle of the last slice
  std::uint64_t now_ms = 0;                       // and its clock
  static inline const char* name = "rmbus.accounting";
};

using accounting_actor = caf::stateful_actor<accounting_state>;

void open_file(accounting_actor* self) {
  auto& st = self->state;
  const auto& name = st.env.cfg->runtime.accounting.file;
  if (name == st.file_name && (name.empty() || st.file.is_open())) return;
  st.file.close();
  st.file_name = name;
  if (name.empty()) return;
  st.file.open(name, std::ios::app);
  if (!st.file) spdlog::error("accounting: cannot open {} for appending; job records go to rm.events only", name);
}

void record(accounting_actor* self, const job_record& r) {
  auto& st = self->state;
  if (st.file.is_open()) {
    st.file << to_json_line(r) << '\n';
    st.file.flush();
    if (!st.file) {
      if (!st.write_failed) spdlog::error("accounting: writing to {} failed; job records go to rm.events only", st.file_name);
      st.write_failed = true;
      st.file.clear();
    } else {
      st.write_failed = false;
    }
  }
  route(self, st.env.router, st.stamper, std::string{messages::topics::rm_events}, to_event(r));
}

void on_slice(accounting_actor* self, const messages::routed_message& m, const messages::work_slice& s) {
  auto& st = self->state;
  const auto pool = m.topic.substr(topics::work_prefix.size());
  auto& chain = st.pools[pool];
  if (chain.take(m.env.src, s).what == slice_outcome::gap) {
    // Also the scheduler of the pool gets the full slice; it schedules a round only once.
    spdlog::info("accounting: pool {}'s slice {} of round {} does not follow the last one; asking for a full slice",
                 pool, s.seq, s.cycle);
    route(self, st.env.router, st.stamper, std::string{topics::work_sync}, messages::work_sync_request{pool, s.cycle});
  }
  if (s.cycle != st.cycle) st.now_ms = 0;
  st.cycle = s.cycle;
  st.now_ms = std::max(st.now_ms, s.now_ms);
}

// A pool whose map is out of step (a slice lost, the full one asked for) counts as it was: its jobs are not
// taken for gone.
void on_round(accounting_actor* self, const messages::round_start& r) {
  auto& st = self->state;
  std::vector<const messages::work_item*> items;
  for (const auto& [pool, chain] : st.pools)
    for (const auto& [id, w] : chain.work()) items.push_back(&w);
  const auto now = st.cycle == r.cycle && st.now_ms > 0 ? st.now_ms : static_cast<std::uint64_t>(wall_clock_ms());
  for (const auto& rec : st.model.take_work(items, now)) record(self, rec);
}

caf::behavior accounting(accounting_actor* self, actor_env env) {
  auto& st = self->state;
  st.env = env;
  st.stamper = envelope_stamper{env.src("accounting")};
  open_file(self);
  return {
      [self](atoms::deliver, const messages::routed_message& m) {
        auto& st = self->state;
        if (const auto* s = m.as<messages::work_slice>()) {
          on_slice(self, m, *s);
        } else if (const auto* r = m.as<messages::round_start>()) {
          on_round(self, *r);
        } else if (const auto* state = m.as<messages::rm_state>()) {
          if (!st.env.is_local(m.env.src)) return;  // a stale publisher elsewhere on the bus
          st.model.take_schedule(state->jobs, m.env.ts_ms);
        }
      },
      [self](atoms::probe) { return static_cast<std::uint64_t>(self->mailbox().size()); },
      [self](atoms::reset, config_ptr cfg) {
        self->state.env.cfg = std::move(cfg);
        self->state.pools.clear();  // the pools may differ; differencing sends every pool a full slice next
        open_file(self);
      },
  };
}

}  // namespace

caf::actor spawn_accounting(caf::actor_system& sys, actor_env env) {
  auto router = env.router;
  const std::vector<std::string> subscriptions{std::string{topics::work_prefix}, std::string{topics::round},
                                               std::string{messages::topics::rm_state}};
  auto self = sys.spawn(accounting, std::move(env));
  // Subscribed from the spawning thread, before differencing can start a round.
  for (const auto& t : subscriptions) caf::anon_send(router, atoms::subscribe::value, t, self);
  return self;
}

}  // namespace rmbus::actors
