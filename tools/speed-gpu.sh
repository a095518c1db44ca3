#!/usr/bin/env bash
# Issue 11's baseline speed benchmark and its bf16 cells, in one run on the GPU machine: per cell and
# precision, vdnn's baseline img/s and peak (fused layers, the layout auto picks), its per-layer-type
# times (--profile-layers), and PyTorch eager and torch.compile on the same network, batch and input
# in the same precision; in fp32 also vdnn without fusion in NCHW (what the two changes buy). Then
# one table of ratios per precision with a PASS/FAIL line per cell with targets
# (tools/speed_report.py, which also writes OUT/speed.json).
# Usage: tools/speed-gpu.sh OUT [CELL ...]   CELL: resnet50 vgg16 densenet121 resnet1001
#   efficientnet_b0 convnext_tiny mobilenet_v2 (default: the first four)
# Precisions: fp32 = vdnn --precision fp32 (TF32 convolutions) against PyTorch in NCHW (issue 11);
# bf16 = vdnn --precision bf16 against PyTorch under bf16 autocast in channels_last with fp32
# master weights (tools/torch_reference.py --precision bf16). Targets in bf16: ResNet-50 b128 >= 1.20x
# torch.compile and >= 1.25x eager with peak <= 5.5 GiB; VGG-16 b64 and DenseNet-121 b64 >= 1.0x
# torch.compile.
# Environment: VDNN_SPEED_PRECISIONS ("fp32"; "bf16" or "fp32 bf16"); VDNN_SPEED_ITERS (12)
# iterations of each run; VDNN_COMPILE_LIMIT (300) seconds torch.compile may take per network
# (compiling included; past it the report says it did not finish); VDNN_SPEED_TIMEOUT (300) seconds
# a vdnn run may take; VDNN_DEADLINE_S (unset) seconds from the script's start after which no run
# starts and a running one is stopped (the report still prints; 540 keeps it in a 10-minute device
# call); VDNN_SPEED_LAYOUT (auto) is the baseline's --layout; VDNN_SKIP_BUILD, VDNN_BUILD_DIR
# (build-gpu), VDNN_PREFIX_PATH as for tools/planner-gpu.sh.
# Expected run time on the H200 (a Release build of vdnn first, ~30 s): fp32 or bf16 alone, cells
# resnet50 vgg16 densenet121, 5-8 minutes (torch.compile alone takes ~40-60 s per network, more
# for DenseNet-121); both precisions, or all four cells in both, outlast one 10-minute call: split
# them (e.g. VDNN_SPEED_PRECISIONS=bf16 ... OUT resnet50 vgg16 densenet121).
# Files: OUT/CELL-baseline/, OUT/CELL-unfused/, OUT/CELL-profile/ (fp32) and OUT/CELL-bf16-baseline/,
# OUT/CELL-bf16-profile/ (bf16) are vdnn's run folders (OUT/NAME.log their output, OUT/NAME.exit
# their exit status), OUT/costs/ their setup cache; OUT/torch-CELL.jsonl and
# OUT/torch-CELL-bf16.jsonl the PyTorch rows (OUT/torch-*.log their output).
set -euo pipefail
# shellcheck source=tools/bench-common.sh
source "$(dirname "$0")/bench-common.sh"
bench_out "$0" "$@"
shift
cells=("$@")
[ ${#cells[@]} -gt 0 ] || cells=(resnet50 vgg16 densenet121 resnet1001)
read -r -a precisions <<<"${VDNN_SPEED_PRECISIONS:-fp32}"
speed_iters=${VDNN_SPEED_ITERS:-12}
limit=${VDNN_SPEED_TIMEOUT:-300}
layout=${VDNN_SPEED_LAYOUT:-auto}
build=${VDNN_BUILD_DIR:-build-gpu}

# CELL -> vdnn config, batch, torch network and its extra arguments.
# Issue 29's networks take PyTorch's channels_last peers (its speed line), in fp32 too.
declare -A config=([resnet50]=resnet50 [vgg16]=vgg16 [densenet121]=densenet121 [resnet1001]=resnet1001-cifar
  [efficientnet_b0]=efficientnet_b0 [convnext_tiny]=convnext_tiny [mobilenet_v2]=mobilenet_v2)
declare -A batch=([resnet50]=128 [vgg16]=64 [densenet121]=64 [resnet1001]=64 [efficientnet_b0]=128
  [convnext_tiny]=64 [mobilenet_v2]=256)
declare -A torch_net=([resnet50]=resnet50 [vgg16]=vgg16 [densenet121]=densenet121 [resnet1001]=resnet1001_cifar
  [efficientnet_b0]=efficientnet_b0 [convnext_tiny]=convnext_tiny [mobilenet_v2]=mobilenet_v2)
declare -A torch_args=([resnet1001]="--size 32 --classes 10" [efficientnet_b0]=--channels-last
  [convnext_tiny]=--channels-last [mobilenet_v2]=--channels-last)
for cell in "${cells[@]}"; do
  [ -n "${config[$cell]:-}" ] || { echo "speed-gpu.sh: unknown cell $cell (${!config[*]})" >&2; exit 2; }
done
[ ${#precisions[@]} -gt 0 ] || { echo "speed-gpu.sh: VDNN_SPEED_PRECISIONS is empty" >&2; exit 2; }
for precision in "${precisions[@]}"; do
  case $precision in
    fp32 | bf16) ;;
    *) echo "speed-gpu.sh: unknown precision $precision in VDNN_SPEED_PRECISIONS (fp32 bf16)" >&2; exit 2 ;;
  esac
done

bench_build

for cell in "${cells[@]}"; do
  for precision in "${precisions[@]}"; do
    # Names as tools/speed_report.py reads them: fp32 keeps issue 11's, bf16 adds -bf16.
    name=$cell runs=(baseline unfused profile)
    [ "$precision" = fp32 ] || name=$cell-$precision runs=(baseline profile)
    # Throughput without timing events, then the layer times with them (a few steps suffice).
    for run in "${runs[@]}"; do
      iters=$speed_iters run_args=(--precision "$precision" --layout "$layout")
      case $run in
        unfused) run_args=(--precision "$precision" --layout nchw --no-fuse) ;;
        profile) iters=4 run_args+=(--profile-layers) ;;
      esac
      bench_run "$name-$run" "${config[$cell]}" "${batch[$cell]}" baseline
    done
    # The compile limit applies to the compile mode; `timeout` bounds the whole process.
    seconds=$(bench_left 3600)
    if [ "$seconds" -le 0 ]; then
      echo "torch $name: skipped (VDNN_DEADLINE_S passed)" | tee "$out/torch-$name.log" >&2
      continue
    fi
    # shellcheck disable=SC2086
    timeout -k 10 "$seconds" python3 tools/torch_reference.py --network "${torch_net[$cell]}" \
      --batch "${batch[$cell]}" --iters "$speed_iters" --precision "$precision" --modes eager,compile \
      --compile-limit "$(bench_left "${VDNN_COMPILE_LIMIT:-300}")" ${torch_args[$cell]:-} \
      >"$out/torch-$name.jsonl" 2>"$out/torch-$name.log" || echo "torch $name failed (exit $?)" >&2
  done
done
python3 tools/speed_report.py "$out" --precisions "${precisions[*]}" "${cells[@]}"
