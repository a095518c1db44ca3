#!/usr/bin/env python3
"""Prints tools/peer-gpu.sh's results: ResNet-50 b128 and ResNet-1001 b64 with the peer tier against
their baselines (and ResNet-50 host-only at the same budget), each repeat too (r50-peer-2 against
r50-baseline-2, ...: planned from costs measured again), the bytes and speed of each link, the
predicted and measured step, the peer copies against the link's ceiling, and the peer tests, with
PASS/FAIL against issue 28's targets on the median of the repeats' ratios."""
import glob
import os
import re
import sys

from planner_report import read_json

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


def runs(out):
    print("| run | img/s | peak GiB | against its baseline | peer GiB a step, GB/s off / back | "
          "host GiB a step, busy off / back | host enqueue ms (waiting in allocations) | "
          "step ms, predicted / measured |")
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
        step = f"{s.get('predicted_step_ms', 0):.1f} / {s.get('iter_ms_median', 0):.1f}"
        print(f"| {name} | {s['images_per_s']:.0f} | {s['peak_device_bytes'] / GIB:.2f} | {ratio} | "
              f"{peer} | {host} | {s.get('host_enqueue_ms_median', 0):.1f} "
              f"({s.get('allocation_wait_ms_median', 0):.1f}) | {step} |")


def verdicts(out):
    """Each line's PASS/FAIL on the median of its repeats' ratios (an even count: the lower
    middle one)."""
    for kind, target in RATIO_TARGET.items():
        ratios = sorted(r for r in (ratio_of(out, n) for n in repeats(out, kind)) if r is not None)
        if not ratios:
            print(f"{kind}: no ratio (a run or its baseline is missing)")
            continue
        median = ratios[(len(ratios) - 1) // 2]
        listed = ", ".join(f"{r:.3f}" for r in ratios)
        print(f"{kind} against its baseline: median {median:.3f} of {len(ratios)} ({listed}) "
              f"({'PASS' if median >= target else 'FAIL'} >= {target})")


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
    verdicts(out)
    print()
    links(out)
    print()
    tests(out)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
