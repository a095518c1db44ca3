#!/usr/bin/env bash
# GPU test entry point (run it on the GPU machine): builds in Release, runs the whole gpu-labelled
# suite and the torch-labelled one (checkpoints against PyTorch), then compute-sanitizer (memcheck,
# racecheck, synccheck) on a small network's training steps under vdnn-all and on AlexNet's (the
# fused convolution and NHWC pooling kernels), and prints a summary. VDNN_CHECK_PARTS ("tests
# sanitizers", the default) picks the parts: the whole check takes longer than one 10-minute call
# on the GPU machine, so run `VDNN_CHECK_PARTS=tests` and `VDNN_CHECK_PARTS=sanitizers` apart there.
# Needs only what the GPU machine has plus the source tree (CLI11 can come in .deps/: set
# VDNN_PREFIX_PATH=$PWD/.deps/usr).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
build=${VDNN_BUILD_DIR:-build-gpu}
log=${VDNN_CHECK_LOG:-gpu-check-logs}
parts=${VDNN_CHECK_PARTS:-tests sanitizers}
mkdir -p "$log"
results=()
gpu_status=0
torch_status=0
san_status=0
wants() { [[ " $parts " == *" $1 "* ]]; }

# Tests on, whatever an earlier configure of the same folder said (tools/planner-gpu.sh turns them
# off); the sanitizers alone need only the vdnn binary, a fraction of the build.
targets=()
wants tests || targets=(--target vdnn)
cmake -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVDNN_BUILD_TESTS=ON \
  ${VDNN_PREFIX_PATH:+-DCMAKE_PREFIX_PATH=$VDNN_PREFIX_PATH} >"$log/configure.log" 2>&1 &&
  cmake --build "$build" -j "$(nproc)" "${targets[@]}" >"$log/build.log" 2>&1
if [ $? -ne 0 ]; then
  tail -30 "$log/build.log" "$log/configure.log"
  echo "gpu-check: build FAILED"
  exit 1
fi

run_tests() {
  # One at a time: tests that read the device's free memory need it to themselves.
  # --no-tests=error: a build without tests fails here instead of passing with none run.
  ctest --test-dir "$build" -L gpu --no-tests=error --output-on-failure >"$log/ctest-gpu.log" 2>&1
  gpu_status=$?
  results+=("gpu tests: $(grep -E 'tests passed|tests failed' "$log/ctest-gpu.log" | tail -1)")

  # Checkpoints against the PyTorch modules (torch; torchvision for ResNet-50). It skips where torch
  # is not importable: the summary says so rather than counting it as passed.
  ctest --test-dir "$build" -L torch --no-tests=error --output-on-failure >"$log/ctest-torch.log" 2>&1
  torch_status=$?
  torch_skipped=$(grep -c "(Skipped)" "$log/ctest-torch.log")
  results+=("torch tests: $(grep -E 'tests passed|tests failed' "$log/ctest-torch.log" | tail -1)$(
    [ "$torch_skipped" -eq 0 ] || echo "; $torch_skipped SKIPPED (torch not importable)")")
}

# sanitize LABEL TOOL LOG COMMAND...: COMMAND under compute-sanitizer's TOOL, its output in
# $log/LOG.log, one summary line.
sanitize() {
  local label=$1 tool=$2 name=$3
  shift 3
  "${COMPUTE_SANITIZER:-compute-sanitizer}" --tool "$tool" --error-exitcode 99 "$@" >"$log/$name.log" 2>&1
  local status=$?
  local summary
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log/$name.log" | tail -1)
  results+=("compute-sanitizer $tool${label:+ ($label)}: exit $status; ${summary:-no summary line}")
  [ $status -eq 0 ] || san_status=1
}

# racecheck runs FP32 math: cuDNN's sm90 TF32 NHWC data-gradient kernel (warp-specialized, with
# asynchronous barriers racecheck does not model) reports shared-memory hazards inside the library,
# and excluding it by name crashes the sanitizer; our kernels are the same in both maths.
math_for() { [ "$1" = racecheck ] && echo --math fp32; }

run_sanitizers() {
  # Channels-last with fused layers, the newest kernels (and no auto layout measurement, whose
  # profiled steps in both layouts would multiply racecheck's time).
  local train=("$build/bin/vdnn" train --device cuda --config configs/resnet20-cifar.json --batch 8
    --iters 2 --policy vdnn-all --layout nhwc --debug-poison --out "$log/sanitized-run")
  for tool in memcheck racecheck synccheck; do
    # shellcheck disable=SC2046
    sanitize "" "$tool" "$tool" "${train[@]}" $(math_for "$tool")
  done
  # The fused conv2d_relu and the NHWC max pooling (four channels a thread), which ResNet-20 lacks:
  # AlexNet, two images, deterministic (heuristic algorithm choice, no measuring under the tool).
  local alexnet=("$build/bin/vdnn" train --device cuda --config configs/alexnet.json --batch 2
    --iters 1 --policy baseline --layout nhwc --deterministic --debug-poison
    --out "$log/sanitized-alexnet")
  for tool in memcheck racecheck; do
    # shellcheck disable=SC2046
    sanitize alexnet "$tool" "$tool-alexnet" "${alexnet[@]}" $(math_for "$tool")
  done
  # bf16 (Note [Precision]): the bf16 kernels of every layer ResNet-20 and AlexNet hold, the cast
  # and the weight copies, under vdnn-all with poisoning. Under memcheck only: racecheck reports
  # hazards inside cuBLAS's bf16 GEMMs (nvjet_sm90_*) and cuDNN's sm90 bf16 data-gradient kernel,
  # warp-specialized with the asynchronous barriers it does not model (none in our kernels; there
  # is no FP32 fallback to run them under instead, as for TF32 above).
  for net in resnet20-cifar alexnet; do
    for tool in memcheck; do
      sanitize "bf16 $net" "$tool" "$tool-bf16-$net" "$build/bin/vdnn" train --device cuda \
        --config "configs/$net.json" --batch 2 --iters 1 --policy vdnn-all --precision bf16 \
        --deterministic --debug-poison --out "$log/sanitized-bf16-$net"
    done
  done
  # Managed memory: the same kernels on pages the driver moves (uvm-prefetch under a budget, so
  # maps are evicted and migrated back), with poisoning, under memcheck.
  sanitize uvm-prefetch memcheck memcheck-uvm "$build/bin/vdnn" train --device cuda \
    --config configs/resnet20-cifar.json --batch 8 --iters 2 --policy uvm-prefetch \
    --mem-budget 16MiB --layout nhwc --no-migration-counters --debug-poison \
    --out "$log/sanitized-uvm"
}

if wants tests; then run_tests; fi
if wants sanitizers; then run_sanitizers; fi

echo "== gpu-check summary =="
for r in "${results[@]}"; do echo "  $r"; done
if [ $gpu_status -ne 0 ] || [ $torch_status -ne 0 ] || [ $san_status -ne 0 ]; then
  grep -sE "Failed|FAILED|\*\*\*" "$log/ctest-gpu.log" "$log/ctest-torch.log" | head -20
  echo "gpu-check: FAILED (logs in $log/)"
  exit 1
fi
echo "gpu-check: OK (logs in $log/)"
