#!/usr/bin/env bash
# Installs the build tree BUILD into a temporary prefix, builds the example trainer EXAMPLE and the
# embedding examples EMBEDDING against the installed package only (with compiler CXX), and runs
# them: a few steps each, then inference on the checkpoint of the custom loop.
set -euo pipefail
build=$1 example=$2 cxx=$3 embedding=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
test -f "$work/prefix/lib/cmake/vdnn/vdnnConfig.cmake"
test -f "$work/prefix/lib/cmake/vdnn/vdnnConfigVersion.cmake"
for header in vdnn Batch DataSource Predictor Trainer; do
  test -f "$work/prefix/include/vdnn/$header.hpp"
done
cmake -S "$example" -B "$work/example" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$work/prefix"
cmake --build "$work/example"
"$work/example/vdnn_example_trainer" --steps 4 --checkpoint "$work/example.safetensors"
test -s "$work/example.safetensors"
cmake -S "$embedding" -B "$work/embedding" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$work/prefix"
cmake --build "$work/embedding"
"$work/embedding/vdnn_custom_loop" 6 "$work/custom.safetensors"
"$work/embedding/vdnn_inference" --checkpoint "$work/custom.safetensors" | grep -c '^image ' |
  grep -qx 10
head -c $((3 * 3 * 32 * 32 * 4)) /dev/zero >"$work/zeros.f32"  # three images, raw float32
"$work/embedding/vdnn_inference" --checkpoint "$work/custom.safetensors" \
  --images "$work/zeros.f32" | grep -c '^image ' | grep -qx 3
