#!/usr/bin/env python3
"""Collects a tools/precision-gpu.sh output folder (the bf16 issue's memory lines) into one markdown
table with a PASS/FAIL line per target, and OUT/precision.json with the same rows, as
tools/planner_report.py does for the planner's cells (its report(), with these cells): every run is
`vdnn train --precision bf16`; img/s, peak against the budget, the ratio to the cell's bf16 baseline
(or to the img/s target), and the planner's predicted against the measured step time.
`--self-test` checks this report on made-up folders (no GPU needed) and exits 0 when it is right.
Usage: tools/precision_report.py OUT [CELL ...]   (default: the cells OUT has files of)"""
import contextlib
import io
import json
import os
import sys

from planner_report import read_json, report, report_main, self_test_status, write_file as write

# As planner_report.CELLS: title, vdnn runs (OUT/CELL-SUFFIX) as (SUFFIX, system, target), PyTorch modes.
CELLS = {
    "resnet50": ("ResNet-50 b128 bf16", [
        ("baseline", "vdnn baseline", None),
        ("auto-2.5GiB", "vdnn auto, budget 2.5 GiB", ("base", 0.90)),
    ], []),
    "resnet1001": ("ResNet-1001 CIFAR b64 bf16", [
        ("auto-0.5GiB", "vdnn auto, budget 0.5 GiB", ("img/s", 500)),
    ], []),
    "densenet264": ("DenseNet-264 b64 bf16", [
        ("baseline", "vdnn baseline", None),
        ("auto-2.5GiB", "vdnn auto, budget 2.5 GiB", ("base", 0.90)),
    ], []),
}
JSON_NAME = "precision.json"


def self_test():
    """Made-up OUT folders through the report: a pass, a run over its budget, a run that did not fit."""
    import tempfile

    def vdnn(out, name, status, img_s=None, peak_gib=None, budget_gib=0, predicted=None):
        write(os.path.join(out, name + ".exit"), f"{status}\n")
        if img_s is not None:
            write(os.path.join(out, name, "summary.json"), {
                "images_per_s": img_s, "peak_device_bytes": int(peak_gib * 2**30),
                "budget_bytes": int(budget_gib * 2**30), "policy": "auto" if budget_gib else "baseline",
                "requested_policy": "auto" if budget_gib else "baseline",
                "iter_ms_median": 128000 / img_s, "predicted_step_ms": predicted})

    with tempfile.TemporaryDirectory() as out:
        vdnn(out, "resnet50-baseline", 0, 5000, 5.2)
        vdnn(out, "resnet50-auto-2.5GiB", 0, 4600, 2.4, 2.5, predicted=27.0)      # 0.92x: passes
        vdnn(out, "resnet1001-auto-0.5GiB", 0, 520, 0.6, 0.5, predicted=500.0)   # over its budget
        vdnn(out, "densenet264-baseline", 0, 1400, 9.0)
        vdnn(out, "densenet264-auto-2.5GiB", 3)                                  # does not fit
        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            summary = report(out, list(CELLS), CELLS, JSON_NAME)
        text = text.getvalue()
        print(text)
        lines = text.splitlines()
        checks = [
            ("PASS ResNet-50 b128 bf16, vdnn auto, budget 2.5 GiB: 4600.0 img/s = 0.92x vdnn baseline, "
             "peak 2.40 GiB of 2.50 (target >= 0.9x baseline)" in lines, "ResNet-50 under 2.5 GiB passes"),
            ("FAIL ResNet-1001 CIFAR b64 bf16, vdnn auto, budget 0.5 GiB: 520.0 img/s = 1.04x 500 img/s, "
             "peak 0.60 GiB of 0.50 (over budget) (target >= 500 img/s)" in lines, "a run over its budget fails"),
            ("0.60 (over budget)" in text, "the table marks the peak over budget"),
            ("FAIL DenseNet-264 b64 bf16, vdnn auto, budget 2.5 GiB: failed: exit 3 (does not fit the budget) "
             "(target >= 0.9x baseline)" in lines, "a run that did not fit fails"),
            (summary["targets_met"] == 1 and summary["targets"] == 3 and not summary["all_pass"], "totals"),
            ("targets met: 1 of 3; time model within 15%: 1 of 3" in lines, "totals printed"),
            (read_json(os.path.join(out, JSON_NAME)) == json.loads(json.dumps(summary)), "precision.json written"),
            (not any(line.startswith(("PASS", "FAIL")) and "baseline:" in line for line in lines),
             "no verdict for a baseline"),
        ]
    return self_test_status(checks)


def main():
    if sys.argv[1:2] == ["--self-test"]:
        sys.exit(self_test())
    report_main(__doc__, CELLS, JSON_NAME)


if __name__ == "__main__":
    main()
