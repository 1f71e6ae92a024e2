#include "actors/workmap_gate.hpp"

namespace rmbus::actors {

namespace {
// With accept_any, srcs are remembered to tell duplicates; a bus full of invented names cannot grow the
// table beyond this (the oldest-heard entries are forgotten first).
constexpr std::size_t max_sources = 64;
}  // namespace

std::uint64_t workmap_gate::last_seq(const std::string& src) const {
  auto it = last_.find(src);
  return it == last_.end() ? 0 : it->second.seq;
}

workmap_gate::verdict workmap_gate::judge(const std::string& src, std::uint64_t seq, std::uint64_t ts_ms,
                                          std::int64_t now_ms) {
  verdict taken = verdict::take;
  if (!accept_any_ && !owner_.empty() && src != owner_) {
    const auto& owner = last_[owner_];
    if (now_ms - owner.heard_ms < takeover_ms_) return verdict::foreign;
    last_.erase(owner_);
    taken = verdict::takeover;
  }
  if (owner_.empty() || taken == verdict::takeover) owner_ = src;
  if (accept_any_ && last_.size() >= max_sources && !last_.count(src)) {
    auto oldest = last_.begin();
    for (auto it = last_.begin(); it != last_.end(); ++it)
      if (it->second.heard_ms < oldest->second.heard_ms) oldest = it;
    last_.erase(oldest);
  }
  auto [it, fresh] = last_.try_emplace(src);
  auto& last = it->second;
  last.heard_ms = now_ms;
  if (!fresh && taken == verdict::take) {
    if (seq == last.seq) return verdict::duplicate;
    if (seq < last.seq && ts_ms < last.ts_ms) return verdict::stale;
    // seq < last.seq with a ts_ms not older: the orchestrator restarted and counts from 1 again.
  }
  last.seq = seq;
  last.ts_ms = ts_ms;
  return taken;
}

const char* to_string(workmap_gate::verdict v) {
  switch (v) {
    case workmap_gate::verdict::take: return "take";
    case workmap_gate::verdict::takeover: return "takeover";
    case workmap_gate::verdict::duplicate: return "duplicate";
    case workmap_gate::verdict::stale: return "stale";
    case workmap_gate::verdict::foreign: return "foreign";
  }
  return "?";
}

}  // namespace rmbus::actors
