#pragma once
// Where rmbus-web connects and listens.
//
// discover_endpoints() reads the RM's configuration (native TOML or DUCC's ducc.properties, loaded exactly as
// rmbus loads it) and turns the endpoints the RM *binds* into ones a client on this host can *connect* to:
// a wildcard host (tcp://*:P, tcp://0.0.0.0:P, tcp://[::]:P) becomes 127.0.0.1 (IPv6: ::1); anything else is
// kept. It is a function of its own so rmbus-admin and rmbus-top can share it later (the operator-tools work
// adds the same --config / --ducc discovery to them).
//
// parse_listen() reads the --listen HOST:PORT of the web server.
//
// Thread-safety: pure functions of their inputs and the files they read.

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace rmbus::web {

struct discovered_endpoints {
  std::string bus_sub;  // the forwarder's subscriber side
  std::string admin;    // the admin REQ/REP endpoint
  bool curve = false;   // [security] curve: the client needs --key and --server-key
};

// Throws config::config_error (every problem, with file and line) when the configuration does not load.
// REQUIRES: exactly one of `native_file`, `ducc_properties` non-empty.
discovered_endpoints discover_endpoints(const std::string& native_file, const std::string& ducc_properties);

// A bound endpoint as a connectable one (see above).
std::string connectable(std::string_view bind_endpoint);

struct listen_address {
  std::string host;
  int port = 0;  // 0: a free port
};

class listen_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "HOST:PORT" ("[::1]:8080" for IPv6, PORT 0..65535); throws listen_error naming what is wrong.
listen_address parse_listen(std::string_view text);

// True for the loopback hosts: 127.0.0.0/8, ::1, localhost. rmbus-web warns when it listens elsewhere.
bool is_loopback(std::string_view host);

}  // namespace rmbus::web
