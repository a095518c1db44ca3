#!/usr/bin/env python3
"""Collects a tools/speed-gpu.sh output folder (issue 11's baseline speed benchmark, and its bf16
cells) into markdown tables, one per precision, and OUT/speed.json with the same rows: per cell,
vdnn's baseline img/s and peak next to PyTorch eager and torch.compile in the same precision,
measured in the same run, their ratios, the targets and whether they are met (a PASS/FAIL line per
cell with targets); then where vdnn's step goes, per layer type (forward + backward ms from
--profile-layers). A run that failed, timed out or is missing shows as such; nothing stops on it.
Files per precision: fp32 OUT/CELL-baseline/, OUT/CELL-unfused/, OUT/CELL-profile/,
OUT/torch-CELL.jsonl; bf16 OUT/CELL-bf16-baseline/, OUT/CELL-bf16-profile/, OUT/torch-CELL-bf16.jsonl
(tools/torch_reference.py --precision bf16: autocast, channels_last).
`--self-test` checks this report on made-up folders (no GPU needed) and exits 0 when it is right.
Usage: tools/speed_report.py OUT [--precisions fp32,bf16] [CELL ...]   (default: the precisions OUT
has runs of; cells resnet50 vgg16 densenet121 resnet1001, or any of efficientnet_b0 convnext_tiny
mobilenet_v2)"""
import json
import os
import sys

from planner_report import exit_status, read_json, self_test_status, write_file as write

CELLS = {
    "resnet50": "ResNet-50 b128",
    "vgg16": "VGG-16 b64",
    "densenet121": "DenseNet-121 b64",
    "resnet1001": "ResNet-1001 CIFAR b64",
    # issue 29's: PyTorch's peers in channels_last (fp32 too)
    "efficientnet_b0": "EfficientNet-B0 b128 (PyTorch channels_last)",
    "convnext_tiny": "ConvNeXt-Tiny b64 (PyTorch channels_last)",
    "mobilenet_v2": "MobileNetV2 b256 (PyTorch channels_last)",
}
DEFAULT_CELLS = ("resnet50", "vgg16", "densenet121", "resnet1001")
PRECISIONS = ("fp32", "bf16")
PEAK = "peak_gib"
# The targets per precision and cell: {peer mode: least vdnn / peer ratio, PEAK: most vdnn peak GiB}.
# fp32: issue 11's; bf16: the mixed-precision issue's (peers in bf16 autocast, channels_last). Issue
# 29's networks take the same targets in both precisions ("bf16 too once it exists").
TARGETS = {
    "fp32": {
        "resnet50": {"compile": 1.0},
        "vgg16": {"eager": 1.0, "compile": 0.9},
        "densenet121": {"eager": 1.0, "compile": 0.9},
        "efficientnet_b0": {"eager": 1.0, "compile": 0.9},
        "convnext_tiny": {"eager": 1.0, "compile": 0.9},
        "mobilenet_v2": {"eager": 1.0, "compile": 0.9},
    },
    "bf16": {
        "resnet50": {"compile": 1.20, "eager": 1.25, PEAK: 5.5},
        "vgg16": {"compile": 1.0},
        "densenet121": {"compile": 1.0},
        "efficientnet_b0": {"eager": 1.0, "compile": 0.9},
        "convnext_tiny": {"eager": 1.0, "compile": 0.9},
        "mobilenet_v2": {"eager": 1.0, "compile": 0.9},
    },
}
PEERS = ("eager", "compile")
PEER_NAMES = {"eager": "PyTorch eager", "compile": "torch.compile"}
HEADINGS = {
    "fp32": "fp32 (TF32 convolutions; PyTorch in NCHW unless the row says channels_last)",
    "bf16": "bf16 (vdnn --precision bf16; PyTorch bf16 autocast, channels_last, fp32 master weights)",
}
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


def tag(precision):
    """What a precision adds to the names of its files: nothing for fp32 (issue 11's names)."""
    return "" if precision == "fp32" else "-" + precision


def torch_rows(out, cell, precision="fp32"):
    """The PyTorch rows of OUT/torch-CELL[-bf16].jsonl by mode; a mode with no row is missing."""
    return mode_rows(os.path.join(out, f"torch-{cell}{tag(precision)}.jsonl"))


