#pragma once
// Where the bus lives by default, and which side is which.
//
// The forwarder binds two endpoints. Publishers connect to its XSUB side ("pub endpoint": where you go to
// publish); subscribers connect to its XPUB side ("sub endpoint": where you go to subscribe). Everything in
// a deployment (agents, orchestrator, monitors, RM actors in other processes) connects; only the forwarder
// binds, so any process may start first and ZeroMQ reconnects on its own.

#include <string_view>

namespace rmbus::bus {

inline constexpr std::string_view default_pub_endpoint = "tcp://127.0.0.1:5560";  // XSUB side
inline constexpr std::string_view default_sub_endpoint = "tcp://127.0.0.1:5561";  // XPUB side

// Whether a socket binds its endpoint or connects to it. Production sockets connect to the forwarder; tests
// let one side bind an ephemeral port (tcp://127.0.0.1:0) and read the real endpoint back.
enum class attach { connect, bind };

}  // namespace rmbus::bus
