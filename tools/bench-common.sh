# shellcheck shell=bash disable=SC2154  # build, limit, iters, run_args: set by the sourcing script
# Shared by the GPU benchmark scripts (tools/planner-gpu.sh, tools/speed-gpu.sh,
# tools/precision-gpu.sh); sourced, not run.
# bench_out SCRIPT OUT: creates OUT, sets `out` to its absolute path and changes to the repository
# root; without an OUT it prints SCRIPT's "# Usage:" line and exits 2.
# bench_build: builds the vdnn binary in $build unless VDNN_SKIP_BUILD is set (CMAKE_PREFIX_PATH
# from VDNN_PREFIX_PATH, e.g. CLI11 unpacked into .deps/).
# bench_left LIMIT: LIMIT, or fewer seconds where VDNN_DEADLINE_S (seconds from the script's start,
# bash's SECONDS; unset: none) leaves fewer; 0 when it has passed.
# bench_run NAME CONFIG BATCH POLICY [BUDGET]: vdnn train into OUT/NAME (see below).
# bench_field NAME FIELD: a field of OUT/NAME/summary.json.

bench_out() {
  [ $# -ge 2 ] || { sed -n 's/^# Usage: //p' "$1" >&2; exit 2; }
  mkdir -p "$2"
  out=$(cd "$2" && pwd)
  cd "$(dirname "$1")/.." || exit
}

bench_build() {
  [ -z "${VDNN_SKIP_BUILD:-}" ] || return 0
  cmake -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVDNN_BUILD_TESTS=OFF \
    ${VDNN_PREFIX_PATH:+-DCMAKE_PREFIX_PATH=$VDNN_PREFIX_PATH} >/dev/null
  cmake --build "$build" --target vdnn >/dev/null
}

bench_left() {
  local left=$1
  if [ -n "${VDNN_DEADLINE_S:-}" ] && [ $((VDNN_DEADLINE_S - SECONDS)) -lt "$left" ]; then
    left=$((VDNN_DEADLINE_S - SECONDS))
  fi
  echo $((left > 0 ? left : 0))
}

# bench_run NAME CONFIG BATCH POLICY [BUDGET]: `vdnn train` of configs/CONFIG.json for $iters
# iterations, at most $limit seconds (bench_left), into OUT/NAME, with the setup cache OUT/costs/
# (--cost-cache: measured once per network and batch in this OUT; $cost_cache, where set, names
# another folder), and the arguments of the array `run_args` (e.g. --precision bf16,
# --measure-costs). Its exit status goes to OUT/NAME.exit (or why it did not run), its output to
# OUT/NAME.log; a failure is told and never stops the script.
bench_run() {
  local name=$1 config=$2 batch=$3 policy=$4 budget=${5:-}
  local status=0 seconds
  rm -rf "${out:?}/$name"
  seconds=$(bench_left "$limit")
  if [ "$seconds" -le 0 ]; then
    echo "skipped: VDNN_DEADLINE_S passed" | tee "$out/$name.exit" >"$out/$name.log"
    echo "vdnn $name: skipped (VDNN_DEADLINE_S passed)" >&2
    return 0
  fi
  timeout -k 30 "$seconds" "$build/bin/vdnn" train --device cuda --config "configs/$config.json" \
    --batch "$batch" --iters "$iters" --policy "$policy" ${budget:+--mem-budget "$budget"} \
    ${run_args[@]+"${run_args[@]}"} --out "$out/$name" --cost-cache "${cost_cache:-$out/costs}" \
    >"$out/$name.log" 2>&1 ||
    status=$?
  echo "$status" >"$out/$name.exit"
  echo "vdnn $name: exit $status" >&2
}

bench_field() {
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$out/$1/summary.json" "$2" \
    2>/dev/null || true
}
