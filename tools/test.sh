#!/usr/bin/env bash
# Sets up, builds (with the CUDA backend when nvcc is found) and runs the whole test suite, then
# fuzzes the config, command-line, tar and image parsers for a bounded time (tools/fuzz.sh).
# GPU tests skip cleanly on machines without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
# The CUDA toolkit's usual home, for shells whose PATH lacks it.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
bash tools/install-deps.sh
cmake --preset release
cmake --build --preset release
ctest --preset release
bash tools/fuzz.sh
