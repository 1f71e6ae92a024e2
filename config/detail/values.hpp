#pragma once
// Strict parsing of single configuration values from text (ducc.classes, ducc.properties, TOML size strings).
// Strict means the whole text must be the value: "12 GB" is not an integer, "yes" is not a boolean. Each
// returns nullopt on failure; callers word the error, because only they know the key and the file.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/policy.hpp"

namespace rmbus::config::detail {

std::optional<std::int64_t> parse_integer(std::string_view text);
// true/false, case-insensitive.
std::optional<bool> parse_boolean(std::string_view text);
// FAIR_SHARE, FIXED_SHARE, RESERVE, case-insensitive.
std::optional<core::policy> parse_policy(std::string_view text);
std::string_view policy_name(core::policy p);
// ducc, sparing (case-insensitive): scheduling.preemption_policy / rmbus.rm.preemption.policy.
std::optional<core::preemption_policy> parse_preemption_policy(std::string_view text);
std::string_view preemption_policy_name(core::preemption_policy p);
// A size: a whole number followed by M, MB, G, GB, T or TB (case-insensitive), e.g. "16G", "512M"; in MB.
std::optional<std::uint64_t> parse_size_mb(std::string_view text);
// Renders MB as "<n>T", "<n>G" when it divides evenly, else "<n>M".
std::string size_text(std::uint64_t mb);

std::string_view trim(std::string_view text);

}  // namespace rmbus::config::detail
