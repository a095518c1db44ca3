#!/usr/bin/env bash
# Issue 11's baseline speed benchmark, in one run on the GPU machine: per cell, vdnn's baseline
# img/s and peak (fused layers, the layout auto picks), the same without fusion in NCHW (what the
# two changes buy), its per-layer-type times (--profile-layers), and PyTorch eager and
# torch.compile on the same network, batch and input, then one table of ratios
# (tools/speed_report.py, which also writes OUT/speed.json).
# Usage: tools/speed-gpu.sh OUT [CELL ...]   CELL: resnet50 vgg16 densenet121 resnet1001 (default all)
# Environment: VDNN_SPEED_ITERS (12) iterations of each run; VDNN_COMPILE_LIMIT (300) seconds
# torch.compile may take per network (compiling included; past it the report says it did not
# finish); VDNN_SKIP_BUILD, VDNN_BUILD_DIR (build-gpu), VDNN_PREFIX_PATH as for tools/planner-gpu.sh.
# VDNN_SPEED_LAYOUT (auto) is the baseline's --layout.
# OUT/CELL-baseline/, OUT/CELL-unfused/ and OUT/CELL-profile/ are vdnn's run folders (OUT/CELL-*.log their output),
# OUT/torch-CELL.jsonl the PyTorch rows.
set -euo pipefail
# shellcheck source=tools/bench-common.sh
source "$(dirname "$0")/bench-common.sh"
bench_out "$0" "$@"
shift
cells=("$@")
[ ${#cells[@]} -gt 0 ] || cells=(resnet50 vgg16 densenet121 resnet1001)
iters=${VDNN_SPEED_ITERS:-12}
build=${VDNN_BUILD_DIR:-build-gpu}

# CELL -> vdnn config, batch, torch network and its extra arguments.
declare -A config=([resnet50]=resnet50 [vgg16]=vgg16 [densenet121]=densenet121 [resnet1001]=resnet1001-cifar)
declare -A batch=([resnet50]=128 [vgg16]=64 [densenet121]=64 [resnet1001]=64)
declare -A torch_net=([resnet50]=resnet50 [vgg16]=vgg16 [densenet121]=densenet121 [resnet1001]=resnet1001_cifar)
declare -A torch_args=([resnet1001]="--size 32 --classes 10")
for cell in "${cells[@]}"; do
  [ -n "${config[$cell]:-}" ] || { echo "speed-gpu.sh: unknown cell $cell (${!config[*]})" >&2; exit 2; }
done

bench_build

for cell in "${cells[@]}"; do
  # Throughput without timing events, then the layer times with them (a few steps suffice).
  for run in baseline unfused profile; do
    case $run in
      baseline) extra=(--iters "$iters" --layout "${VDNN_SPEED_LAYOUT:-auto}") ;;
      unfused) extra=(--iters "$iters" --layout nchw --no-fuse) ;;
      profile) extra=(--profile-layers --iters 4 --layout "${VDNN_SPEED_LAYOUT:-auto}") ;;
    esac
    "$build/bin/vdnn" train --device cuda --config "configs/${config[$cell]}.json" --batch "${batch[$cell]}" \
      --policy baseline "${extra[@]}" --out "$out/$cell-$run" >"$out/$cell-$run.log" 2>&1 ||
      echo "vdnn $cell-$run failed (exit $?)" >&2
  done
  # shellcheck disable=SC2086
  python3 tools/torch_reference.py --network "${torch_net[$cell]}" --batch "${batch[$cell]}" --iters "$iters" \
    --modes eager,compile --compile-limit "${VDNN_COMPILE_LIMIT:-300}" ${torch_args[$cell]:-} \
    >"$out/torch-$cell.jsonl" 2>"$out/torch-$cell.log" || echo "torch $cell failed (exit $?)" >&2
done
python3 tools/speed_report.py "$out" "${cells[@]}"
