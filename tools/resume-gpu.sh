#!/usr/bin/env bash
# Resume equivalence on the GPU (run after tools/gpu-check.sh has built build-gpu): ResNet-50 at
# batch 32 with --deterministic, 10 steps straight against 5 steps, a checkpoint, and --resume
# latest for the other 5. The losses must be bitwise equal and so must the step-10 checkpoints.
#   tools/resume-gpu.sh OUT [CONFIG] [BATCH]
set -euo pipefail
out=${1:?usage: tools/resume-gpu.sh OUT [CONFIG] [BATCH]}
config=${2:-configs/resnet50.json}
batch=${3:-32}
vdnn=${VDNN_BIN:-build-gpu/bin/vdnn}
run=("$vdnn" train --device cuda --config "$config" --batch "$batch" --deterministic
  --checkpoint-every 5)
rm -rf "$out/straight" "$out/resumed"
mkdir -p "$out"
"${run[@]}" --iters 10 --out "$out/straight" >"$out/straight.log" 2>&1
"${run[@]}" --iters 5 --out "$out/resumed" >"$out/first-half.log" 2>&1
"${run[@]}" --iters 10 --resume latest --out "$out/resumed" >"$out/second-half.log" 2>&1
losses() { python3 -c 'import json,sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "loss" in r: print(r["iter"], r["loss"].hex() if isinstance(r["loss"], float) else r["loss"])' "$1"; }
losses "$out/straight/metrics.jsonl" >"$out/straight.losses"
losses "$out/resumed/metrics.jsonl" >"$out/resumed.losses"
echo "losses (iteration, float hex), straight vs resumed:"
paste "$out/straight.losses" "$out/resumed.losses"
cmp "$out/straight.losses" "$out/resumed.losses"
cmp "$out/straight/checkpoints/iter-000000010.safetensors" "$out/resumed/checkpoints/iter-000000010.safetensors"
echo "resume-gpu: $config batch $batch: 10 straight == 5 + resume 5, losses and checkpoint bitwise"