def ran(out, cell, precision):
    """Whether OUT holds anything of CELL in PRECISION."""
    names = (f"{cell}{tag(precision)}-baseline", f"{cell}{tag(precision)}-baseline.exit",
             f"torch-{cell}{tag(precision)}.jsonl")
    return any(os.path.exists(os.path.join(out, n)) for n in names)


def shown(row):
    """'img/s (peak GiB)', or why there is none."""
    if row is None:
        return "missing"
    if "error" in row:
        return row["error"]
    return f"{row['images_per_s']:.0f} ({row['peak_device_bytes'] / GIB:.2f})"


def vdnn_run(out, run):
    """img/s, peak and layout of vdnn's run folder OUT/RUN, or {"error": why there are none}."""
    summary = read_json(os.path.join(out, run, "summary.json"))
    if not isinstance(summary, dict) or summary.get("images_per_s", 0) <= 0:
        status = exit_status(out, run)
        return {"error": status if status not in (None, "ok") else "no summary.json"}
    return {"images_per_s": summary["images_per_s"], "peak_device_bytes": summary["peak_device_bytes"],
            "layout": summary.get("layout", "nchw"), "fused_chains": summary.get("fused_chains", 0)}


def cell_row(out, cell, precision="fp32"):
    vdnn = vdnn_run(out, f"{cell}{tag(precision)}-baseline")
    peers = torch_rows(out, cell, precision)
    row = {"cell": cell, "title": CELLS[cell], "precision": precision, "vdnn": vdnn,
           "peers": {m: peers.get(m) for m in PEERS}, "ratios": {}, "targets": {}}
    if precision == "fp32":
        row["unfused_nchw"] = vdnn_run(out, f"{cell}-unfused")
    ok = "error" not in vdnn
    for mode in PEERS:
        peer = peers.get(mode)
        if ok and peer and "error" not in peer:
            row["ratios"][mode] = vdnn["images_per_s"] / peer["images_per_s"]
    for what, bound in TARGETS[precision].get(cell, {}).items():
        if what == PEAK:
            row["targets"][what] = {"most": bound, "met": ok and vdnn["peak_device_bytes"] / GIB <= bound}
        else:
            ratio = row["ratios"].get(what)
            row["targets"][what] = {"least": bound, "met": ratio is not None and ratio >= bound}
    return row


def target_shown(what, t):
    return f"peak <= {t['most']} GiB" if what == PEAK else f">= {t['least']}x {what}"


def verdict(r):
    """'PASS|FAIL title precision: each target with the measured value', for a row with targets."""
    parts = []
    for what, t in r["targets"].items():
        if what == PEAK:
            peak = r["vdnn"].get("peak_device_bytes")
            value = "no peak" if peak is None else f"peak {peak / GIB:.2f} GiB"
            parts.append(f"{value} (<= {t['most']})")
        else:
            ratio = r["ratios"].get(what)
            value = f"{ratio:.2f}x" if ratio is not None else "no ratio"
            parts.append(f"{value} {PEER_NAMES[what]} (>= {t['least']:.2f}x)")
    passed = all(t["met"] for t in r["targets"].values())
    return f"{'PASS' if passed else 'FAIL'} {r['title']} {r['precision']}: " + ", ".join(parts)


def table(rows, precision):
    """The markdown lines of one precision's table and its PASS/FAIL lines."""
    fp32 = precision == "fp32"
    peer = "" if fp32 else f" {precision} channels_last"
    lines = [f"### {HEADINGS.get(precision, precision)}", "",
             f"| network, batch | vdnn baseline {precision} img/s (peak GiB) | layout, fused chains | "
             + ("unfused NCHW | " if fp32 else "")
             + f"PyTorch eager{peer} | torch.compile{peer} | vdnn / eager | vdnn / compile | targets | result |",
             "| --- | ---: | --- | " + ("---: | " if fp32 else "") + "---: | ---: | ---: | ---: | --- | --- |"]
    for r in rows:
        ratios = [f"{r['ratios'][m]:.2f}x" if m in r["ratios"] else "-" for m in PEERS]
        targets = ", ".join(target_shown(w, t) for w, t in r["targets"].items()) or "-"
        results = [t["met"] for t in r["targets"].values()]
        result = "-" if not results else ("pass" if all(results) else "FAIL")
        how = f"{r['vdnn']['layout']}, {r['vdnn']['fused_chains']}" if "layout" in r["vdnn"] else "-"
        unfused = f"{shown(r['unfused_nchw'])} | " if fp32 else ""
        lines.append(f"| {r['title']} | {shown(r['vdnn'])} | {how} | {unfused}"
                     f"{shown(r['peers']['eager'])} | {shown(r['peers']['compile'])} | "
                     f"{ratios[0]} | {ratios[1]} | {targets} | {result} |")
    met = sum(t["met"] for r in rows for t in r["targets"].values())
    total = sum(len(r["targets"]) for r in rows)
    lines += ["", f"{precision} targets met: {met} of {total}"]
    lines += [verdict(r) for r in rows if r["targets"]]
    return lines


