#pragma once
// What a reconfiguration changes, in words for the log and the admin's reply: classes added or removed and
// the settings of those kept (weight, priority, policy, nodepool, caps), nodepools added or removed, their
// quanta and nodes, share groups, the global scheduling settings, and the runtime settings that a reload
// applies (log level, timings); and [ha] changes, which a reload does not apply (said so in the line).
//
// Thread-safety: a pure function.

#include <string>
#include <vector>

#include "config/rm_config.hpp"

namespace rmbus::config {

// One line per change, e.g. "class 'batch' added", "class 'normal': weight 100 -> 50",
// "nodepool 'alpha': nodes +a5 -a4"; empty when nothing that matters changed.
std::vector<std::string> describe_changes(const rm_config& before, const rm_config& after);

}  // namespace rmbus::config
