#!/usr/bin/env bash
# Issue 29's memory lines, in one run on the GPU machine: per network, `vdnn compare --max-batch
# --policies baseline,auto --mem-budget 16GiB` (the largest batch each policy trains under 16 GiB:
# the planner's search, confirmed by real steps that step down while the device says no, and its
# img/s there), then tools/zoo_memory_report.py: auto's largest batch >= 4x baseline's, at >= 0.70x
# baseline's img/s at baseline's largest batch. The planner alone (vdnn plan, estimated costs) fits
# EfficientNet-B7 at 600x600 at batch 5 under baseline and 70 under auto, ConvNeXt-Base at 224 at 69
# and 637. Every cell runs channels-last (--layout nhwc: auto's layout choice would measure a step in
# both layouts at each batch, which at ConvNeXt-Base's batch 637 took minutes) with one setup cache
# (OUT/costs). One network fills a 10-minute device call (2026-11-27, H200: auto's setup at
# ConvNeXt-Base b637 took ~6 minutes; B7's at b66 over 2): run them in calls of their own.
# Usage: tools/zoo-memory-gpu.sh OUT [CELL ...]   CELL: efficientnet_b7 convnext_base (default both)
# Environment: VDNN_ZOO_ITERS (3) timed steps per confirmed cell; VDNN_ZOO_TIMEOUT (500) seconds a
# network's compare may take; VDNN_DEADLINE_S, VDNN_SKIP_BUILD, VDNN_BUILD_DIR (build-gpu),
# VDNN_PREFIX_PATH as for tools/planner-gpu.sh.
# Files: OUT/CELL/ the compare folders (results.json, report.html), OUT/CELL.log their output,
# OUT/zoo-memory.json the report's rows.
set -euo pipefail
# shellcheck source=tools/bench-common.sh
source "$(dirname "$0")/bench-common.sh"
bench_out "$0" "$@"
shift
cells=("$@")
[ ${#cells[@]} -gt 0 ] || cells=(efficientnet_b7 convnext_base)
for cell in "${cells[@]}"; do
  case $cell in
    efficientnet_b7 | convnext_base) ;;
    *) echo "zoo-memory-gpu.sh: unknown cell $cell (efficientnet_b7 convnext_base)" >&2; exit 2 ;;
  esac
done
build=${VDNN_BUILD_DIR:-build-gpu}
bench_build
for cell in "${cells[@]}"; do
  seconds=$(bench_left "${VDNN_ZOO_TIMEOUT:-500}")
  if [ "$seconds" -le 0 ]; then
    echo "zoo-memory-gpu.sh: $cell skipped (VDNN_DEADLINE_S passed)" >&2
    continue
  fi
  rm -rf "${out:?}/$cell"
  timeout -k 30 "$seconds" "$build/bin/vdnn" compare --device cuda --config "configs/$cell.json" \
    --policies baseline,auto --mem-budget 16GiB --max-batch --warmup 1 --layout nhwc \
    --cost-cache "$out/costs" --iters "${VDNN_ZOO_ITERS:-3}" --out "$out/$cell" \
    >"$out/$cell.log" 2>&1 ||
    echo "zoo-memory-gpu.sh: vdnn compare for $cell exited $? (OUT/$cell.log)" >&2
done
python3 tools/zoo_memory_report.py "$out" "${cells[@]}"
