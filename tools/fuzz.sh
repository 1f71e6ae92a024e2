#!/usr/bin/env bash
# Builds every libFuzzer target with clang in build-fuzz/ and runs each for a bounded time, one after another.
#
#   tools/fuzz.sh                     # every target, 60 s each
#   tools/fuzz.sh --seconds 300       # longer
#   tools/fuzz.sh fuzz_ducc_config    # only the named target(s)
#
# Each target starts from its committed seeds (read-only) and grows a corpus of its own in
# build-fuzz/corpus/<target>/, kept between runs. Per target it prints libFuzzer's progress and final
# statistics (inputs tried: the `#N` lines and stat::number_of_executed_units) and the path of any crash,
# leak or timeout input it wrote to build-fuzz/findings/<target>/. Exit status 1 when any target found
# something. Needs clang and its sanitizer runtimes (clang, libclang-rt-14-dev), installed from Debian's
# packages when missing, as tools/install-deps.sh does.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build-fuzz"
seconds=60
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --seconds=*) seconds="${1#--seconds=}"; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
case "$seconds" in ''|*[!0-9]*) echo "fuzz.sh: --seconds needs a whole number" >&2; exit 2 ;; esac

# target -> seeds folder and dictionary, relative to the repository.
declare -A seeds=(
  [fuzz_decoders]=tests/messages/fuzz_seeds
  [fuzz_internal_decoders]=tests/messages/fuzz_seeds_internal
  [fuzz_native_config]=tests/config/fuzz_seeds_native
  [fuzz_ducc_config]=tests/config/fuzz_seeds_ducc
  [fuzz_curve_files]=tests/bus/fuzz_seeds_curve
)
declare -A dicts=(
  [fuzz_decoders]=tests/messages/fuzz_decoders.dict
  [fuzz_internal_decoders]=tests/messages/fuzz_internal_decoders.dict
  [fuzz_native_config]=tests/config/fuzz_native_config.dict
  [fuzz_ducc_config]=tests/config/fuzz_ducc_config.dict
  [fuzz_curve_files]=tests/bus/fuzz_curve_files.dict
)
declare -A folders=(
  [fuzz_decoders]=tests/messages [fuzz_internal_decoders]=tests/messages
  [fuzz_native_config]=tests/config [fuzz_ducc_config]=tests/config
  [fuzz_curve_files]=tests/bus
)
all=(fuzz_decoders fuzz_internal_decoders fuzz_native_config fuzz_ducc_config fuzz_curve_files)
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
for t in "${targets[@]}"; do
  [ -n "${seeds[$t]:-}" ] || { echo "fuzz.sh: unknown target $t (known: ${all[*]})" >&2; exit 2; }
done

# clang and the sanitizer runtimes (libFuzzer's among them).
missing=()
for p in clang libclang-rt-14-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "fuzz.sh: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
"$root/tools/install-deps.sh"

if [ ! -f "$build/CMakeCache.txt" ]; then
  CXX=clang++ cmake -S "$root" -B "$build" -DRMBUS_FUZZ=ON -DRMBUS_BUILD_TESTS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$build" -j2 --target "${targets[@]}"

status=0
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"
  findings="$build/findings/$t"
  mkdir -p "$corpus" "$findings"
  log="$build/findings/$t.log"
  started="$build/findings/$t.started"  # only inputs written by this run are reported
  touch "$started"
  echo "== $t: ${seconds} s from ${seeds[$t]} (corpus $corpus)"
  set +e
  # -rss_limit_mb bounds a run that allocates without limit (reported as an out-of-memory finding);
  # -timeout flags one input that takes longer than 10 s.
  (cd "$findings" && "$build/${folders[$t]}/$t" -max_total_time="$seconds" -print_final_stats=1 \
      -rss_limit_mb=2048 -timeout=10 -dict="$root/${dicts[$t]}" -artifact_prefix="$findings/" \
      "$corpus" "$root/${seeds[$t]}") >"$log" 2>&1
  rc=$?
  set -e
  grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' "$log" || true
  found=$(find "$findings" -maxdepth 1 -type f -newer "$started" \
    \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | sort)
  if [ $rc -ne 0 ] || [ -n "$found" ]; then
    status=1
    echo "!! $t found something (exit $rc); log $log"
    grep -E 'ERROR: |SUMMARY: ' "$log" | head -5 || true
    for f in $found; do echo "   input: $f"; done
  else
    echo "   $t: nothing found"
  fi
done
exit $status
