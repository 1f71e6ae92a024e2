#pragma once
// Finding a running RM from the tools (rmbus-admin, rmbus-top): the endpoints the RM itself would bind, read
// from the same configuration file it was started with (--config FILE, --ducc FILE), with the CURVE server
// key it would present; or from an environment variable; or the defaults. Also the checks and the hints the
// tools print when an endpoint is malformed or nobody answers there.
//
// Thread-safety: pure functions of their inputs and the files they read.

#include <optional>
#include <string>
#include <string_view>

namespace rmbus::tools {

// What the RM of one configuration binds, as a client connects to it.
struct rm_endpoints {
  std::string admin;    // its admin REQ/REP endpoint
  std::string bus_pub;  // the forwarder's publisher side
  std::string bus_sub;  // the forwarder's subscriber side
  bool curve = false;   // [security] curve
  // With CURVE: the public key file a client names as --server-key, for the admin endpoint (the RM's own key)
  // and for the bus (the forwarder's: server_key when set, else the RM's). NAME.pub beside NAME.key when it
  // exists (rmbus-keygen writes both; the .pub is readable where the key pair is not), else the key file.
  std::string admin_server_key;
  std::string bus_server_key;
  std::string source;  // "FILE (native)", "FILE (DUCC)"
};

// Reads the configuration exactly as rmbus does (config/loader.hpp): throws config::config_error naming every
// problem, or std::exception for an unreadable file. `native` and `ducc`: at most one non-empty.
rm_endpoints endpoints_of_configuration(const std::string& native, const std::string& ducc);

// nullopt when `endpoint` (one, or a comma-separated list: bus/endpoint_list.hpp) is usable by a client;
// otherwise what is wrong, naming the option and saying `expected tcp://HOST:PORT` (e.g. for "localhost:5562").
std::optional<std::string> endpoint_problem(std::string_view option, std::string_view endpoint);

// A client endpoint as people write it: "HOST:PORT" (no scheme, a port of digits) means tcp://HOST:PORT;
// anything else is returned as it is (endpoint_problem then judges it).
std::string with_tcp_scheme(std::string_view endpoint);

// The value of environment variable `name`, when set and not empty.
std::optional<std::string> environment(const char* name);

}  // namespace rmbus::tools
