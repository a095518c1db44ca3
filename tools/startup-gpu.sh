#!/usr/bin/env bash
# Issue 23's start-up acceptance, in one run on the GPU machine: per cell, the time from vdnn's
# process start to the end of step 1 (summary.json's first_step_end_seconds, `vdnn train --iters 1`)
# with a cold setup cache (a fresh empty --cost-cache folder) and then warm (the same folder again),
# each run's setup_seconds parts and its wall time from launch to exit; then PyTorch eager's and
# torch.compile's time to the end of their first step on the same network and batch, each in a
# fresh process (tools/torch_reference.py --first-step; compile cold with fresh Inductor/Triton
# caches, then warm); then one table of the times against issue 23's targets
# (tools/startup_report.py, which also writes OUT/startup.json).
# Usage: tools/startup-gpu.sh OUT [CELL ...]   CELL: resnet50 resnet50-auto vgg16 densenet264-auto (default all)
# Cells: resnet50 = ResNet-50 b128 baseline; resnet50-auto = the same under --policy auto
# --mem-budget 5.25GiB; vgg16 = VGG-16 b256 baseline; densenet264-auto = DenseNet-264 b64 under
# --policy auto --mem-budget 5GiB. PyTorch peers: ResNet-50 b128 (eager, compile; shared by both
# ResNet-50 cells), VGG-16 b256 (eager, compile), DenseNet-264 b64 (eager; its compile took over
# 5 minutes there, VDNN_STARTUP_DENSENET_COMPILE=1 adds it).
# Environment: VDNN_STARTUP_TIMEOUT (300) seconds a vdnn run may take; VDNN_COMPILE_LIMIT (300)
# seconds torch.compile may take (compiling included; past it the report says it did not finish);
# VDNN_SKIP_TORCH=1 skips the PyTorch peers (an OUT/torch-*.jsonl of an earlier run stays and is
# reported); VDNN_TORCH_CHANNELS_LAST=1 runs the peers in channels_last (default NCHW, as
# tools/torch_reference.py's eager and compile modes); VDNN_STARTUP_ARGS: more arguments for every
# vdnn run (e.g. "--layout nhwc"); VDNN_SKIP_BUILD, VDNN_BUILD_DIR (build-gpu), VDNN_PREFIX_PATH as
# for tools/planner-gpu.sh.
# Files: OUT/cache-CELL/ the cell's setup cache; OUT/CELL-cold/ and OUT/CELL-warm/ vdnn's run
# folders, OUT/CELL-RUN.log their output, OUT/CELL-RUN.exit the exit status, OUT/CELL-RUN.wall the
# wall seconds from launch to exit; OUT/torch-NET-cold.jsonl and OUT/torch-NET-warm.jsonl the
# PyTorch rows (NET: resnet50 vgg16 densenet264; OUT/torch-cache-NET/ their compile caches),
# OUT/torch-NET-*.log their output. All cells outlast one 10-minute device call: split them, e.g.
# `... OUT resnet50 resnet50-auto` then `VDNN_SKIP_BUILD=1 ... OUT vgg16 densenet264-auto` (same OUT;
# each call reports its own cells, `python3 tools/startup_report.py OUT` all of them).
set -euo pipefail
# shellcheck source=tools/bench-common.sh
source "$(dirname "$0")/bench-common.sh"
bench_out "$0" "$@"
shift
cells=("$@")
[ ${#cells[@]} -gt 0 ] || cells=(resnet50 resnet50-auto vgg16 densenet264-auto)
limit=${VDNN_STARTUP_TIMEOUT:-300}
build=${VDNN_BUILD_DIR:-build-gpu}

# CELL -> vdnn config, batch, policy arguments and the PyTorch network it is compared with.
declare -A config=([resnet50]=resnet50 [resnet50-auto]=resnet50 [vgg16]=vgg16 [densenet264-auto]=densenet264)
declare -A batch=([resnet50]=128 [resnet50-auto]=128 [vgg16]=256 [densenet264-auto]=64)
declare -A policy=([resnet50]="--policy baseline" [resnet50-auto]="--policy auto --mem-budget 5.25GiB"
  [vgg16]="--policy baseline" [densenet264-auto]="--policy auto --mem-budget 5GiB")
declare -A peer=([resnet50]=resnet50 [resnet50-auto]=resnet50 [vgg16]=vgg16 [densenet264-auto]=densenet264)
# PyTorch network -> batch and modes.
declare -A peer_batch=([resnet50]=128 [vgg16]=256 [densenet264]=64)
declare -A peer_modes=([resnet50]="eager,compile" [vgg16]="eager,compile" [densenet264]="eager")
[ "${VDNN_STARTUP_DENSENET_COMPILE:-0}" = 0 ] || peer_modes[densenet264]="eager,compile"
for cell in "${cells[@]}"; do
  [ -n "${config[$cell]:-}" ] || { echo "startup-gpu.sh: unknown cell $cell (${!config[*]})" >&2; exit 2; }
done

# Seconds since the epoch, to the nanosecond (a locale's decimal comma can't get in).
now() { date +%s.%N; }

bench_build

# run CELL RUN: one `vdnn train --iters 1` into OUT/CELL-RUN with the cell's cache folder; exit
# status to OUT/CELL-RUN.exit, wall seconds to OUT/CELL-RUN.wall. A failure is told, never fatal.
run() {
  local cell=$1 name="$1-$2" status=0 start end
  rm -rf "${out:?}/$name"
  start=$(now)
  # shellcheck disable=SC2086
  timeout -k 30 "$limit" "$build/bin/vdnn" train --device cuda --config "configs/${config[$cell]}.json" \
    --batch "${batch[$cell]}" --iters 1 ${policy[$cell]} ${VDNN_STARTUP_ARGS:-} \
    --cost-cache "$out/cache-$cell" --out "$out/$name" >"$out/$name.log" 2>&1 || status=$?
  end=$(now)
  echo "$status" >"$out/$name.exit"
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f\n", b - a }' >"$out/$name.wall"
  echo "vdnn $name: exit $status, $(cat "$out/$name.wall") s" >&2
}

# peers NET RUN: the PyTorch modes of NET, each in a fresh process, into OUT/torch-NET-RUN.jsonl.
peers() {
  local net=$1 name="torch-$1-$2"
  python3 tools/torch_reference.py --first-step --network "$net" --batch "${peer_batch[$net]}" \
    --modes "${peer_modes[$net]}" --compile-limit "${VDNN_COMPILE_LIMIT:-300}" \
    --inductor-cache "$out/torch-cache-$net" ${torch_layout:+"$torch_layout"} \
    >"$out/$name.jsonl" 2>"$out/$name.log" || echo "torch $name failed (exit $?)" >&2
}

for cell in "${cells[@]}"; do
  rm -rf "${out:?}/cache-$cell"
  mkdir -p "$out/cache-$cell"
  run "$cell" cold
  run "$cell" warm
done

torch_layout=""
[ "${VDNN_TORCH_CHANNELS_LAST:-0}" = 0 ] || torch_layout=--channels-last
if [ -z "${VDNN_SKIP_TORCH:-}" ]; then
  done_nets=" "
  for cell in "${cells[@]}"; do
    net=${peer[$cell]}
    case $done_nets in *" $net "*) continue ;; esac
    done_nets+="$net "
    rm -rf "${out:?}/torch-cache-$net"
    peers "$net" cold
    peers "$net" warm
  done
fi
python3 tools/startup_report.py "$out" "${cells[@]}"
