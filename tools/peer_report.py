#!/usr/bin/env python3
"""Prints tools/peer-gpu.sh's results: ResNet-50 b128 and ResNet-1001 b64 with the peer tier against
their baselines (and ResNet-50 host-only at the same budget), each repeat too (r50-peer-2 against
r50-baseline-2, ...: planned from costs measured again), the bytes and speed of each link, the
predicted and measured step, the peer copies against the link's ceiling, and the peer tests, with
PASS/FAIL against issue 28's targets on the median of the repeats' ratios. `--self-test` checks
it on made-up run folders (no GPU needed) and exits 0 when it is right."""
import glob
import json
import os
import re
import sys

from planner_report import read_json, read_json_lines, self_test_status, write_file

RATIO_TARGET = {"r50-peer": 0.95, "r1001-peer": 0.90}
BASELINE = {"r50-peer": "r50-baseline", "r50-host": "r50-baseline", "r1001-peer": "r1001-baseline"}
LINK_TARGET = 0.85
GIB = float(1 << 30)


def summary(out, name):
    return read_json(os.path.join(out, name, "summary.json"))


def repeats(out, name):
    """`name` and its repeats (name-2, name-3, ...) that ran, in order."""
    found = [os.path.basename(p) for p in glob.glob(os.path.join(out, name + "-[0-9]*"))
             if os.path.isdir(p)]
    return [name] + sorted(found, key=lambda n: int(re.sub(r".*-", "", n)))


def baseline_of(out, name):
    """The baseline a run is measured against: its repeat's own (r1001-baseline-2 for
    r1001-peer-2), else the first repeat's."""
    kind = re.sub(r"-[0-9]+$", "", name)
    if kind not in BASELINE:
        return None
    suffix = name[len(kind):]
    return summary(out, BASELINE[kind] + suffix) or summary(out, BASELINE[kind])


def ratio_of(out, name):
    s, base = summary(out, name), baseline_of(out, name)
    if s is None or base is None:
        return None
    return s["images_per_s"] / base["images_per_s"]


def step_spread(out, name):
    """The 10th and 90th percentiles of a run's step times after its first step (metrics.jsonl),
    as "p10-p90": a wide spread is a host whose speed drifted during the run (Note [Peer tier]);
    empty without two such steps."""
    rows = read_json_lines(os.path.join(out, name, "metrics.jsonl")) or []
    ms = sorted(r["ms"] for r in rows[1:] if isinstance(r.get("ms"), (int, float)))
    if len(ms) < 2:
        return ""
    return f"{ms[len(ms) // 10]:.1f}-{ms[(len(ms) * 9) // 10]:.1f}"


def runs(out):
    print("| run | img/s | peak GiB | against its baseline | peer GiB a step, GB/s off / back | "
          "host GiB a step, busy off / back | host enqueue ms (waiting in allocations) | "
          "step ms, predicted / measured (p10-p90) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    names = [*repeats(out, "r50-baseline"), *repeats(out, "r50-peer"), "r50-host",
             *repeats(out, "r1001-baseline"), *repeats(out, "r1001-peer")]
    for name in names:
        s = summary(out, name)
        if s is None:
            print(f"| {name} | missing | | | | | | |")
            continue
        r = ratio_of(out, name)
        ratio = "" if r is None else f"{r:.3f}"
        peer = (f"{s.get('peer_offloaded_bytes_median', 0) / GIB:.2f}, "
                f"{s.get('peer_offload_gbps_median', 0):.0f} / "
                f"{s.get('peer_prefetch_gbps_median', 0):.0f}")
        tiered = s.get("peer_device", -1) >= 0  # then the plain fields count both tiers
        prefix = "host_" if tiered else ""
        host = (f"{s.get(prefix + 'offloaded_bytes_median', 0) / GIB:.2f}, "
                f"{s.get(prefix + 'offload_busy_median', 0):.2f} / "
                f"{s.get(prefix + 'prefetch_busy_median', 0):.2f}")
        spread = step_spread(out, name)
        step = (f"{s.get('predicted_step_ms', 0):.1f} / {s.get('iter_ms_median', 0):.1f}"
                + (f" ({spread})" if spread else ""))
        print(f"| {name} | {s['images_per_s']:.0f} | {s['peak_device_bytes'] / GIB:.2f} | {ratio} | "
              f"{peer} | {host} | {s.get('host_enqueue_ms_median', 0):.1f} "
              f"({s.get('allocation_wait_ms_median', 0):.1f}) | {step} |")


