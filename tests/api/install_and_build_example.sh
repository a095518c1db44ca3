#!/usr/bin/env bash
# Installs the build tree BUILD into a temporary prefix, builds the example trainer EXAMPLE
# against the installed package only (with compiler CXX), and runs it for a few steps.
set -euo pipefail
build=$1 example=$2 cxx=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
test -f "$work/prefix/lib/cmake/vdnn/vdnnConfig.cmake"
test -f "$work/prefix/lib/cmake/vdnn/vdnnConfigVersion.cmake"
test -f "$work/prefix/include/vdnn/vdnn.hpp"
cmake -S "$example" -B "$work/example" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$work/prefix"
cmake --build "$work/example"
"$work/example/vdnn_example_trainer" --steps 4 --checkpoint "$work/example.safetensors"
test -s "$work/example.safetensors"
