#pragma once
// The topics fuzz_internal_decoders tries, shared with the program that writes its seeds: an input's first
// byte picks one (modulo the count), the rest is the body. Each internal topic is here once, the prefixed ones
// with a pool name, so every codec of messages/internal/ is reached through decode_payload as the router
// reaches it.

#include <array>
#include <string_view>

namespace rmbus::messages::fuzz {

inline constexpr std::array<std::string_view, 19> internal_topics{
    "rm.internal.node.alpha",  "rm.internal.nodestate", "rm.internal.nodesnap", "rm.internal.nodesync",
    "rm.internal.work.alpha",  "rm.internal.round",     "rm.internal.plan",     "rm.internal.done",
    "rm.internal.query.alpha", "rm.internal.answer",    "rm.internal.vary",     "rm.internal.recovered",
    "rm.internal.reconfigure", "rm.internal.forgotten", "rm.internal.seedreq",  "rm.internal.seed.alpha",
    "rm.internal.worksync",   "rm.internal.plansync",   "rm.internal.marks",
};

}  // namespace rmbus::messages::fuzz