def verdicts(out):
    """Each line's verdict on the median of its repeats' ratios (an even count: the lower middle
    one): (kind, median or None, passed, the line printed)."""
    found = []
    for kind, target in RATIO_TARGET.items():
        ratios = sorted(r for r in (ratio_of(out, n) for n in repeats(out, kind)) if r is not None)
        if not ratios:
            found.append((kind, None, False, f"{kind}: no ratio (a run or its baseline is missing)"))
            continue
        median = ratios[(len(ratios) - 1) // 2]
        listed = ", ".join(f"{r:.3f}" for r in ratios)
        passed = median >= target
        found.append((kind, median, passed,
                      f"{kind} against its baseline: median {median:.3f} of {len(ratios)} "
                      f"({listed}) ({'PASS' if passed else 'FAIL'} >= {target})"))
    return found


def links(out):
    ceilings = read_json(os.path.join(out, "ceilings.json")) or {}
    to_peer, from_peer = ceilings.get("peer_to_gbps"), ceilings.get("peer_from_gbps")
    if not to_peer or not from_peer:
        print("peer link ceiling: not measured (ceilings.json)")
        return
    print(f"peer link ceiling (cudaMemcpyPeerAsync, 1 GiB): {to_peer:.0f} GB/s to GPU 1, "
          f"{from_peer:.0f} back")
    for name in (*repeats(out, "r50-peer"), *repeats(out, "r1001-peer")):
        s = summary(out, name)
        if s is None:
            continue
        for field, ceiling in (("peer_offload_gbps_median", to_peer),
                               ("peer_prefetch_gbps_median", from_peer)):
            r = s.get(field, 0.0) / ceiling
            verdict = "PASS" if r >= LINK_TARGET else "FAIL"
            print(f"{name} {field}: {s.get(field, 0.0):.0f} GB/s = {r:.2f} of the ceiling "
                  f"({verdict} >= {LINK_TARGET})")


def tests(out):
    try:
        with open(os.path.join(out, "tests.log")) as f:
            lines = [line.rstrip() for line in f if line.startswith(("[  PASSED", "[  FAILED",
                                                                      "[  SKIPPED"))]
    except OSError:
        lines = ["tests: not run"]
    for line in lines:
        print(line)


def main(out):
    try:
        with open(os.path.join(out, "devices.txt")) as f:
            print(f.read().rstrip())
    except OSError:
        print("devices: not listed")
    print()
    runs(out)
    print()
    for *_, line in verdicts(out):
        print(line)
    print()
    links(out)
    print()
    tests(out)


def self_test():
    """Made-up run folders: each repeat against its own baseline or the first one, the median of
    three and of two, a missing line."""
    import tempfile

    def run(out, name, images_per_s):
        write_file(os.path.join(out, name, "summary.json"),
                   {"images_per_s": images_per_s, "peak_device_bytes": 1 << 30})

    with tempfile.TemporaryDirectory() as out:
        run(out, "r1001-baseline", 800.0)
        run(out, "r1001-peer", 720.0)       # 0.900
        run(out, "r1001-baseline-2", 640.0)  # a slow host: its neighbour is slow too
        run(out, "r1001-peer-2", 608.0)     # 0.950, against its own baseline
        run(out, "r1001-peer-3", 600.0)     # 0.750, against the first (no r1001-baseline-3)
        run(out, "r50-baseline", 1000.0)
        run(out, "r50-peer", 960.0)         # 0.960
        run(out, "r50-baseline-2", 1000.0)
        run(out, "r50-peer-2", 900.0)       # 0.900: the lower middle of two fails
        steps = [200.0] + [80.0] * 5 + [100.0] * 5  # a first step, then a host slower by a quarter
        write_file(os.path.join(out, "r1001-baseline", "metrics.jsonl"),
                   "".join(json.dumps({"ms": ms}) + "\n" for ms in steps))
        by = {kind: (median, passed) for kind, median, passed, _ in verdicts(out)}
        checks = [
            (abs(ratio_of(out, "r1001-peer-2") - 0.95) < 1e-9, "a repeat against its own baseline"),
            (abs(ratio_of(out, "r1001-peer-3") - 0.75) < 1e-9, "else against the first baseline"),
            (abs(by["r1001-peer"][0] - 0.90) < 1e-9 and by["r1001-peer"][1], "median of three"),
            (abs(by["r50-peer"][0] - 0.90) < 1e-9 and not by["r50-peer"][1],
             "median of two: the lower"),
            (step_spread(out, "r1001-baseline") == "80.0-100.0", "the steps' spread, first left out"),
            (step_spread(out, "r1001-peer") == "", "no metrics: no spread"),
        ]
        main(out)
    with tempfile.TemporaryDirectory() as out:
        checks.append((verdicts(out)[0][1] is None and not verdicts(out)[0][2], "no runs: no PASS"))
    return self_test_status(checks)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        sys.exit(self_test())
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
