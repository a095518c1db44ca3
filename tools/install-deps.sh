#!/usr/bin/env bash
# Installs what vdnn builds with, from Debian/Ubuntu packages, when something is missing.
# On machines without a package manager (the GPU machine) it only reports what is missing.
set -euo pipefail

# clang and its runtime libraries (libFuzzer, the sanitizers) build tools/fuzz.sh's targets.
# chromium-headless-shell renders report.html for the *_renders_in_chromium tests.
packages=(cmake ninja-build g++ libeigen3-dev nlohmann-json3-dev libcli11-dev libgtest-dev
  libjpeg-dev libpng-dev
  clang libclang-rt-dev chromium-headless-shell)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if command -v apt-get >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "vdnn: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "vdnn: no apt-get here; make sure these are available: ${missing[*]}" >&2
fi
