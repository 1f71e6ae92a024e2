#pragma once
// Names the calling thread, as `top -H`, `ps -L`, perf and /proc/PID/task/*/comm show it, so that an
// operator (and a per-thread measurement) can tell the bus's threads apart from CAF's and from each other.
// Linux keeps 15 bytes of a name: longer names are cut. A failure is ignored on purpose: a thread without
// its name works exactly as before.

#include <string_view>

namespace rmbus::bus {

void name_this_thread(std::string_view name);

}  // namespace rmbus::bus
