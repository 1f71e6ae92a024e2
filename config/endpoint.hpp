#pragma once
// Syntax checks for the addresses in the configuration, so that a typo is reported with its file and line at
// load time instead of as a ZeroMQ errno when a socket is bound minutes later.
//
// Bus endpoints (ZeroMQ): tcp://HOST:PORT (HOST a name, an IPv4 address, [IPv6] or *; PORT 1..65535 or * for
// an ephemeral port), ipc://PATH, inproc://NAME. The metrics listener: HOST:PORT with PORT 0..65535 (0: a free
// port), or "off" for no listener.

#include <optional>
#include <string>
#include <string_view>

namespace rmbus::config {

// nullopt when valid; otherwise what is wrong with it.
std::optional<std::string> check_bus_endpoint(std::string_view endpoint);
// The bus sides ([bus] pub / sub, --bus-pub / --bus-sub) take one endpoint or several separated by commas
// (docs/bus.md, "Several forwarders"): each checked as above, none empty or given twice, at most 16 (the
// bus's own bound, bus/endpoint_list.hpp, which splits them the same way).
std::optional<std::string> check_bus_endpoint_list(std::string_view list);
std::optional<std::string> check_host_port(std::string_view address);
// The metrics setting: check_host_port, or the word "off".
std::optional<std::string> check_metrics_address(std::string_view address);

}  // namespace rmbus::config
