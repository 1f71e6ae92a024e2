#!/usr/bin/env bash
# Sets up a fresh Debian machine, builds rmbus, and runs it on its embedded default configuration against a
# simulated cluster on loopback (rmbus-sim with a shipped scenario), printing how the schedule evolves, a
# snapshot of the live monitor (rmbus-top --once), and the simulator's report. Stops by itself.
#
#   RMBUS_DEMO_SCENARIO   a scenario file (default: tools/sim/scenarios/mixed.toml)
#   RMBUS_DEMO_SPEED      scenario seconds per wall second (default 10)
#   RMBUS_DEMO_SECONDS    bound on the scenario's wall time (default 90)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RMBUS_BUILD_DIR:-$root/build}"
scenario="${RMBUS_DEMO_SCENARIO:-$root/tools/sim/scenarios/mixed.toml}"
speed="${RMBUS_DEMO_SPEED:-10}"
seconds="${RMBUS_DEMO_SECONDS:-90}"
"$root/tools/install-deps.sh"
"$root/tools/build.sh" --target rmbus rmbus-sim rmbus-top

# Private ports so that the demo never meets another rmbus on this machine.
base=$(( 20000 + (RANDOM % 20000) ))
pub="tcp://127.0.0.1:$base" sub="tcp://127.0.0.1:$((base + 1))"
admin="tcp://127.0.0.1:$((base + 2))" metrics="127.0.0.1:$((base + 3))"
out="$build/demo"
mkdir -p "$out"

"$build/tools/rmbus" --bus-pub "$pub" --bus-sub "$sub" --admin "$admin" --metrics "$metrics" --log-level error &
rm_pid=$!
top_pid=""
cleanup() {
  [ -n "$top_pid" ] && kill "$top_pid" 2>/dev/null
  kill -TERM "$rm_pid" 2>/dev/null || true
  wait "$rm_pid" 2>/dev/null || true
}
trap cleanup EXIT

cat <<TEXT
rmbus is running on its embedded default configuration (DUCC's shipped classes and defaults):
  bus $pub / $sub, admin $admin, metrics http://$metrics/metrics
Like DUCC, it waits for its start-up stability (2 heartbeat intervals of 30 s) before the first round;
rmbus-sim heartbeats its nodes meanwhile and starts the scenario when the first schedule arrives.

TEXT

# A snapshot of the live monitor while the scenario runs (shown after the report, so outputs do not mix).
( sleep $(( 60 + 15 )); "$build/tools/top/rmbus-top" --once --bus-sub "$sub" --width 110 > "$out/top.txt" 2>&1 ) &
top_pid=$!

"$build/tools/sim/rmbus-sim" --bus-pub "$pub" --bus-sub "$sub" --scenario "$scenario" --speed "$speed" \
  --seconds "$seconds" --summary-every-ms 3000 --csv "$out/series.csv" --plot "$out/allocation.svg" \
  --report "$out/report.txt"

if wait "$top_pid" 2>/dev/null && [ -s "$out/top.txt" ]; then
  printf '\nWhat rmbus-top showed during the run (rmbus-top --once; run rmbus-top for the live screen):\n\n'
  cat "$out/top.txt"
fi
top_pid=""
printf '\nThe report, the time series and a plot of per-user allocation are in %s/\n' "$out"
