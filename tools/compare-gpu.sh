#!/usr/bin/env bash
# Issue 8's GPU acceptance in one run on the GPU machine (after tools/gpu-check.sh built
# build-gpu/): the largest batch per policy under 16 GiB (ResNet-50, ResNet-1001 CIFAR), the
# deepest ResNet (CIFAR, batch 64) per policy under 16 GiB, a ResNet-50 comparison of every
# policy with its report and trace, and a one-step vdnn-all trace. Prints the searches' answers.
# Usage: tools/compare-gpu.sh [OUT] [STEP ...]   steps: maxbatch-r50 maxbatch-r1001 depth report
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-compare-out}
shift || true
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(report maxbatch-r50 maxbatch-r1001 depth)
vdnn=${VDNN_BUILD_DIR:-build-gpu}/bin/vdnn
mkdir -p "$out"

compare() {
  local name=$1
  shift
  echo "== $name: vdnn compare $*"
  local start=$SECONDS
  "$vdnn" compare --device cuda --out "$out/$name" "$@" >"$out/$name.log" 2>&1
  echo "   exit $? after $((SECONDS - start)) s"
  python3 - "$out/$name/results.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for s in r.get("searches", []):
    print(f"   {s['policy']:>13}: {r['mode']} answer {s['value']} ({s['images_per_s']:.1f} img/s)")
for c in r["cells"] if not r.get("searches") else []:
    print(f"   {c['policy']:>13} b{c['batch']} budget {c['budget_bytes'] / 2**30:.1f} GiB: "
          f"{c['status']} {c['images_per_s']:.1f} img/s peak {c['measured_peak_bytes'] / 2**30:.2f} GiB")
PY
}

for step in "${steps[@]}"; do
  case $step in
    report)
      compare resnet50-policies --config configs/resnet50.json --batches 128 \
        --mem-budget none,6GiB --warmup 3 --iters 8 --trace "$out/resnet50-policies.trace.json" \
        --policies baseline,vdnn-all,vdnn-conv,vdnn-dyn,uvm,uvm-evict,uvm-prefetch ;;
    maxbatch-r50)
      compare maxbatch-resnet50 --config configs/resnet50.json --max-batch --mem-budget 16GiB \
        --policies baseline,vdnn-all,vdnn-conv --warmup 1 --iters 2 ;;
    maxbatch-r1001)
      compare maxbatch-resnet1001-cifar --config configs/resnet1001-cifar.json --max-batch \
        --mem-budget 16GiB --policies baseline,vdnn-all --warmup 1 --iters 2 ;;
    depth)
      compare depth-resnet-cifar --depth-sweep resnet --input cifar --batches 64 \
        --mem-budget 16GiB --max-depth 6002 --policies baseline,vdnn-all --warmup 1 --iters 2 ;;
    *) echo "unknown step $step" >&2 ;;
  esac
done
