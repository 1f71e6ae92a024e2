#include "messages/not_scheduling.hpp"

#include <charconv>
#include <cstdio>

namespace rmbus::messages {

namespace {

std::optional<std::uint64_t> number_of(const rm_event& e, const char* key) {
  auto it = e.detail.find(key);
  if (it == e.detail.end()) return std::uint64_t{0};  // absent: not said, taken as 0
  std::uint64_t n = 0;
  const auto& s = it->second;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
  return n;
}

// "4.5 s" under ten seconds, "73 s" above: what a person reads at a glance.
std::string seconds(std::uint64_t ms) {
  char buf[32];
  if (ms < 10000)
    std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ms) / 1000.0);
  else
    std::snprintf(buf, sizeof buf, "%llu s", static_cast<unsigned long long>(ms / 1000));
  return buf;
}

}  // namespace

rm_event to_event(const not_scheduling& n) {
  rm_event e{std::string{event_kinds::not_scheduling}, {}};
  auto& d = e.detail;
  d["reason"] = n.reason;
  d["for_ms"] = std::to_string(n.for_ms);
  d["limit_ms"] = std::to_string(n.limit_ms);
  d["cycle"] = std::to_string(n.cycle);
  if (n.reason == not_scheduling_reasons::starting) d["left_ms"] = std::to_string(n.left_ms);
  if (n.reason == not_scheduling_reasons::no_workmap) d["ever"] = n.ever ? "true" : "false";
  d["text"] = describe(n);
  return e;
}

std::optional<not_scheduling> not_scheduling_of(const rm_event& e) {
  if (e.kind != event_kinds::not_scheduling) return std::nullopt;
  auto reason = e.detail.find("reason");
  if (reason == e.detail.end() || reason->second.empty()) return std::nullopt;
  const auto for_ms = number_of(e, "for_ms");
  const auto limit_ms = number_of(e, "limit_ms");
  const auto left_ms = number_of(e, "left_ms");
  const auto cycle = number_of(e, "cycle");
  if (!for_ms || !limit_ms || !left_ms || !cycle) return std::nullopt;
  not_scheduling n;
  n.reason = reason->second;
  n.for_ms = *for_ms;
  n.limit_ms = *limit_ms;
  n.left_ms = *left_ms;
  n.cycle = *cycle;
  auto ever = e.detail.find("ever");
  n.ever = ever != e.detail.end() && ever->second == "true";
  return n;
}

not_scheduling aged(not_scheduling n, std::uint64_t elapsed_ms) {
  n.for_ms += elapsed_ms;
  n.left_ms = n.left_ms > elapsed_ms ? n.left_ms - elapsed_ms : 0;
  return n;
}

std::string describe(const not_scheduling& n) {
  if (n.reason == not_scheduling_reasons::starting)
    return "starting: in the start-up stability window, scheduling starts in " + seconds(n.left_ms) + " (a " +
           seconds(n.limit_ms) + " window; at once on a work map naming live processes)";
  if (n.reason == not_scheduling_reasons::no_workmap)
    return "idle: no work map for " + seconds(n.for_ms) +
           (n.ever ? std::string{" (the last round was " + std::to_string(n.cycle) + ")"}
                   : std::string{" (none since rmbus started)"}) +
           ": is the orchestrator publishing to this bus?";
  if (n.reason == not_scheduling_reasons::round_overdue)
    return "stuck: round " + std::to_string(n.cycle) + " started " + seconds(n.for_ms) +
           " ago and is not published (round timeout " + seconds(n.limit_ms) + ")";
  return "not scheduling: " + n.reason;
}

}  // namespace rmbus::messages
