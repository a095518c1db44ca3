#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang++, ASan + UBSan, CPU only, in build-fuzz/,
# only what they need) and runs each for a bounded time from its seeds, its regression inputs
# and, for the config target, configs/. Fails on any crash, sanitizer report, foreign exception,
# input slower than the per-input timeout (a hang), or allocation over the memory limits; the
# input that did it is left in build-fuzz/artifacts/<target>/: fix the bug and add the input to
# tests/fuzz/regressions/<target>/, which CTest replays in every test build.
# Usage: bash tools/fuzz.sh [SECONDS_PER_TARGET]   (default: $VDNN_FUZZ_SECONDS, else 30)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-${VDNN_FUZZ_SECONDS:-30}}
# Per input at most 10 s (else a hang); the process at most 2 GiB resident; no single allocation
# over 512 MiB (a config that asks for more must be refused before allocating).
limits=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512)

if ! command -v clang++ >/dev/null 2>&1; then
  echo "vdnn: clang++ not found; fuzzing skipped (tools/install-deps.sh installs clang)" >&2
  exit 0
fi
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz

status=0
for target in config cli tar image; do
  corpus=build-fuzz/corpus/$target  # what this machine's runs found; the seeds stay read-only
  artifacts=build-fuzz/artifacts/$target/
  log=build-fuzz/fuzz-$target.log
  mkdir -p "$corpus" "$artifacts"
  inputs=("$corpus" "tests/fuzz/seeds/$target" "tests/fuzz/regressions/$target")
  if [ "$target" = config ]; then inputs+=(configs); fi
  echo "vdnn: fuzzing $target for ${seconds} s" >&2
  if ./build-fuzz/bin/fuzz_$target -max_total_time="$seconds" "${limits[@]}" \
    -dict="tests/fuzz/$target.dict" -artifact_prefix="$artifacts" -print_final_stats=1 \
    "${inputs[@]}" >"$log" 2>&1; then
    grep -E "^Done [0-9]+ runs" "$log" >&2 || true
  else
    tail -n 80 "$log" >&2
    echo "vdnn: fuzz_$target failed (log: $log); the input is in $artifacts" >&2
    status=1
  fi
done
exit $status
