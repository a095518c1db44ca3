#!/usr/bin/env bash
# Issue 9's data-pipeline acceptance on the GPU machine: ResNet-20 at batch 128 trains as fast on
# CIFAR-10 files (background loading, crop-flip augmentation, pinned staging; evaluating the test
# split every 150 steps) as on synthetic data: img/s within 5%. Builds build-gpu as
# tools/gpu-check.sh does, writes a CIFAR-10-format directory of random records (5 x 10000 train,
# 10000 test), trains 300 steps on each source, twice in alternation, and prints the medians and
# the second round's ratio.
# Usage: tools/data-gpu.sh [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-data-gpu-out}
build=${VDNN_BUILD_DIR:-build-gpu}
mkdir -p "$out"
cmake -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  ${VDNN_PREFIX_PATH:+-DCMAKE_PREFIX_PATH=$VDNN_PREFIX_PATH} >"$out/configure.log" 2>&1 &&
  cmake --build "$build" -j "$(nproc)" --target vdnn >"$out/build.log" 2>&1 || {
  tail -30 "$out/configure.log" "$out/build.log"
  echo "data-gpu: build FAILED"
  exit 1
}

python3 - "$out/cifar" <<'PY'
import os, random, sys
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
rng = random.Random(0)
for name in [f"data_batch_{k}.bin" for k in range(1, 6)] + ["test_batch.bin"]:
    with open(os.path.join(d, name), "wb") as f:  # 10000 records: label 0..9, 3072 pixels
        f.write(b"".join(bytes([rng.randrange(10)]) + os.urandom(3072) for _ in range(10000)))
PY

train() {  # name, extra flags
  local name=$1
  shift
  "$build/bin/vdnn" train --device cuda --config configs/resnet20-cifar.json --batch 128 \
    --iters 300 --out "$out/$name" "$@" >"$out/$name.log" 2>&1 || {
    tail -20 "$out/$name.log"
    echo "data-gpu: $name run FAILED"
    exit 1
  }
}
# Two rounds in alternation: the first also warms the GPU and the host up (a 300-step run takes
# under two seconds), the second decides.
for round in 1 2; do
  train "synthetic-$round" --data synthetic
  train "cifar10-$round" --data "cifar10:$out/cifar" --augment crop-flip --eval-every 150
done

python3 - "$out" <<'PY'
import json, sys
names = [f"{n}-{k}" for k in (1, 2) for n in ("synthetic", "cifar10")]
s = {n: json.load(open(f"{sys.argv[1]}/{n}/summary.json")) for n in names}
for n, r in s.items():
    print(f"{n:>11}: {r['images_per_s']:.1f} img/s (median), {r['iter_ms_median']:.2f} ms/step, "
          f"augment {r['augment']}, data {r['data']}")
print(f"   eval: {s['cifar10-2']['eval']}")
ratio = s["cifar10-2"]["images_per_s"] / s["synthetic-2"]["images_per_s"]
ok = abs(ratio - 1.0) <= 0.05
print(f"  ratio (round 2): cifar10 / synthetic = {ratio:.3f} ({'OK' if ok else 'FAIL'}: within 5%)")
sys.exit(0 if ok else 1)
PY
