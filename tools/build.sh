#!/usr/bin/env bash
# Configures and builds rmbus into build/ (or $RMBUS_BUILD_DIR). Extra arguments go to cmake --build.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RMBUS_BUILD_DIR:-$root/build}"
type="${RMBUS_BUILD_TYPE:-RelWithDebInfo}"
jobs="${RMBUS_JOBS:-$(nproc)}"
# ccache (when installed) may then reuse objects compiled in another checkout of the same sources.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE="$type" > "$build.configure.log" 2>&1 \
  || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j "$jobs" "$@"
