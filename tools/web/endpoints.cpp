#include "tools/web/endpoints.hpp"

#include <charconv>

#include "config/loader.hpp"

namespace rmbus::web {

discovered_endpoints discover_endpoints(const std::string& native_file, const std::string& ducc_properties) {
  const auto cfg = !native_file.empty() ? config::load_native(native_file) : config::load_ducc(ducc_properties);
  return {connectable(cfg.runtime.bus_sub), connectable(cfg.runtime.admin), cfg.runtime.security.curve};
}

std::string connectable(std::string_view bind_endpoint) {
  constexpr std::string_view tcp = "tcp://";
  if (bind_endpoint.substr(0, tcp.size()) != tcp) return std::string{bind_endpoint};
  const auto rest = bind_endpoint.substr(tcp.size());
  const auto colon = rest.rfind(':');
  if (colon == std::string_view::npos) return std::string{bind_endpoint};
  const auto host = rest.substr(0, colon);
  const auto port = rest.substr(colon);  // with its ':'
  if (host == "*" || host == "0.0.0.0") return std::string{tcp} + "127.0.0.1" + std::string{port};
  if (host == "[::]" || host == "[*]") return std::string{tcp} + "[::1]" + std::string{port};
  return std::string{bind_endpoint};
}

listen_address parse_listen(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return listen_error("--listen '" + std::string{text} + "': " + why);
  };
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) throw bad("expected HOST:PORT, e.g. 127.0.0.1:8080");
  listen_address a;
  a.host = std::string{text.substr(0, colon)};
  const auto port = text.substr(colon + 1);
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), a.port);
  if (port.empty() || ec != std::errc{} || end != port.data() + port.size() || a.port < 0 || a.port > 65535)
    throw bad("the port must be a number in 0..65535");
  if (a.host.size() >= 2 && a.host.front() == '[' && a.host.back() == ']') a.host = a.host.substr(1, a.host.size() - 2);
  if (a.host.empty()) throw bad("the host is empty (use 127.0.0.1 for this machine only, 0.0.0.0 for every address)");
  return a;
}

bool is_loopback(std::string_view host) {
  return host == "localhost" || host == "::1" || host.substr(0, 4) == "127.";
}

}  // namespace rmbus::web
