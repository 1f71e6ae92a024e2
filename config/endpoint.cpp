#include "config/endpoint.hpp"

#include <algorithm>
#include <charconv>
#include <vector>

namespace rmbus::config {

namespace {

bool valid_host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
         c == '_';
}

// Checks "HOST:PORT"; `allow_star_port` admits ZeroMQ's ephemeral-port wildcard.
std::optional<std::string> check_host_and_port(std::string_view text, bool allow_star_port, long min_port) {
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return "expected HOST:PORT";
  std::string_view host = text.substr(0, colon);
  std::string_view port = text.substr(colon + 1);
  if (host.empty()) return "the host is empty";
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return "an IPv6 host must be written [ADDRESS]";
  } else if (host != "*") {
    for (char c : host) {
      if (!valid_host_char(c)) return "the host '" + std::string(host) + "' contains '" + std::string(1, c) + "'";
    }
  }
  if (port.empty()) return "the port is empty";
  if (port == "*") {
    if (allow_star_port) return std::nullopt;
    return "the port must be a number";
  }
  long value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc{} || end != port.data() + port.size()) return "the port '" + std::string(port) + "' is not a number";
  if (value < min_port || value > 65535)
    return "the port " + std::to_string(value) + " is outside " + std::to_string(min_port) + "..65535";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> check_bus_endpoint(std::string_view endpoint) {
  constexpr std::string_view tcp = "tcp://", ipc = "ipc://", inproc = "inproc://";
  if (endpoint.starts_with(tcp)) {
    auto problem = check_host_and_port(endpoint.substr(tcp.size()), true, 1);
    if (problem) return "bad endpoint '" + std::string(endpoint) + "': " + *problem;
    return std::nullopt;
  }
  if (endpoint.starts_with(ipc) || endpoint.starts_with(inproc)) {
    auto rest = endpoint.substr(endpoint.find("://") + 3);
    if (rest.empty()) return "bad endpoint '" + std::string(endpoint) + "': the path or name is empty";
    return std::nullopt;
  }
  return "bad endpoint '" + std::string(endpoint) + "': expected tcp://HOST:PORT, ipc://PATH or inproc://NAME";
}

std::optional<std::string> check_bus_endpoint_list(std::string_view list) {
  constexpr std::size_t max_endpoints = 16;
  const auto trimmed = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  std::vector<std::string_view> seen;
  std::size_t start = 0;
  while (true) {
    const auto comma = list.find(',', start);
    const auto one = trimmed(list.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (one.empty()) return list.find(',') == std::string_view::npos
                                ? std::string{"no endpoint given"}
                                : "empty endpoint in the list '" + std::string(list) + "'";
    if (auto problem = check_bus_endpoint(one)) return problem;
    if (std::find(seen.begin(), seen.end(), one) != seen.end())
      return "endpoint '" + std::string(one) + "' is listed twice";
    if (seen.size() == max_endpoints) return "more than " + std::to_string(max_endpoints) + " endpoints in one list";
    seen.push_back(one);
    if (comma == std::string_view::npos) return std::nullopt;
    start = comma + 1;
  }
}

std::optional<std::string> check_host_port(std::string_view address) {
  auto problem = check_host_and_port(address, false, 0);
  if (problem) return "bad address '" + std::string(address) + "': " + *problem;
  return std::nullopt;
}

std::optional<std::string> check_metrics_address(std::string_view address) {
  if (address == "off") return std::nullopt;
  auto problem = check_host_port(address);
  if (problem) return *problem + " (or \"off\")";
  return std::nullopt;
}

}  // namespace rmbus::config
