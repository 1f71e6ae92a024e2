#!/usr/bin/env bash
# Sets up a fresh Debian machine, builds everything and runs the whole test suite through ctest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/tools/install-deps.sh"
"$root/tools/build.sh"
cd "${RMBUS_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "${RMBUS_TEST_JOBS:-2}" "$@"
