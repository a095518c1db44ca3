#!/usr/bin/env bash
# Issue 28's acceptance in one call on a machine of two GPUs linked by NVLink (nvidia-h200-x2 or
# nvidia-h100-x2; time there counts in full, so everything is here): the GPUs and their links (`vdnn
# inspect --devices`), the copy ceilings including the peer link each way (bench_copy_ceiling), the
# peer tier's GPU tests (every policy that uses it bitwise equal to baseline with deterministic
# algorithms, ResNet-50 b32 and DenseNet-40; the copy streams' issue thread; the link measured at
# setup; through the C++ API too), then ResNet-50 b128 TF32: baseline, and `auto` under 25% of the
# baseline's measured peak with the peer tier (GPU 1) and without it; ResNet-1001 CIFAR b64:
# baseline and `auto` under 0.5 GiB with the peer tier. tools/peer_report.py prints the table and
# the PASS/FAIL lines (>= 0.95x and >= 0.90x the baselines' img/s; the peer copies' speed >= 85% of
# the link's ceiling).
# Usage: tools/peer-gpu.sh OUT
# Environment: VDNN_PEER_ITERS (100) steps per training run; VDNN_PEER_BUDGET (32GiB) the peer
# tier's capacity; VDNN_PEER_REPEATS (1) runs of each line, each peer run from its own setup
# measurement (the plan is made from costs measured at setup, which vary from run to run) and
# beside a baseline of its own (the repeats are OUT/r50-baseline-2, OUT/r50-peer-2, ... with
# OUT/costs-2/, ...; the report takes the median of the repeats' ratios); VDNN_PEER_TESTS (1; 0
# skips building and running the tests, ~3 minutes, but still measures the copy ceilings);
# VDNN_PEER_LINES ("r50 r1001") the lines run, ResNet-50's and ResNet-1001's;
# VDNN_SKIP_BUILD, VDNN_BUILD_DIR (build-gpu), VDNN_PREFIX_PATH as for tools/speed-gpu.sh;
# VDNN_DEADLINE_S as there. Files: OUT/NAME/ the runs' folders (OUT/NAME.log, OUT/NAME.exit),
# OUT/devices.txt, OUT/ceilings.json, OUT/tests.log, OUT/costs/ the setup cache.
set -euo pipefail
# shellcheck source=tools/bench-common.sh
source "$(dirname "$0")/bench-common.sh"
bench_out "$0" "$@"
build=${VDNN_BUILD_DIR:-build-gpu}
iters=${VDNN_PEER_ITERS:-100}
limit=300
peer_budget=${VDNN_PEER_BUDGET:-32GiB}
lines=${VDNN_PEER_LINES:-r50 r1001}

# Tests on in a folder of their own (bench_build's configure turns them off), built beside the
# vdnn binary; without the tests only the copy ceilings' benchmark is built there.
targets=(bench_copy_ceiling)
[ "${VDNN_PEER_TESTS:-1}" != 1 ] || targets+=(vdnn_gpu_tests vdnn_api_tests)
cmake -B "$build-tests" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVDNN_BUILD_TESTS=ON \
  ${VDNN_PREFIX_PATH:+-DCMAKE_PREFIX_PATH=$VDNN_PREFIX_PATH} >"$out/tests-build.log" 2>&1
cmake --build "$build-tests" --target "${targets[@]}" >>"$out/tests-build.log" 2>&1 &
tests_build=$!
bench_build
wait "$tests_build" || echo "peer-gpu: the tests did not build" >&2
vdnn=$build/bin/vdnn
"$vdnn" inspect --devices >"$out/devices.txt" 2>&1 || true
tests=$build-tests/bin
[ ! -x "$tests/bench_copy_ceiling" ] ||
  "$tests/bench_copy_ceiling" >"$out/ceilings.json" 2>"$out/ceilings.log" || true
if [ "${VDNN_PEER_TESTS:-1}" = 1 ] && [ -x "$tests/vdnn_gpu_tests" ]; then
  "$tests/vdnn_gpu_tests" --gtest_filter='PeerTierCuda*:IssueThreadTest*' >"$out/tests.log" 2>&1 || true
  "$tests/vdnn_api_tests" --gtest_filter='PeerTier*' >>"$out/tests.log" 2>&1 || true
fi

# Each repeat runs its own baselines next to its peer runs: the host's speed on these machines
# drifts by up to a third for seconds at a time (Note [Peer tier]), so a ratio is taken between
# neighbours.
for ((repeat = 1; repeat <= ${VDNN_PEER_REPEATS:-1}; ++repeat)); do
  suffix=$([ "$repeat" = 1 ] || echo "-$repeat")
  cost_cache=$out/costs$suffix
  if [[ " $lines " == *" r50 "* ]]; then
    run_args=()
    bench_run "r50-baseline$suffix" resnet50 128 baseline
    if [ "$repeat" = 1 ]; then
      peak=$(bench_field r50-baseline peak_device_bytes)
      [ -z "$peak" ] || quarter=$((peak / 4))
    fi
    run_args=(--offload-peer 1 --peer-budget "$peer_budget")
    [ -z "${quarter:-}" ] || bench_run "r50-peer$suffix" resnet50 128 auto "$quarter"
    run_args=()
    [ -z "${quarter:-}" ] || [ "$repeat" != 1 ] || bench_run r50-host resnet50 128 auto "$quarter"
  fi
  if [[ " $lines " == *" r1001 "* ]]; then
    run_args=()
    bench_run "r1001-baseline$suffix" resnet1001-cifar 64 baseline
    run_args=(--offload-peer 1 --peer-budget "$peer_budget")
    bench_run "r1001-peer$suffix" resnet1001-cifar 64 auto 512MiB
  fi
done
unset cost_cache
python3 tools/peer_report.py "$out"
