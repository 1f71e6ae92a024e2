#include "actors/ha_election.hpp"

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "messages/ha_ballot.hpp"

namespace rmbus::actors {

bool outranks(const ha_key& a, const ha_key& b) {
  if (a.epoch != b.epoch) return a.epoch > b.epoch;
  return std::tie(a.rank, a.instance) < std::tie(b.rank, b.instance);
}

ha_election::ha_election(options opt, std::int64_t now_ms)
    : opt_(std::move(opt)), started_ms_(now_ms), active_heard_ms_(now_ms) {
  // The configuration bounds ranks far below this (config::max_ha_rank); a ballot could not hold it.
  if (opt_.rank >= messages::ballot_ranks)
    throw std::invalid_argument("HA rank " + std::to_string(opt_.rank) + " is not below " +
                                std::to_string(messages::ballot_ranks));
}

void ha_election::remember(const messages::rm_ha& b, std::int64_t now_ms) {
  auto it = peers_.find(b.instance);
  if (it == peers_.end() && peers_.size() >= max_peers) {
    auto oldest = std::min_element(peers_.begin(), peers_.end(),
                                   [](const auto& x, const auto& y) { return x.second.heard_ms < y.second.heard_ms; });
    peers_.erase(oldest);
  }
  peers_[b.instance] = ha_peer{b.instance, b.rank, b.epoch, b.state, b.admin, now_ms};
}

bool ha_election::better_standby_alive(std::int64_t now_ms) const {
  for (const auto& [name, p] : peers_) {
    if (p.state != messages::ha_state::standby || now_ms - p.heard_ms >= opt_.takeover_ms) continue;
    if (std::tie(p.rank, p.instance) < std::tie(opt_.rank, opt_.instance)) return true;
  }
  return false;
}

ha_election::outcome ha_election::take_over(std::int64_t now_ms, std::string reason) {
  outcome o;
  o.what = change::took_over;
  o.silence_ms = now_ms - active_heard_ms_;
  o.by = active_instance_;
  o.reason = std::move(reason);
  epoch_ = messages::next_ballot(highest_, opt_.rank);
  highest_ = epoch_;
  heard_live_ = epoch_;
  o.epoch = epoch_;
  role_ = ha_role::active;
  ever_active_ = true;
  handing_to_.reset();
  active_instance_.clear();
  return o;
}

ha_election::outcome ha_election::step_down(std::uint64_t epoch, std::string by, std::string reason,
                                            std::int64_t now_ms) {
  role_ = ha_role::standby;
  highest_ = std::max(highest_, epoch);
  active_heard_ms_ = now_ms;  // whoever deposed us is alive: no takeover before takeover_ms of its silence
  active_instance_ = by == "orchestrator" ? std::string{} : by;
  outcome o;
  o.what = change::demoted;
  o.epoch = epoch;
  o.by = std::move(by);
  o.reason = std::move(reason);
  return o;
}

ha_election::outcome ha_election::heard_beacon(const messages::rm_ha& b, std::int64_t now_ms) {
  if (b.instance == opt_.instance) return {};  // our own beacon, back from the bus
  if (b.epoch > messages::max_epoch) return {};
  remember(b, now_ms);
  highest_ = std::max(highest_, b.epoch);
  // A standby's beacon carries the highest epoch it heard, not one it publishes: only an active's (or one
  // handing over) shows an RM alive at its epoch. Counted from standbys, a third candidate that relays the
  // epoch of an active this one cannot hear would hide the orchestrator's witness of that active.
  if (b.state != messages::ha_state::standby) heard_live_ = std::max(heard_live_, b.epoch);
  const ha_key theirs{b.epoch, b.rank, b.instance};
  if (role_ == ha_role::active) {
    if (b.epoch > epoch_)
      return step_down(b.epoch, b.instance,
                       "heard epoch " + std::to_string(b.epoch) + " from " + b.instance + " (" +
                           std::string{to_string(b.state)} + "), above its own " + std::to_string(epoch_),
                       now_ms);
    if (b.state == messages::ha_state::active && b.epoch == epoch_) {
      if (outranks(theirs, ha_key{epoch_, opt_.rank, opt_.instance}))
        return step_down(b.epoch, b.instance,
                         "another active of epoch " + std::to_string(b.epoch) + ", " + b.instance + " (rank " +
                             std::to_string(b.rank) + "), comes first in the order",
                         now_ms);
      epoch_ = messages::next_ballot(highest_, opt_.rank);
      highest_ = epoch_;
      heard_live_ = epoch_;
      outcome o;
      o.what = change::raised;
      o.epoch = epoch_;
      o.by = b.instance;
      o.reason = "another active of its epoch " + std::to_string(b.epoch) + ", " + b.instance +
                 ", comes after it in the order and steps down; epoch raised to " + std::to_string(epoch_);
      return o;
    }
    return {};
  }
  if (b.state == messages::ha_state::active) {
    auto known = peers_.find(active_instance_);
    const bool replace = active_instance_.empty() || known == peers_.end() || b.instance == active_instance_ ||
                         now_ms - known->second.heard_ms >= opt_.takeover_ms ||
                         outranks(theirs, ha_key{known->second.epoch, known->second.rank, known->second.instance});
    if (replace) active_instance_ = b.instance;
    active_heard_ms_ = now_ms;
    handing_to_.reset();  // a new active is there: our handover is done
    return {};
  }
  if (b.state == messages::ha_state::handover) {
    active_heard_ms_ = now_ms;  // the active is alive and handing over: nobody else races for it
    if (b.to == opt_.instance) {
      auto o = take_over(now_ms, "handover from " + b.instance);
      o.by = b.instance;
      return o;
    }
  }
  return {};
}

ha_election::outcome ha_election::heard_schedule(std::uint64_t epoch, const std::string& instance,
                                                 std::int64_t now_ms) {
  if (instance == opt_.instance || epoch > messages::max_epoch) return {};
  highest_ = std::max(highest_, epoch);
  heard_live_ = std::max(heard_live_, epoch);
  if (role_ == ha_role::active) {
    if (epoch > epoch_)
      return step_down(epoch, instance,
                       "heard a schedule of epoch " + std::to_string(epoch) + " from " + instance +
                           ", above its own " + std::to_string(epoch_),
                       now_ms);
    if (epoch == epoch_) {
      auto p = peers_.find(instance);
      if (p != peers_.end() && outranks(ha_key{epoch, p->second.rank, instance}, ha_key{epoch_, opt_.rank, opt_.instance}))
        return step_down(epoch, instance,
                         "a schedule of the same epoch " + std::to_string(epoch) + " from " + instance +
                             ", which comes first in the order",
                         now_ms);
    }
    return {};
  }
  // A schedule at the highest epoch shows its active alive, even when its beacons are lost.
  if (epoch >= highest_) active_heard_ms_ = now_ms;
  return {};
}

ha_election::outcome ha_election::heard_workmap(std::optional<std::uint64_t> echo, std::int64_t now_ms,
                                               std::optional<std::uint64_t> echoed_cycle) {
  workmap_heard_ = true;
  if (!echo || *echo > messages::max_epoch) return {};
  highest_ = std::max(highest_, *echo);
  if (echoed_cycle) {
    const std::pair<std::uint64_t, std::uint64_t> now_echo{*echo, *echoed_cycle};
    // The orchestrator acted on a new schedule of an epoch no RM was heard at: its active is alive.
    if (role_ == ha_role::standby && *echo > heard_live_ && last_echo_ && *last_echo_ != now_echo)
      active_heard_ms_ = now_ms;
    last_echo_ = now_echo;
  }
  if (role_ == ha_role::active && *echo > epoch_)
    return step_down(*echo, "orchestrator",
                     "the orchestrator has accepted epoch " + std::to_string(*echo) + ", above its own " +
                         std::to_string(epoch_),
                     now_ms);
  return {};
}

ha_election::outcome ha_election::tick(std::int64_t now_ms) {
  if (role_ == ha_role::active) return {};
  const auto silence = now_ms - active_heard_ms_;
  if (silence < opt_.takeover_ms) return {};
  handing_to_.reset();  // a handover that nobody took up: the usual rules apply
  if (!workmap_heard_ && now_ms - started_ms_ < 3 * opt_.takeover_ms) return {};
  if (better_standby_alive(now_ms) && silence < 2 * opt_.takeover_ms) return {};
  return take_over(now_ms, "no active heard for " + std::to_string(silence) + " ms");
}

ha_election::handover_result ha_election::handover(const std::optional<std::string>& to, std::int64_t now_ms) {
  handover_result r;
  if (role_ != ha_role::active) {
    r.error = "this RM is a standby: only the active hands over";
    return r;
  }
  std::vector<const ha_peer*> standbys;
  for (const auto& [name, p] : peers_)
    if (p.state == messages::ha_state::standby && now_ms - p.heard_ms < opt_.takeover_ms) standbys.push_back(&p);
  std::string heard;
  for (const auto* p : standbys) heard += (heard.empty() ? "" : ", ") + p->instance;
  const std::string window = " in the last " + std::to_string(opt_.takeover_ms) + " ms";
  if (to) {
    auto it = std::find_if(standbys.begin(), standbys.end(), [&](const ha_peer* p) { return p->instance == *to; });
    if (it == standbys.end()) {
      r.error = "no standby '" + *to + "' heard" + window + " (standbys heard: " + (heard.empty() ? "none" : heard) + ")";
      return r;
    }
    r.target = *to;
  } else {
    if (standbys.empty()) {
      r.error = "no standby heard" + window + ": nothing to hand over to";
      return r;
    }
    const auto* best = *std::min_element(standbys.begin(), standbys.end(), [](const ha_peer* a, const ha_peer* b) {
      return std::tie(a->rank, a->instance) < std::tie(b->rank, b->instance);
    });
    r.target = best->instance;
  }
  role_ = ha_role::standby;
  handing_to_ = r.target;
  active_heard_ms_ = now_ms;
  active_instance_.clear();
  r.ok = true;
  return r;
}

std::optional<ha_peer> ha_election::active_peer() const {
  if (role_ == ha_role::active || active_instance_.empty()) return std::nullopt;
  auto it = peers_.find(active_instance_);
  if (it == peers_.end()) return std::nullopt;
  return it->second;
}

std::vector<ha_peer> ha_election::peers(std::int64_t now_ms) const {
  std::vector<ha_peer> out;
  for (const auto& [name, p] : peers_)
    if (now_ms - p.heard_ms < opt_.takeover_ms) out.push_back(p);
  return out;
}

std::vector<ha_peer> ha_election::same_rank_peers(std::int64_t now_ms) const {
  std::vector<ha_peer> out;
  for (const auto& [name, p] : peers_)
    if (p.rank == opt_.rank && now_ms - p.heard_ms < opt_.takeover_ms) out.push_back(p);
  return out;
}

messages::rm_ha ha_election::beacon(std::int64_t) const {
  messages::rm_ha b;
  b.epoch = epoch();
  b.instance = opt_.instance;
  b.rank = opt_.rank;
  b.admin = opt_.admin;
  if (role_ == ha_role::active) {
    b.state = messages::ha_state::active;
  } else if (handing_to_) {
    b.state = messages::ha_state::handover;
    b.to = *handing_to_;
  } else {
    b.state = messages::ha_state::standby;
  }
  return b;
}

}  // namespace rmbus::actors
