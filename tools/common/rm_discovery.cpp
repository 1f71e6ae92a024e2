#include "tools/common/rm_discovery.hpp"

#include <cstdlib>
#include <filesystem>

#include "bus/endpoint_list.hpp"
#include "config/endpoint.hpp"
#include "config/loader.hpp"

namespace rmbus::tools {

namespace {

// NAME.pub beside NAME.key when present: an operator may read it where the key pair (mode 0600) is not.
std::string public_file_of(const std::string& key_file) {
  if (key_file.empty()) return {};
  std::filesystem::path p{key_file};
  if (p.extension() == ".key") {
    auto pub = p;
    pub.replace_extension(".pub");
    std::error_code ec;
    if (std::filesystem::exists(pub, ec)) return pub.string();
  }
  return key_file;
}

}  // namespace

rm_endpoints endpoints_of_configuration(const std::string& native, const std::string& ducc) {
  const auto cfg = !native.empty() ? config::load_native(native) : config::load_ducc(ducc);
  rm_endpoints e;
  e.admin = cfg.runtime.admin;
  e.bus_pub = cfg.runtime.bus_pub;
  e.bus_sub = cfg.runtime.bus_sub;
  e.curve = cfg.runtime.security.curve;
  if (e.curve) {
    e.admin_server_key = public_file_of(cfg.runtime.security.key);
    e.bus_server_key = public_file_of(
        cfg.runtime.security.server_key.empty() ? cfg.runtime.security.key : cfg.runtime.security.server_key);
  }
  e.source = !native.empty() ? native + " (native)" : ducc + " (DUCC)";
  return e;
}

std::optional<std::string> endpoint_problem(std::string_view option, std::string_view endpoint) {
  // A list of several forwarders (bus/endpoint_list.hpp) is checked endpoint by endpoint.
  if (auto list = bus::endpoint_list_error(endpoint)) return std::string{option} + ": " + *list;
  for (const auto& one : bus::split_endpoints(endpoint)) {
    if (auto problem = config::check_bus_endpoint(one)) return std::string{option} + ": " + *problem;
    // A client connects: a wildcard host or port is something only a server may bind.
    if (one.starts_with("tcp://") && one.find('*') != std::string::npos)
      return std::string{option} + ": '" + one + "' has a wildcard, which only a server binds: expected tcp://HOST:PORT";
  }
  return std::nullopt;
}

std::string with_tcp_scheme(std::string_view endpoint) {
  const auto colon = endpoint.rfind(':');
  if (endpoint.find("://") != std::string_view::npos || colon == std::string_view::npos || colon == 0 ||
      colon + 1 == endpoint.size())
    return std::string{endpoint};
  for (auto c : endpoint.substr(colon + 1))
    if (c < '0' || c > '9') return std::string{endpoint};
  return "tcp://" + std::string{endpoint};
}

std::optional<std::string> environment(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string{v};
}

}  // namespace rmbus::tools