def type_times(out, run):
    """{type: (forward, backward) ms} of OUT/RUN/layers.json, or None."""
    layers = read_json(os.path.join(out, run, "layers.json"))
    if not isinstance(layers, dict) or not isinstance(layers.get("by_type"), dict):
        return None
    return {t: (ms["forward_ms"], ms["backward_ms"]) for t, ms in layers["by_type"].items()}


def profile_lines(out, rows):
    """Where each row's vdnn step goes; adds it to the rows (by_type_ms)."""
    lines = ["Where vdnn's baseline step goes (--profile-layers, ms forward + backward, share of the sum):", ""]
    for r in rows:
        times = type_times(out, f"{r['cell']}{tag(r['precision'])}-profile")
        r["by_type_ms"] = times
        name = f"{r['title']} {r['precision']}"
        if not times:
            lines.append(f"- {name}: no layers.json")
            continue
        step = sum(f + b for f, b in times.values())
        parts = sorted(times.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))
        lines.append(f"- {name} ({step:.1f} ms): " + "; ".join(
            f"{t} {f:.1f} + {b:.1f} ({(f + b) / step:.0%})" for t, (f, b) in parts))
    return lines


def report(out, cells, precisions):
    """The rows of CELLS in each precision, the report's text; writes OUT/speed.json."""
    rows, lines = [], []
    for precision in precisions:
        these = [cell_row(out, c, precision) for c in cells]
        lines += table(these, precision) + [""]
        rows += these
    lines += profile_lines(out, rows)
    with open(os.path.join(out, "speed.json"), "w") as f:
        json.dump(rows, f, indent=2)
    return rows, "\n".join(lines)


