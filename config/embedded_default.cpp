#include "config/embedded_default.hpp"

#include "config/loader.hpp"

namespace rmbus::config {

namespace {

constexpr std::string_view default_toml = R"toml(# rmbus embedded default: DUCC's shipped ducc.classes with default.ducc.properties values.

[scheduling]
quantum = "1G"                  # ducc.rm.share.quantum
fragmentation_threshold = 8     # ducc.rm.fragmentation.threshold
defragmentation = true          # ducc.rm.defragmentation
initialization_cap = 1          # ducc.rm.initialization.cap
expand_by_doubling = true       # ducc.rm.expand.by.doubling
use_prediction = true           # ducc.rm.prediction
prediction_fudge_ms = 120000    # ducc.rm.prediction.fudge
reserve_overage = 0             # ducc.rm.reserve_overage
default_memory = "4G"           # ducc.rm.default.memory
jd_host_class = "JobDriver"     # ducc.jd.host.class
jd_host_user = "System"         # ducc.jd.host.user

[timing]
heartbeat_interval_ms = 30000   # ducc.agent.node.metrics.publish.rate
node_stability = 6              # ducc.rm.node.stability
init_stability = 2              # ducc.rm.init.stability
fast_recovery = true
orchestrator_publish_ms = 10000 # ducc.orchestrator.state.publish.rate
state_publish_ratio = 1         # ducc.rm.state.publish.ratio

[bus]
pub = "tcp://127.0.0.1:5560"
sub = "tcp://127.0.0.1:5561"
admin = "tcp://127.0.0.1:5562"
metrics = "127.0.0.1:9464"

[log]
level = "info"

[[nodepool]]
name = "--default--"            # no node list: it takes every node

[[class]]
name = "fair-base"
abstract = true
policy = "FAIR_SHARE"
nodepool = "--default--"
priority = 10
weight = 100

[[class]]
name = "background"
parent = "fair-base"
weight = 1

[[class]]
name = "low"
parent = "fair-base"
weight = 50

[[class]]
name = "normal"
parent = "fair-base"
weight = 100
default = true

[[class]]
name = "high"
parent = "fair-base"
weight = 200

[[class]]
name = "weekly"
parent = "fair-base"
weight = 100

[[class]]
name = "urgent"
parent = "fair-base"
weight = 400

[[class]]
name = "standalone"
parent = "fair-base"
weight = 150

[[class]]
name = "fixed-base"
abstract = true
policy = "FIXED_SHARE"
nodepool = "--default--"

[[class]]
name = "fixed"
parent = "fixed-base"
priority = 5
default = true

[[class]]
name = "debug"
parent = "fixed-base"
priority = 7

[[class]]
name = "JobDriver"              # jd_host_user is authorised here automatically
parent = "fixed-base"
priority = 9

[[class]]
name = "reserve"
policy = "RESERVE"
nodepool = "--default--"
priority = 1
default = true
)toml";

}  // namespace

std::string_view embedded_default_text() { return default_toml; }

rm_config embedded_default() { return parse_native(default_toml, "<embedded default>", {}); }

}  // namespace rmbus::config
