#!/usr/bin/env python3
"""Collects a tools/speed-gpu.sh output folder (issue 11's baseline speed benchmark) into two
markdown tables, and OUT/speed.json with the same rows: per cell, vdnn's baseline img/s and peak
next to PyTorch eager and torch.compile measured in the same run, their ratios, issue 11's targets
and whether they are met; then where vdnn's step goes, per layer type (forward + backward ms from
--profile-layers). A run that failed, timed out or is missing shows as such; nothing stops on it.
Usage: tools/speed_report.py OUT [CELL ...]   (default: resnet50 vgg16 densenet121 resnet1001)"""
import json
import os
import sys

from planner_report import read_json

# Each cell: title, and issue 11's targets as {peer mode: least vdnn / peer ratio}.
CELLS = {
    "resnet50": ("ResNet-50 b128", {"compile": 1.0}),
    "vgg16": ("VGG-16 b64", {"eager": 1.0, "compile": 0.9}),
    "densenet121": ("DenseNet-121 b64", {"eager": 1.0, "compile": 0.9}),
    "resnet1001": ("ResNet-1001 CIFAR b64", {}),
}
PEERS = ("eager", "compile")
GIB = float(1 << 30)


def mode_rows(path):
    """The rows of a JSON-lines file of tools/torch_reference.py by mode; {} when unreadable."""
    rows = {}
    try:
        with open(path) as f:
            for line in f:
                try:
                    row = json.loads(line)
                except ValueError:
                    continue
                if isinstance(row, dict):
                    rows[row.get("mode")] = row
    except OSError:
        pass
    return rows


def torch_rows(out, cell):
    """The PyTorch rows of OUT/torch-CELL.jsonl by mode; a mode with no row is missing."""
    return mode_rows(os.path.join(out, f"torch-{cell}.jsonl"))


def shown(row):
    """'img/s (peak GiB)', or why there is none."""
    if row is None:
        return "missing"
    if "error" in row:
        return row["error"]
    return f"{row['images_per_s']:.0f} ({row['peak_device_bytes'] / GIB:.2f})"


def vdnn_run(out, run):
    """img/s, peak and layout of vdnn's run folder OUT/RUN, or None."""
    summary = read_json(os.path.join(out, run, "summary.json"))
    if not isinstance(summary, dict) or summary.get("images_per_s", 0) <= 0:
        return None
    return {"images_per_s": summary["images_per_s"], "peak_device_bytes": summary["peak_device_bytes"],
            "layout": summary.get("layout", "nchw"), "fused_chains": summary.get("fused_chains", 0)}


def cell_row(out, cell):
    title, targets = CELLS[cell]
    vdnn = vdnn_run(out, f"{cell}-baseline")
    unfused = vdnn_run(out, f"{cell}-unfused")
    peers = torch_rows(out, cell)
    row = {"cell": cell, "title": title, "vdnn": vdnn if vdnn else {"error": "no summary.json"},
           "unfused_nchw": unfused if unfused else {"error": "no summary.json"},
           "peers": {m: peers.get(m) for m in PEERS}, "ratios": {}, "targets": {}}
    for mode in PEERS:
        peer = peers.get(mode)
        if vdnn and peer and "error" not in peer:
            row["ratios"][mode] = vdnn["images_per_s"] / peer["images_per_s"]
    for mode, least in targets.items():
        ratio = row["ratios"].get(mode)
        row["targets"][mode] = {"least": least, "met": ratio is not None and ratio >= least}
    return row


def type_times(out, cell):
    """{type: forward + backward ms} of OUT/CELL-profile/layers.json, or None."""
    layers = read_json(os.path.join(out, f"{cell}-profile", "layers.json"))
    if not isinstance(layers, dict) or not isinstance(layers.get("by_type"), dict):
        return None
    return {t: (ms["forward_ms"], ms["backward_ms"]) for t, ms in layers["by_type"].items()}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.splitlines()[-1])
    out = sys.argv[1]
    cells = sys.argv[2:] or list(CELLS)
    rows = [cell_row(out, c) for c in cells if c in CELLS]
    print("| network, batch | vdnn baseline img/s (peak GiB) | layout, fused chains | "
          "unfused NCHW | PyTorch eager | torch.compile | vdnn / eager | vdnn / compile | targets | result |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    met = total = 0
    for r in rows:
        ratios = [f"{r['ratios'][m]:.2f}x" if m in r["ratios"] else "-" for m in PEERS]
        targets = ", ".join(f">= {t['least']}x {m}" for m, t in r["targets"].items()) or "-"
        results = [t["met"] for t in r["targets"].values()]
        met += sum(results)
        total += len(results)
        result = "-" if not results else ("pass" if all(results) else "FAIL")
        how = f"{r['vdnn']['layout']}, {r['vdnn']['fused_chains']}" if "layout" in r["vdnn"] else "-"
        print(f"| {r['title']} | {shown(r['vdnn'])} | {how} | {shown(r['unfused_nchw'])} | "
              f"{shown(r['peers']['eager'])} | "
              f"{shown(r['peers']['compile'])} | {ratios[0]} | {ratios[1]} | {targets} | {result} |")
    print(f"\ntargets met: {met} of {total}\n")
    print("Where vdnn's baseline step goes (--profile-layers, ms forward + backward, share of the sum):\n")
    for r in rows:
        times = type_times(out, r["cell"])
        r["by_type_ms"] = times
        if not times:
            print(f"- {r['title']}: no layers.json")
            continue
        step = sum(f + b for f, b in times.values())
        parts = sorted(times.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))
        print(f"- {r['title']} ({step:.1f} ms): " + "; ".join(
            f"{t} {f:.1f} + {b:.1f} ({(f + b) / step:.0%})" for t, (f, b) in parts))
    with open(os.path.join(out, "speed.json"), "w") as f:
        json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
