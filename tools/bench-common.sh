# Shared by the GPU benchmark scripts (tools/planner-gpu.sh, tools/speed-gpu.sh); sourced, not run.
# bench_out SCRIPT OUT: creates OUT, sets `out` to its absolute path and changes to the repository
# root; without an OUT it prints SCRIPT's "# Usage:" line and exits 2.
# bench_build: builds the vdnn binary in $build unless VDNN_SKIP_BUILD is set (CMAKE_PREFIX_PATH
# from VDNN_PREFIX_PATH, e.g. CLI11 unpacked into .deps/).

bench_out() {
  [ $# -ge 2 ] || { sed -n 's/^# Usage: //p' "$1" >&2; exit 2; }
  mkdir -p "$2"
  out=$(cd "$2" && pwd)
  cd "$(dirname "$1")/.."
}

bench_build() {
  [ -z "${VDNN_SKIP_BUILD:-}" ] || return 0
  cmake -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVDNN_BUILD_TESTS=OFF \
    ${VDNN_PREFIX_PATH:+-DCMAKE_PREFIX_PATH=$VDNN_PREFIX_PATH} >/dev/null
  cmake --build "$build" --target vdnn >/dev/null
}
