#!/usr/bin/env bash
# Builds every libFuzzer target with clang in build-fuzz/ and runs each for a bounded time, one after another.
#
#   tools/fuzz.sh                     # every target, 60 s each
#   tools/fuzz.sh --seconds 300       # longer
#   tools/fuzz.sh --seconds 0 --runs 10000000 fuzz_curve_files   # until 10^7 inputs, however long
#   tools/fuzz.sh --merge fuzz_ducc_config   # then minimise into the committed corpus (below)
#
# Each target starts from its committed seeds and its committed corpus (both read-only) and grows a corpus of
# its own in build-fuzz/corpus/<target>/, kept between runs. The seeds (tests/*/fuzz_seeds*/) are valid inputs
# written by hand or by our encoders, and every earlier finding as regression-*; the corpus
# (tests/*/fuzz_corpus*/, files named by their SHA-1) is what earlier long runs found that the seeds do not
# cover. --merge, after a target's run that found nothing, minimises seeds + committed corpus +
# build-fuzz/corpus/<target>/ with libFuzzer's -merge=1 and rewrites the committed corpus as the inputs that
# add coverage beyond the seeds; commit it, so the next run starts where this one ended. The `<target>_replay` ctests run seeds and corpus.
# Per target it prints libFuzzer's progress and final statistics (inputs tried: the `#N` lines and
# stat::number_of_executed_units) and the path of any crash, leak or timeout input it wrote to
# build-fuzz/findings/<target>/. Exit status 1 when any target found something. Needs clang and its sanitizer
# runtimes (clang, libclang-rt-14-dev), installed from Debian's packages when missing, as
# tools/install-deps.sh does.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build-fuzz"
seconds=60
runs=-1  # libFuzzer's -runs: -1 is no limit on inputs
merge=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --seconds=*) seconds="${1#--seconds=}"; shift ;;
    --runs) runs="$2"; shift 2 ;;
    --runs=*) runs="${1#--runs=}"; shift ;;
    --merge) merge=1; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
case "$seconds" in ''|*[!0-9]*) echo "fuzz.sh: --seconds needs a whole number" >&2; exit 2 ;; esac
case "$runs" in -1) ;; ''|*[!0-9]*) echo "fuzz.sh: --runs needs a whole number" >&2; exit 2 ;; esac

# target -> seeds folder and dictionary, relative to the repository.
declare -A seeds=(
  [fuzz_decoders]=tests/messages/fuzz_seeds
  [fuzz_internal_decoders]=tests/messages/fuzz_seeds_internal
  [fuzz_native_config]=tests/config/fuzz_seeds_native
  [fuzz_ducc_config]=tests/config/fuzz_seeds_ducc
  [fuzz_curve_files]=tests/bus/fuzz_seeds_curve
)
declare -A corpora=(
  [fuzz_decoders]=tests/messages/fuzz_corpus
  [fuzz_internal_decoders]=tests/messages/fuzz_corpus_internal
  [fuzz_native_config]=tests/config/fuzz_corpus_native
  [fuzz_ducc_config]=tests/config/fuzz_corpus_ducc
  [fuzz_curve_files]=tests/bus/fuzz_corpus_curve
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

# Minimises seeds + committed corpus + the run's corpus into a fresh folder that starts as a copy of the seeds
# (libFuzzer's -merge=1 keeps what is in its first folder and adds an input only for coverage that is new), then
# makes the committed corpus what was added: the seeds are replayed and fuzzed anyway, so they are not copied.
merge_into_committed() {
  local t="$1" out="$build/merge/$1" committed="$root/${corpora[$1]}" seed
  rm -rf "$out"
  mkdir -p "$out"
  cp "$root/${seeds[$t]}"/* "$out/"
  echo "== $t: merging ${corpora[$t]} and $build/corpus/$t (log $build/findings/$t.merge.log)"
  (cd "$build/findings/$t" && "$build/${folders[$t]}/$t" -merge=1 -rss_limit_mb=2048 -timeout=10 \
      -artifact_prefix="$build/findings/$t/" "$out" "$committed" "$build/corpus/$t") \
      >"$build/findings/$t.merge.log" 2>&1
  for seed in "$root/${seeds[$t]}"/*; do rm -f "$out/$(basename "$seed")"; done
  find "$committed" -maxdepth 1 -type f -delete
  cp "$out"/* "$committed/"
  echo "   ${corpora[$t]}: $(find "$committed" -maxdepth 1 -type f | wc -l) files, $(cat "$committed"/* | wc -c) bytes"
}

status=0
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"
  findings="$build/findings/$t"
  mkdir -p "$corpus" "$findings"
  log="$build/findings/$t.log"
  started="$build/findings/$t.started"  # only inputs written by this run are reported
  touch "$started"
  committed="$root/${corpora[$t]}"
  mkdir -p "$committed"
  echo "== $t: ${seconds} s, $runs inputs (0 s, -1 inputs: no limit) from ${seeds[$t]} and ${corpora[$t]}"
  set +e
  # -rss_limit_mb bounds a run that allocates without limit (reported as an out-of-memory finding);
  # -timeout flags one input that takes longer than 10 s. libFuzzer writes new inputs to the first folder only.
  (cd "$findings" && "$build/${folders[$t]}/$t" -max_total_time="$seconds" -runs="$runs" -print_final_stats=1 \
      -rss_limit_mb=2048 -timeout=10 -dict="$root/${dicts[$t]}" -artifact_prefix="$findings/" \
      "$corpus" "$committed" "$root/${seeds[$t]}") >"$log" 2>&1
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
    [ $merge -eq 0 ] || merge_into_committed "$t"
  fi
done
exit $status
