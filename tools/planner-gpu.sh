#!/usr/bin/env bash
# Issue 10's planner benchmark, in one run on the GPU machine: per cell, vdnn's baseline and its
# `auto` policy under the cell's memory budgets, PyTorch's checkpointing peers on the same network,
# batch and input (tools/torch_reference.py), then one table of img/s, peaks, ratios to the cell's
# reference and targets, and the planner's predicted vs measured step time (tools/planner_report.py,
# which also writes OUT/planner.json).
# Usage: tools/planner-gpu.sh OUT [CELL ...]   CELL: resnet50 resnet1001 densenet264 vgg16 (default all)
# Environment: VDNN_PLANNER_ITERS (12) iterations of each run; VDNN_PLANNER_TIMEOUT (300) seconds a
# vdnn run may take; VDNN_TORCH_COMPILE=1 adds torch.compile with activation_memory_budget 0.5 to
# ResNet-50 (~50 s of compiling); VDNN_SKIP_TORCH skips the PyTorch peers (an OUT/torch-CELL.jsonl
# of an earlier run stays and is reported); VDNN_SKIP_BUILD skips the build; VDNN_BUILD_DIR (build-gpu), VDNN_PREFIX_PATH as for tools/bench-gpu.sh.
# Costs are measured once per network and batch (OUT/costs/, vdnn train --cost-cache) and every run
# reports its predicted step time from them (bench_run of tools/bench-common.sh). OUT/NAME/ is the
# run folder of vdnn run NAME, OUT/NAME.log its output, OUT/NAME.exit its exit status (3: does not
# fit the budget); OUT/torch-CELL.jsonl the peers. The run names are the ones tools/planner_report.py
# expects.
set -euo pipefail
# shellcheck source=tools/bench-common.sh
source "$(dirname "$0")/bench-common.sh"
bench_out "$0" "$@"
shift
cells=("$@")
[ ${#cells[@]} -gt 0 ] || cells=(resnet50 resnet1001 densenet264 vgg16)
for cell in "${cells[@]}"; do
  case $cell in
    resnet50 | resnet1001 | densenet264 | vgg16) ;;
    *) echo "planner-gpu.sh: unknown cell $cell (resnet50 resnet1001 densenet264 vgg16)" >&2; exit 2 ;;
  esac
done
iters=${VDNN_PLANNER_ITERS:-12}
limit=${VDNN_PLANNER_TIMEOUT:-300}
build=${VDNN_BUILD_DIR:-build-gpu}
compile=""
run_args=(--measure-costs)  # every run reports its predicted step time
[ "${VDNN_TORCH_COMPILE:-0}" = 0 ] || compile=,compile_budget

bench_build

# peers CELL NETWORK BATCH MODES [ARG ...]: the PyTorch peers into OUT/torch-CELL.jsonl.
peers() {
  local cell=$1 network=$2 batch=$3 modes=$4
  shift 4
  [ -z "${VDNN_SKIP_TORCH:-}" ] || return 0
  python3 tools/torch_reference.py --network "$network" --batch "$batch" --iters "$iters" --modes "$modes" "$@" \
    >"$out/torch-$cell.jsonl" 2>"$out/torch-$cell.log" || echo "torch $cell failed (exit $?)" >&2
}

for cell in "${cells[@]}"; do
  case $cell in
    resnet50)
      bench_run resnet50-baseline resnet50 128 baseline
      peak=$(bench_field resnet50-baseline peak_device_bytes)
      if [ -n "$peak" ]; then
        bench_run resnet50-auto-half resnet50 128 auto $((peak / 2))
      else
        echo "no baseline peak" >"$out/resnet50-auto-half.log"
        echo "skipped: no baseline peak" >"$out/resnet50-auto-half.exit"
      fi
      bench_run resnet50-auto-4GiB resnet50 128 auto 4GiB
      peers resnet50 resnet50 128 "eager,checkpoint$compile"
      ;;
    resnet1001)
      bench_run resnet1001-auto-1GiB resnet1001-cifar 64 auto 1GiB
      peers resnet1001 resnet1001_cifar 64 eager,checkpoint,checkpoint_save_on_cpu --size 32 --classes 10
      ;;
    densenet264)
      bench_run densenet264-baseline densenet264 64 baseline
      bench_run densenet264-auto-5GiB densenet264 64 auto 5GiB
      peers densenet264 densenet264 64 eager,checkpoint
      ;;
    vgg16)
      bench_run vgg16-baseline vgg16 256 baseline
      bench_run vgg16-auto-12GiB vgg16 256 auto 12GiB
      peers vgg16 vgg16 256 eager,checkpoint
      ;;
  esac
done
python3 tools/planner_report.py "$out" "${cells[@]}"