def self_test():
    """Made-up OUT folders through the report: fp32 and bf16 cells, passes, misses, failures."""
    import tempfile

    def vdnn(out, run, img_s, peak_gib):
        write(os.path.join(out, run, "summary.json"), {"images_per_s": img_s, "peak_device_bytes": int(peak_gib * GIB),
                                                       "layout": "nhwc", "fused_chains": 33})

    def peers(out, name, eager, compile_):
        rows = [{"mode": "eager", "images_per_s": eager, "peak_device_bytes": int(5.7 * GIB)},
                compile_ if isinstance(compile_, dict) else
                {"mode": "compile", "images_per_s": compile_, "peak_device_bytes": int(5.5 * GIB)}]
        write(os.path.join(out, f"torch-{name}.jsonl"), "\n".join(json.dumps(r) for r in rows) + "\nnot json\n")

    with tempfile.TemporaryDirectory() as out:
        vdnn(out, "resnet50-baseline", 3600, 10.5)
        vdnn(out, "resnet50-unfused", 2100, 11.0)
        peers(out, "resnet50", 3000, 3500)
        write(os.path.join(out, "resnet50-profile", "layers.json"),
              {"by_type": {"conv2d": {"forward_ms": 8.0, "backward_ms": 19.0},
                           "relu": {"forward_ms": 1.0, "backward_ms": 2.0}}})
        vdnn(out, "resnet50-bf16-baseline", 5000, 5.2)          # 1.25x compile, 1.30x eager: passes
        peers(out, "resnet50-bf16", 3846, 4000)
        vdnn(out, "vgg16-bf16-baseline", 2000, 5.0)             # 0.95x compile: fails
        peers(out, "vgg16-bf16", 1500, 2105)
        write(os.path.join(out, "densenet121-bf16-baseline.exit"), "124\n")  # timed out: fails
        peers(out, "densenet121-bf16", 1000, {"mode": "compile", "error": "TimeoutError: did not finish"})
        vdnn(out, "resnet1001-bf16-baseline", 700, 4.6)         # no targets
        precisions = [p for p in PRECISIONS if any(ran(out, c, p) for c in DEFAULT_CELLS)]
        rows, text = report(out, list(DEFAULT_CELLS), precisions)
        print(text)
        by = {(r["precision"], r["cell"]): r for r in rows}
        lines = text.splitlines()
        checks = [
            (precisions == ["fp32", "bf16"], "both precisions found"),
            (len(rows) == 8 and len(read_json(os.path.join(out, "speed.json"))) == 8, "speed.json: 8 rows"),
            (by["fp32", "resnet50"]["targets"]["compile"]["met"], "fp32 ResNet-50 >= 1.0x compile"),
            ("| ResNet-50 b128 | 3600 (10.50) | nhwc, 33 | 2100 (11.00) | 3000 (5.70) | 3500 (5.50) | 1.20x | 1.03x |"
             in text, "fp32 line with the unfused column"),
            ("PASS ResNet-50 b128 bf16: 1.25x torch.compile (>= 1.20x), 1.30x PyTorch eager (>= 1.25x), "
             "peak 5.20 GiB (<= 5.5)" in lines, "bf16 ResNet-50 passes"),
            ("| ResNet-50 b128 | 5000 (5.20) | nhwc, 33 | 3846 (5.70) | 4000 (5.50) | 1.30x | 1.25x |" in text,
             "bf16 line without the unfused column"),
            ("PyTorch eager bf16 channels_last | torch.compile bf16 channels_last |" in text, "bf16 peer headers"),
            ("| DenseNet-121 b64 | exit 124 (timed out) | - |" in text, "a timed-out vdnn run says so"),
            ("FAIL VGG-16 b64 bf16: 0.95x torch.compile (>= 1.00x)" in lines, "bf16 VGG-16 misses"),
            ("FAIL DenseNet-121 b64 bf16: no ratio torch.compile (>= 1.00x)" in lines, "bf16 DenseNet without vdnn"),
            ("TimeoutError: did not finish" in text, "a compile error is shown"),
            (not any(line.startswith(("PASS ResNet-1001", "FAIL ResNet-1001")) for line in lines),
             "no verdict without targets"),
            ("fp32 targets met: 1 of 5" in lines and "bf16 targets met: 3 of 5" in lines, "totals"),
            ("FAIL VGG-16 b64 fp32: no ratio PyTorch eager (>= 1.00x), no ratio torch.compile (>= 0.90x)" in lines,
             "fp32 cells that did not run fail"),
            (any(line.startswith("- ResNet-50 b128 fp32 (30.0 ms): conv2d 8.0 + 19.0 (90%)") for line in lines),
             "fp32 profile"),
            ("- ResNet-50 b128 bf16: no layers.json" in lines, "bf16 profile missing"),
            (by["bf16", "resnet50"]["targets"][PEAK] == {"most": 5.5, "met": True}, "peak target in the row"),
        ]
        vdnn(out, "resnet50-bf16-baseline", 5000, 5.6)
        checks.append((not cell_row(out, "resnet50", "bf16")["targets"][PEAK]["met"], "a peak over 5.5 GiB fails"))
    return self_test_status(checks)


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__.split("Usage: ")[1])
    if args[0] == "--self-test":
        sys.exit(self_test())
    out, args = args[0], args[1:]
    precisions = None
    if args[:1] == ["--precisions"] and len(args) > 1:
        precisions = args[1].replace(",", " ").split()
        args = args[2:]
    cells = args or list(DEFAULT_CELLS)
    unknown = [c for c in cells if c not in CELLS] + [p for p in precisions or [] if p not in PRECISIONS]
    if unknown:
        sys.exit(f"speed_report.py: unknown {unknown} (cells {' '.join(CELLS)}; precisions {' '.join(PRECISIONS)})")
    if precisions is None:
        precisions = [p for p in PRECISIONS if any(ran(out, c, p) for c in cells)] or ["fp32"]
    print(report(out, cells, precisions)[1])


if __name__ == "__main__":
    main()
