#!/usr/bin/env bash
# Sets up, builds, and trains the default network (ResNet-20 on synthetic CIFAR-sized data) on
# the default device: CUDA when a GPU is present and this build can use it, else the CPU.
# Extra arguments go to `vdnn train` (e.g. --iters 200 --data cifar10:DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
# The CUDA toolkit's usual home, for shells whose PATH lacks it.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
bash tools/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target vdnn
./build/bin/vdnn train --config configs/resnet20-cifar.json --out runs/resnet20-cifar "$@"
