#!/usr/bin/env bash
# Installs rmbus's build and test dependencies from Debian's packages, unattended.
# Only what is missing is installed, so a second run costs a second.
set -euo pipefail

packages=(
  build-essential cmake pkg-config ccache
  libcaf-dev                      # actors (0.17.x)
  libzmq3-dev cppzmq-dev libsodium-dev   # the bus
  libmsgpack-cxx-dev              # wire format (NOT libmsgpack-dev: it hijacks find_package(msgpack))
  libspdlog-dev libfmt-dev        # logging
  zlib1g-dev                      # compressing rotated log files
  libtomlplusplus-dev             # native configuration (TOML)
  libcli11-dev                    # command lines
  libabsl-dev                     # abseil's open hash table (the heartbeat intake's table of nodes)
  libcpp-httplib-dev              # Prometheus metrics endpoint
  libncurses-dev                  # rmbus-top's full-screen monitor
  tmux                            # rmbus-top's screen read as users see it (tests)
  catch2                          # tests (v2)
  python3-zmq python3-msgpack     # cross-language wire tests
  nlohmann-json3-dev              # rmbus-admin --json; rmbus-web's tests read its JSON back
  chromium chromium-driver python3-selenium   # rmbus-web's browser tests and benchmark (headless)
  iproute2                        # network-namespace tests, where allowed
  file                            # cpack's Debian package: finds the programs whose libraries it depends on
  prometheus python3-yaml         # promtool checks and unit-tests the alert rules (deploy/prometheus)
  systemd                         # systemd-analyze verifies the units (deploy/systemd)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
