#pragma once
// What rmbus says when it starts, on the console and in its log: where its configuration came from, each
// nodepool (nodes expected, quantum, classes), the preemption policy in force, every endpoint, and when
// scheduling starts (DUCC's init stability), so that an operator sees at once what it will do and where to reach it.
//
// Thread-safety: a pure function.

#include <string>
#include <vector>

#include "config/rm_config.hpp"

namespace rmbus::config {

struct startup_facts {
  std::string source;         // "FILE (native)", "FILE (DUCC)", "the embedded default (...)"
  std::string roles = "all";  // --roles as given
  bool embedded_forwarder = true;
  std::string metrics;  // what is served: "http://HOST:PORT/metrics", or "off"
};

// One line each: configuration, pools (one line per nodepool), preemption policy, endpoints, scheduling start.
std::vector<std::string> startup_summary(const rm_config& cfg, const startup_facts& facts);

}  // namespace rmbus::config
