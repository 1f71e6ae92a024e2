#!/usr/bin/env bash
# Sets up a fresh Debian machine, builds rmbus, and runs it on its embedded default configuration against a
# small simulated cluster on loopback (fake agents and a fake orchestrator), printing what it schedules.
# Stops by itself after a bounded time.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RMBUS_BUILD_DIR:-$root/build}"
seconds="${RMBUS_DEMO_SECONDS:-45}"
"$root/tools/install-deps.sh"
"$root/tools/build.sh" --target rmbus rmbus-demo-feed

# Private ports so that the demo never meets another rmbus on this machine.
base=$(( 20000 + (RANDOM % 20000) ))
pub="tcp://127.0.0.1:$base" sub="tcp://127.0.0.1:$((base + 1))" admin="tcp://127.0.0.1:$((base + 2))"

"$build/tools/rmbus" --bus-pub "$pub" --bus-sub "$sub" --admin "$admin" --log-level warn &
rm_pid=$!
trap 'kill -TERM $rm_pid 2>/dev/null || true; wait $rm_pid 2>/dev/null || true' EXIT
"$build/tools/rmbus-demo-feed" --bus-pub "$pub" --bus-sub "$sub" --seconds "$seconds"
