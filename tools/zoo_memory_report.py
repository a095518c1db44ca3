#!/usr/bin/env python3
"""Collects a tools/zoo-memory-gpu.sh output folder (issue 29's memory lines) into a PASS/FAIL line
per network and OUT/zoo-memory.json: from each OUT/CELL/results.json of `vdnn compare --max-batch
--policies baseline,auto`, the largest batch each policy trains under the budget (planner search,
confirmed by real steps) and its img/s there. A line passes when auto's largest batch is at least
4x baseline's and its img/s at least 0.70x baseline's at baseline's largest batch.
`--self-test` checks this report on made-up folders (no GPU needed) and exits 0 when it is right.
Usage: tools/zoo_memory_report.py OUT [CELL ...]   (default: efficientnet_b7 convnext_base)"""
import contextlib
import io
import json
import os
import sys

from planner_report import read_json, self_test_status, write_file as write

CELLS = {
    "efficientnet_b7": "EfficientNet-B7 at 600x600",
    "convnext_base": "ConvNeXt-Base at 224x224",
}
BATCH_TARGET = 4.0   # auto's largest batch over baseline's
SPEED_TARGET = 0.70  # auto's img/s at its largest batch over baseline's at its own
JSON_NAME = "zoo-memory.json"


def searches(out, cell):
    """{policy: (largest batch, img/s)} from OUT/CELL/results.json; {} when it is missing."""
    results = read_json(os.path.join(out, cell, "results.json")) or {}
    return {s["policy"]: (s["value"], s["images_per_s"]) for s in results.get("searches", [])}


def verdict(title, found):
    """The cell's row and its PASS/FAIL line."""
    if "baseline" not in found or "auto" not in found:
        missing = ", ".join(p for p in ("baseline", "auto") if p not in found)
        return {"cell": title, "pass": False}, f"FAIL {title}: no search result for {missing}"
    (base_batch, base_rate), (auto_batch, auto_rate) = found["baseline"], found["auto"]
    batches = auto_batch / base_batch if base_batch > 0 else 0.0
    speed = auto_rate / base_rate if base_rate > 0 else 0.0
    ok = base_batch > 0 and batches >= BATCH_TARGET and speed >= SPEED_TARGET
    row = {"cell": title, "baseline_batch": base_batch, "baseline_images_per_s": base_rate,
           "auto_batch": auto_batch, "auto_images_per_s": auto_rate, "batch_ratio": batches,
           "speed_ratio": speed, "pass": ok}
    line = (f"{'PASS' if ok else 'FAIL'} {title}: auto's largest batch {auto_batch} = {batches:.1f}x "
            f"baseline's {base_batch} (target >= {BATCH_TARGET:g}x), {auto_rate:.1f} img/s = "
            f"{speed:.2f}x baseline's {base_rate:.1f} img/s at its batch (target >= {SPEED_TARGET:.2f}x)")
    return row, line


def report(out, cells):
    """Prints a line per cell and the totals; writes OUT/zoo-memory.json; returns its contents."""
    rows = []
    for cell in cells:
        row, line = verdict(CELLS.get(cell, cell), searches(out, cell))
        rows.append(row)
        print(line)
    met = sum(1 for r in rows if r["pass"])
    print(f"targets met: {met} of {len(rows)}")
    summary = {"cells": rows, "targets": len(rows), "targets_met": met, "all_pass": met == len(rows)}
    write(os.path.join(out, JSON_NAME), summary)
    return summary


def self_test():
    """Made-up folders: one that passes, one too slow, one whose auto search is missing."""
    import tempfile

    def results(out, cell, base, auto):
        found = [{"policy": "baseline", "precision": "fp32", "value": base[0], "images_per_s": base[1]}]
        if auto is not None:
            found.append({"policy": "auto", "precision": "fp32", "value": auto[0], "images_per_s": auto[1]})
        write(os.path.join(out, cell, "results.json"), {"mode": "max-batch", "searches": found})

    with tempfile.TemporaryDirectory() as out:
        results(out, "efficientnet_b7", (5, 100.0), (70, 90.0))
        results(out, "convnext_base", (69, 500.0), (637, 300.0))
        results(out, "slow", (10, 100.0), None)
        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            summary = report(out, ["efficientnet_b7", "convnext_base", "slow"])
        lines = text.getvalue().splitlines()
        print(text.getvalue())
        checks = [
            ("PASS EfficientNet-B7 at 600x600: auto's largest batch 70 = 14.0x baseline's 5 (target >= 4x), "
             "90.0 img/s = 0.90x baseline's 100.0 img/s at its batch (target >= 0.70x)" in lines, "a pass"),
            (lines[1].startswith("FAIL ConvNeXt-Base at 224x224: auto's largest batch 637 = 9.2x")
             and "= 0.60x baseline's" in lines[1], "too slow fails"),
            ("FAIL slow: no search result for auto" in lines, "a missing search fails"),
            (summary["targets_met"] == 1 and not summary["all_pass"], "totals"),
            (read_json(os.path.join(out, JSON_NAME)) == json.loads(json.dumps(summary)), "json written"),
        ]
    return self_test_status(checks)


def main():
    if sys.argv[1:2] == ["--self-test"]:
        sys.exit(self_test())
    if len(sys.argv) < 2:
        print(__doc__.splitlines()[-1], file=sys.stderr)
        sys.exit(2)
    summary = report(sys.argv[1], sys.argv[2:] or list(CELLS))
    sys.exit(0 if summary["all_pass"] else 1)


if __name__ == "__main__":
    main()
