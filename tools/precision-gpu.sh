#!/usr/bin/env bash
# The bf16 issue's memory lines, in one run on the GPU machine, every run `vdnn train --precision
# bf16`: ResNet-50 b128 under `--policy auto --mem-budget 2.5GiB` against its bf16 baseline (>= 90%
# of its img/s); ResNet-1001 CIFAR b64 under 0.5 GiB (>= 500 img/s); DenseNet-264 b64 under 2.5 GiB
# against its bf16 baseline (>= 90%). A run whose peak passes its budget fails. Then one table and a
# PASS/FAIL line per target (tools/precision_report.py, which also writes OUT/precision.json).
# Usage: tools/precision-gpu.sh OUT [CELL ...]   CELL: resnet50 densenet264 resnet1001 (default all)
# Environment: VDNN_PRECISION_ITERS (12) iterations of each run; VDNN_PRECISION_TIMEOUT (200)
# seconds a vdnn run may take; VDNN_DEADLINE_S (540) seconds from the script's start after which no
# run starts and a running one is stopped (the report still prints: one 10-minute device call);
# VDNN_SKIP_BUILD, VDNN_BUILD_DIR (build-gpu), VDNN_PREFIX_PATH as for tools/planner-gpu.sh.
# Expected run time on the H200: ~30 s of build, then 4-7 minutes for the five runs (the `auto`
# runs measure layer costs and search plans at setup: ResNet-50 under 2.5 GiB took ~64 s to its
# first step in fp32).
# Files: OUT/CELL-baseline/, OUT/CELL-auto-BUDGET/ vdnn's run folders (OUT/NAME.log their output,
# OUT/NAME.exit their exit status, 3: does not fit the budget), OUT/costs/ their setup cache.
set -euo pipefail
# shellcheck source=tools/bench-common.sh
source "$(dirname "$0")/bench-common.sh"
bench_out "$0" "$@"
shift
cells=("$@")
[ ${#cells[@]} -gt 0 ] || cells=(resnet50 densenet264 resnet1001)
for cell in "${cells[@]}"; do
  case $cell in
    resnet50 | densenet264 | resnet1001) ;;
    *) echo "precision-gpu.sh: unknown cell $cell (resnet50 densenet264 resnet1001)" >&2; exit 2 ;;
  esac
done
iters=${VDNN_PRECISION_ITERS:-12}
limit=${VDNN_PRECISION_TIMEOUT:-200}
export VDNN_DEADLINE_S=${VDNN_DEADLINE_S:-540}
build=${VDNN_BUILD_DIR:-build-gpu}
run_args=(--precision bf16)

bench_build

# The run names are the ones tools/precision_report.py expects.
for cell in "${cells[@]}"; do
  case $cell in
    resnet50)
      bench_run resnet50-baseline resnet50 128 baseline
      bench_run resnet50-auto-2.5GiB resnet50 128 auto 2.5GiB
      ;;
    densenet264)
      bench_run densenet264-baseline densenet264 64 baseline
      bench_run densenet264-auto-2.5GiB densenet264 64 auto 2.5GiB
      ;;
    resnet1001)
      bench_run resnet1001-auto-0.5GiB resnet1001-cifar 64 auto 0.5GiB
      ;;
  esac
done
python3 tools/precision_report.py "$out" "${cells[@]}"
