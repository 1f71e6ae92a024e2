#pragma once
// Checks on the topic frame, which comes from the network like everything else: bounded length, valid UTF-8
// (the contract says topics are UTF-8 so other languages can treat them as text), and a printable rendering
// of whatever arrived, safe to put into logs and into a bad_message event.
//
// Thread-safety: pure functions.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace rmbus::bus {

// nullopt when the topic is acceptable, else what is wrong with it.
std::optional<std::string> check_topic(std::string_view topic, std::size_t max_bytes);

// Printable ASCII kept, every other byte written as \xNN; cut after max_bytes input bytes (marked "...").
std::string printable_topic(std::string_view topic, std::size_t max_bytes);

}  // namespace rmbus::bus
