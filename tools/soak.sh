#!/usr/bin/env bash
# Sets up a fresh Debian machine, builds rmbus and rmbus-soak, and runs the soak: rmbus SIGKILLed under load
# at seeded random moments and restarted, 100 times by default, every rule of recovery checked by the
# program after each restart (docs/reliability.md). Exit status is rmbus-soak's: 0 when every rule held.
#
#   RMBUS_SOAK_KILLS     kills (default 100)
#   RMBUS_SOAK_SEED      seed of the work and of the kill moments (default 1)
#   RMBUS_SOAK_SECONDS   bound on the whole run (default 1500: 100 kills take about 3 minutes)
# Extra arguments go to rmbus-soak (e.g. --heartbeat-ms 300 --nodes 8 --trace).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RMBUS_BUILD_DIR:-$root/build}"
"$root/tools/install-deps.sh"
"$root/tools/build.sh" --target rmbus rmbus-soak
out="$build/soak"
mkdir -p "$out"
"$build/tools/soak/rmbus-soak" --rmbus "$build/tools/rmbus" --work-dir "$out" \
  --kills "${RMBUS_SOAK_KILLS:-100}" --seed "${RMBUS_SOAK_SEED:-1}" --seconds "${RMBUS_SOAK_SECONDS:-1500}" "$@"
