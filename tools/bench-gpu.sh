#!/usr/bin/env bash
# The GPU benchmark, in one run on the GPU machine: the pinned copy and managed migration ceilings
# measured now; for each network and policy (the vdnn policies and the UVM ones), vdnn's img/s,
# ms/iter, measured peak, bytes offloaded and prefetched, bytes migrated and page faults, copy and
# migration bandwidth and copy-stream busy fraction; PyTorch eager with and without save_on_cpu on
# the same network, batch and input. Writes OUT/bench.json and prints the table
# (tools/bench_report.py).
# Usage: tools/bench-gpu.sh [OUT] [NETWORK:BATCH ...]   (default resnet50:128)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench-out}
shift || true
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(resnet50:128)
iters=${VDNN_BENCH_ITERS:-12}
build=${VDNN_BUILD_DIR:-build-gpu}
mkdir -p "$out"

cmake -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVDNN_BUILD_TESTS=OFF \
  ${VDNN_PREFIX_PATH:+-DCMAKE_PREFIX_PATH=$VDNN_PREFIX_PATH} >/dev/null
cmake --build "$build" --target vdnn bench_copy_ceiling >/dev/null
"$build/bin/bench_copy_ceiling" >"$out/ceiling.json"

for c in "${cases[@]}"; do
  net=${c%%:*}
  batch=${c##*:}
  for policy in baseline vdnn-all vdnn-conv uvm; do
    "$build/bin/vdnn" train --device cuda --config "configs/$net.json" --batch "$batch" \
      --iters "$iters" --policy "$policy" --out "$out/$net-$batch-$policy" 2>"$out/$net-$batch-$policy.log" ||
      echo "vdnn $net $policy failed (exit $?)" >&2
  done
  summary="$out/$net-$batch-baseline/summary.json"
  base_peak=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['peak_device_bytes'])" "$summary")
  base_pool=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['device_pool_bytes'])" "$summary")
  # Under a budget of 40% of baseline's peak, vdnn-all keeps resident what the budget holds, and
  # uvm-evict and uvm-prefetch keep the device pages within it by evicting the same maps.
  for policy in vdnn-all uvm-evict uvm-prefetch; do
    "$build/bin/vdnn" train --device cuda --config "configs/$net.json" --batch "$batch" --iters "$iters" \
      --policy "$policy" --mem-budget $((base_peak * 2 / 5)) --out "$out/$net-$batch-$policy-budget40" \
      2>"$out/$net-$batch-$policy-budget40.log" || echo "vdnn $net $policy (budget) failed" >&2
  done
  # vdnn-dyn with a budget of what baseline took (its pool: the peak plus the allocator's rounding
  # and fragmentation) picks no offload.
  budget=$((base_pool + (64 << 20)))  # 64 MiB of slack: timed algorithm choices vary
  "$build/bin/vdnn" train --device cuda --config "configs/$net.json" --batch "$batch" --iters "$iters" \
    --policy vdnn-dyn --mem-budget "$budget" --out "$out/$net-$batch-vdnn-dyn" 2>"$out/$net-$batch-vdnn-dyn.log" ||
    echo "vdnn $net vdnn-dyn failed" >&2
  python3 tools/torch_reference.py --network "$net" --batch "$batch" --iters "$iters" \
    >"$out/torch-$net-$batch.jsonl" 2>"$out/torch-$net-$batch.log" || echo "torch $net failed" >&2
done
python3 tools/bench_report.py "$out"

# VGG-16 at batch 256 in a 12 GiB budget: baseline must not fit (exit 3), vdnn-all must train.
if [ -z "${VDNN_BENCH_SKIP_VGG:-}" ]; then
  for policy in baseline vdnn-all; do
    status=0
    "$build/bin/vdnn" train --device cuda --config configs/vgg16.json --batch 256 --iters 3 \
      --policy "$policy" --mem-budget 12GiB --out "$out/vgg16-256-12GiB-$policy" \
      >"$out/vgg16-256-12GiB-$policy.log" 2>&1 || status=$?
    echo "vgg16 batch 256, 12 GiB budget, $policy: exit $status ($(tail -1 "$out/vgg16-256-12GiB-$policy.log"))"
  done
fi
