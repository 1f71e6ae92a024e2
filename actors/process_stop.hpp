#pragma once
// How an actor stops its own process with an exit status, when it finds, once running, that the process must
// not go on: a configuration error only the bus can show (two HA candidates of one rank). The process takes
// signals only in main's sigwaitinfo (tools/rmbus_main.cpp: no handler, no global flag), so the request is a
// SIGTERM queued to the process itself with the status as its value; main stops as for any SIGTERM and exits
// with that status.

#include <csignal>

namespace rmbus::actors {

inline constexpr int exit_status_configuration_error = 2;

// Queues SIGTERM to this process carrying `status`.
void request_stop(int status);

// The exit status a SIGTERM or SIGINT asks for: the value queued by request_stop when this process sent it to
// itself, 0 for any other sender.
int stop_status(const siginfo_t& info);

}  // namespace rmbus::actors
