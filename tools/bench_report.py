#!/usr/bin/env python3
"""Collects a tools/bench-gpu.sh output folder into OUT/bench.json and prints the table, with the
ratios the acceptance of the CUDA and UVM backends asks for (vs the copy and migration ceilings,
vs PyTorch, and vs the naive managed-memory figure)."""
import glob
import json
import os
import sys


def load_runs(out):
    runs = []
    for path in sorted(glob.glob(os.path.join(out, "*", "summary.json"))):
        s = json.load(open(path))
        runs.append({
            "framework": "vdnn", "network": s["network"], "batch": s["batch"],
            "mode": s["requested_policy"] + ("->" + s["policy"] if s["policy"] != s["requested_policy"] else "")
                    + (f" @{s['budget_bytes'] / 2**30:.1f}GiB" if s["budget_bytes"] else "")
                    + (" counted" if os.path.dirname(path).endswith("-counted") else ""),
            "images_per_s": s["images_per_s"], "ms_per_iter": s["iter_ms_median"],
            "peak_device_bytes": s["peak_device_bytes"],
            "offloaded_bytes": s["offloaded_bytes"], "prefetched_bytes": s["prefetched_bytes"],
            "offload_gbps": s["offload_gbps_median"], "prefetch_gbps": s["prefetch_gbps_median"],
            "offload_busy": s["offload_busy_median"], "prefetch_busy": s["prefetch_busy_median"],
            "budget_bytes": s["budget_bytes"], "device_memory": s["device_memory"],
            "migration_source": s.get("migration_source", ""),
            "to_device_bytes": s.get("migrated_to_device_bytes_median", 0),
            "to_host_bytes": s.get("migrated_to_host_bytes_median", 0),
            "gpu_page_faults": s.get("gpu_page_faults_median", 0),
            "to_device_gbps": s.get("migration_to_device_gbps_median", 0),
            "to_host_gbps": s.get("migration_to_host_gbps_median", 0),
            "evict_gbps": s.get("evict_gbps_median", 0), "migrate_gbps": s.get("migrate_gbps_median", 0),
        })
    for path in sorted(glob.glob(os.path.join(out, "torch-*.jsonl"))):
        runs += [json.loads(line) for line in open(path) if line.strip()]
    return runs


# PyTorch ResNet-50 b128 with every allocation in cudaMallocManaged and no pool, measured on the
# H200 (shared/GPU-MACHINE.md): what a user gets by swapping the allocator naively.
NAIVE_MANAGED_IMG_S = 37.0


def print_managed(runs):
    """The managed-memory runs: bytes the driver migrated, faults, migration bandwidth."""
    managed = [r for r in runs if r.get("device_memory") == "managed"]
    if not managed:
        return
    print(f"\n{'network':10} {'batch':>5} {'mode':30} {'->dev GB':>8} {'->host GB':>9} {'faults':>8} "
          f"{'->dev GB/s':>10} {'->host GB/s':>11} {'evict GB/s':>10} {'migr GB/s':>9}  source")
    for r in managed:
        print(f"{r['network']:10} {r['batch']:5} {r['mode']:30} {r['to_device_bytes'] / 1e9:8.2f} "
              f"{r['to_host_bytes'] / 1e9:9.2f} {r['gpu_page_faults']:8.0f} {r['to_device_gbps']:10.1f} "
              f"{r['to_host_gbps']:11.1f} {r['evict_gbps']:10.1f} {r['migrate_gbps']:9.1f}  "
              f"{r['migration_source'][:40]}")


def migration_bounds(moved, base, ceiling):
    """img/s bounds from the bytes `moved` migrated and the managed ceilings measured in this run.
    serial: under a budget that binds where forward meets backward (vDNN's peak), every evicted
    byte has left before backward reads its first evicted map, the last one evicted, so evictions
    and migrations back cannot overlap: step >= to_host / ceiling + to_device / ceiling.
    overlap: both directions and compute overlapped perfectly (not reachable under such a budget)."""
    t_host = moved["to_host_bytes"] / (ceiling["managed_to_host_gbps"] * 1e9)
    t_device = moved["to_device_bytes"] / (ceiling["managed_to_device_gbps"] * 1e9)
    t_compute = base["ms_per_iter"] / 1e3
    return (moved["batch"] / max(t_compute, t_host + t_device),
            moved["batch"] / max(t_compute, t_host, t_device))


