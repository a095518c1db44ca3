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

# vdnn train on configs/NET.json at BATCH into OUT/NAME; prints a line when it fails.
train() {
  local name=$1
  shift
  "$build/bin/vdnn" train --device cuda --config "configs/$net.json" --batch "$batch" "$@" \
    --out "$out/$name" 2>"$out/$name.log" || echo "vdnn $name failed (exit $?)" >&2
}

# A UVM policy twice: for img/s without CUPTI's counters (they cost ~20% of throughput), and
# for the bytes migrated, page faults and migration bandwidth with them (NAME-counted).
train_uvm() {
  local name=$1
  shift
  train "$name" --iters "$iters" --no-migration-counters "$@"
  train "$name-counted" --iters 4 "$@"
}

cmake -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVDNN_BUILD_TESTS=OFF \
  ${VDNN_PREFIX_PATH:+-DCMAKE_PREFIX_PATH=$VDNN_PREFIX_PATH} >/dev/null
cmake --build "$build" --target vdnn bench_copy_ceiling >/dev/null
"$build/bin/bench_copy_ceiling" >"$out/ceiling.json"

for c in "${cases[@]}"; do
  net=${c%%:*}
  batch=${c##*:}
  for policy in baseline vdnn-all vdnn-conv; do
    train "$net-$batch-$policy" --iters "$iters" --policy "$policy"
  done
  train_uvm "$net-$batch-uvm" --policy uvm
  summary="$out/$net-$batch-baseline/summary.json"
  base_peak=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['peak_device_bytes'])" "$summary")
  base_pool=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['device_pool_bytes'])" "$summary")
  # Under a budget of 40% of baseline's peak, vdnn-all keeps resident what the budget holds, and
  # uvm-evict and uvm-prefetch keep the device pages within it by evicting the same maps.
  budget40=$((base_peak * 2 / 5))
  train "$net-$batch-vdnn-all-budget40" --iters "$iters" --policy vdnn-all --mem-budget "$budget40"
  for policy in uvm-evict uvm-prefetch; do
    train_uvm "$net-$batch-$policy-budget40" --policy "$policy" --mem-budget "$budget40"
  done
  # vdnn-dyn with a budget of what baseline took (its pool: the peak plus the allocator's rounding
  # and fragmentation) picks no offload.
  budget=$((base_pool + (64 << 20)))  # 64 MiB of slack: timed algorithm choices vary
  train "$net-$batch-vdnn-dyn" --iters "$iters" --policy vdnn-dyn --mem-budget "$budget"
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