def print_uvm_acceptance(by, net, batch, base, ceiling):
    uvm = by.get((net, batch, "vdnn", "uvm"))
    prefetch = by.get((net, batch, "vdnn", "uvm-prefetch budget"))
    evict = by.get((net, batch, "vdnn", "uvm-evict budget"))
    # Throughput from the runs without CUPTI, bytes from the counted ones where they exist.
    moved = by.get((net, batch, "vdnn", "uvm-prefetch budget counted")) or prefetch
    if uvm:
        print(f"  uvm / baseline img/s: {uvm['images_per_s'] / base['images_per_s']:.3f} (want >= 0.95)")
    for name, r in (("uvm-evict", evict), ("uvm-prefetch", prefetch)):
        if not r:
            continue
        print(f"  {name} peak {r['peak_device_bytes'] / 2**30:.2f} GiB within the budget "
              f"{r['budget_bytes'] / 2**30:.2f} GiB: {r['peak_device_bytes'] <= r['budget_bytes']}")
        print(f"  {name} / naive managed memory ({NAIVE_MANAGED_IMG_S:.0f} img/s): "
              f"{r['images_per_s'] / NAIVE_MANAGED_IMG_S:.2f}" + (" (want >= 4)" if name == "uvm-prefetch" else ""))
    if prefetch and ceiling.get("managed_to_host_gbps"):
        serial, overlap = migration_bounds(moved, base, ceiling)
        print(f"  uvm-prefetch / serial migration bound ({serial:.1f} img/s): "
              f"{prefetch['images_per_s'] / serial:.3f} (want >= 0.80); / full-overlap bound "
              f"({overlap:.1f} img/s): {prefetch['images_per_s'] / overlap:.3f}")


def main():
    out = sys.argv[1]
    ceiling = json.load(open(os.path.join(out, "ceiling.json")))
    runs = load_runs(out)
    json.dump({"ceiling": ceiling, "runs": runs}, open(os.path.join(out, "bench.json"), "w"), indent=1)
    print(f"pinned copy ceiling: D2H {ceiling['d2h_gbps']:.1f} GB/s, H2D {ceiling['h2d_gbps']:.1f} GB/s, "
          f"both {ceiling['both_gbps']:.1f} GB/s")
    if "managed_to_host_gbps" in ceiling:
        print(f"managed migration ceiling: to host {ceiling['managed_to_host_gbps']:.1f} GB/s, to device "
              f"{ceiling['managed_to_device_gbps']:.1f} GB/s, demand faults {ceiling['managed_fault_gbps']:.1f} GB/s")
    head = f"{'network':10} {'batch':>5} {'framework':9} {'mode':30} {'img/s':>8} {'ms/iter':>8} {'peak GiB':>9} " \
           f"{'off GB':>7} {'pre GB':>7} {'off GB/s':>8} {'pre GB/s':>8} {'off busy':>8} {'pre busy':>8}"
    print(head)
    for r in runs:
        extra = ""
        if r["framework"] == "vdnn":
            extra = (f" {r['offloaded_bytes'] / 1e9:7.2f} {r['prefetched_bytes'] / 1e9:7.2f} {r['offload_gbps']:8.1f}"
                     f" {r['prefetch_gbps']:8.1f} {r['offload_busy']:8.2f} {r['prefetch_busy']:8.2f}")
        print(f"{r['network']:10} {r['batch']:5} {r['framework']:9} {r['mode']:30} {r['images_per_s']:8.1f} "
              f"{r['ms_per_iter']:8.1f} {r['peak_device_bytes'] / 2**30:9.2f}{extra}")
    print_managed(runs)
    by = {(r["network"], r["batch"], r["framework"], r["mode"].split("->")[0].split(" @")[0].split(" counted")[0]
           + (" budget" if " @" in r["mode"] and not r["mode"].startswith("vdnn-dyn") else "")
           + (" counted" if r["mode"].endswith(" counted") else "")): r
          for r in runs}
    for (net, batch, fw, mode), r in by.items():
        if fw != "vdnn" or mode != "baseline":
            continue
        eager = by.get((net, batch, "pytorch", "eager"))
        soc = by.get((net, batch, "pytorch", "save_on_cpu"))
        allr = by.get((net, batch, "vdnn", "vdnn-all budget")) or by.get((net, batch, "vdnn", "vdnn-all"))
        dyn = by.get((net, batch, "vdnn", "vdnn-dyn"))
        print(f"\n{net} batch {batch}:")
        if eager:
            print(f"  baseline / PyTorch eager img/s: {r['images_per_s'] / eager['images_per_s']:.3f} (want >= 0.9)")
        if allr:
            print(f"  vdnn-all peak / baseline peak: {allr['peak_device_bytes'] / r['peak_device_bytes']:.3f} (want <= 0.40)")
            print(f"  vdnn-all offload / D2H ceiling: {allr['offload_gbps'] / ceiling['d2h_gbps']:.3f}, "
                  f"prefetch / H2D ceiling: {allr['prefetch_gbps'] / ceiling['h2d_gbps']:.3f} (want >= 0.90)")
            if soc:
                print(f"  vdnn-all / PyTorch save_on_cpu img/s: {allr['images_per_s'] / soc['images_per_s']:.2f} (want >= 2)")
        if dyn:
            print(f"  vdnn-dyn chose {dyn['mode']}; img/s vs baseline: {dyn['images_per_s'] / r['images_per_s']:.3f} (want >= 0.97)")
        print_uvm_acceptance(by, net, batch, r, ceiling)


if __name__ == "__main__":
    main()
