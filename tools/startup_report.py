#!/usr/bin/env python3
"""Collects a tools/startup-gpu.sh output folder (issue 23's start-up acceptance) into a markdown
table, and OUT/startup.json with the same rows: per cell, vdnn's time from process start to the end
of step 1 (summary.json's first_step_end_seconds) with a cold setup cache and warm, against issue
23's targets, the setup_seconds parts of both runs, each run's wall time from launch to exit (a
cross-check: it also holds the teardown), and PyTorch eager's and torch.compile's time to the end of
their first step on the same network and batch in the same run (tools/torch_reference.py
--first-step; cold: a fresh process with fresh compile caches, warm: again with them). A run that
failed, timed out or is missing shows as such and fails its cell; nothing stops on it.
`--self-test` checks this report on made-up folders (no GPU needed) and exits 0 when it is right.
Usage: tools/startup_report.py OUT [CELL ...]   (default: resnet50 resnet50-auto vgg16 densenet264-auto)"""
import json
import os
import sys

from planner_report import exit_status, read_json, self_test_status, write_file as write
from speed_report import mode_rows

# Each cell: title, the PyTorch network it is compared with (OUT/torch-NET-{cold,warm}.jsonl) and
# issue 23's targets in seconds to the end of step 1 (None: no target).
CELLS = {
    "resnet50": ("ResNet-50 b128 baseline", "resnet50", {"cold": 8.0, "warm": 3.0}),
    "resnet50-auto": ("ResNet-50 b128 auto 5.25GiB", "resnet50", {"cold": 15.0, "warm": 4.0}),
    "vgg16": ("VGG-16 b256 baseline", "vgg16", {"cold": 10.0, "warm": None}),
    "densenet264-auto": ("DenseNet-264 b64 auto 5GiB", "densenet264", {"cold": 20.0, "warm": 5.0}),
}
RUNS = ("cold", "warm")
PEERS = ("eager", "compile")


def read_wall(out, name):
    try:
        with open(os.path.join(out, name + ".wall")) as f:
            return float(f.read().strip())
    except (OSError, ValueError):
        return None


def vdnn_run(out, cell, run):
    """OUT/CELL-RUN: {"first_step_end_seconds", "setup_seconds", "wall_seconds"} or {"error", ...}."""
    name = f"{cell}-{run}"
    row = {"run": name, "wall_seconds": read_wall(out, name)}
    status = exit_status(out, name)
    summary = read_json(os.path.join(out, name, "summary.json"))
    seconds = summary.get("first_step_end_seconds") if isinstance(summary, dict) else None
    if isinstance(summary, dict) and isinstance(summary.get("setup_seconds"), dict):
        row["setup_seconds"] = summary["setup_seconds"]
    if status not in (None, "ok"):
        row["error"] = status
    elif summary is None:
        row["error"] = "missing" if status is None else "no summary.json"
    elif not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or seconds < 0:
        row["error"] = "no first_step_end_seconds in summary.json"
    else:
        row["first_step_end_seconds"] = float(seconds)
    return row


def torch_rows(out, net, run):
    """{mode: row} of OUT/torch-NET-RUN.jsonl (rows of tools/torch_reference.py --first-step)."""
    return mode_rows(os.path.join(out, f"torch-{net}-{run}.jsonl"))


def cell_row(out, cell):
    title, net, targets = CELLS[cell]
    row = {"cell": cell, "title": title, "targets": targets, "peer_network": net}
    met = []
    for run in RUNS:
        r = vdnn_run(out, cell, run)
        row[run] = r
        target = targets[run]
        if target is not None:
            seconds = r.get("first_step_end_seconds")
            r["target_seconds"] = target
            r["met"] = seconds is not None and seconds <= target
            met.append(r["met"])
    row["met"] = all(met)
    row["targets_met"] = sum(met)
    row["targets_total"] = len(met)
    row["pytorch"] = {run: torch_rows(out, net, run) for run in RUNS}
    return row


def seconds_shown(r):
    """'7.42 (wall 7.61)', or why there is none."""
    if "error" in r:
        text = r["error"]
    else:
        text = f"{r['first_step_end_seconds']:.2f}"
        if r.get("met") is False:
            text = f"**{text}**"
    if r.get("wall_seconds") is not None:
        text += f" (wall {r['wall_seconds']:.2f})"
    return text


def parts_shown(r):
    """'total 6.10: context 0.40, convolutions 3.20, ...' in summary.json's order, or '-'."""
    parts = r.get("setup_seconds")
    if not isinstance(parts, dict) or not parts:
        return "-"
    numbers = {k: v for k, v in parts.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    listed = ", ".join(f"{k} {v:.2f}" for k, v in numbers.items() if k != "total")
    if "total" in numbers:
        return f"total {numbers['total']:.2f}" + (f": {listed}" if listed else "")
    return listed or "-"


def peer_shown(row, mode):
    """'cold / warm' seconds to the end of PyTorch's first step in `mode`, or why there are none."""
    shown = []
    for run in RUNS:
        r = row["pytorch"][run].get(mode)
        if r is None:
            shown.append("missing")
        elif "error" in r:
            shown.append(str(r["error"]))
        elif isinstance(r.get("first_step_end_seconds"), (int, float)):
            shown.append(f"{r['first_step_end_seconds']:.2f}")
        else:
            shown.append("no first_step_end_seconds")
    if all(s == "missing" for s in shown):
        return "-"
    return " / ".join(shown)


def table(rows):
    lines = [
        "| cell | cold s (wall) | warm s (wall) | target cold / warm s | result | cold setup_seconds | "
        "warm setup_seconds | PyTorch eager cold / warm s | torch.compile cold / warm s |",
        "| --- | ---: | ---: | ---: | --- | --- | --- | ---: | ---: |",
    ]
    for r in rows:
        targets = " / ".join("-" if t is None else f"{t:g}" for t in (r["targets"][run] for run in RUNS))
        missed = [run for run in RUNS if r[run].get("met") is False]
        result = "pass" if r["met"] else "FAIL: " + ", ".join(missed)
        lines.append(f"| {r['title']} | {seconds_shown(r['cold'])} | {seconds_shown(r['warm'])} | {targets} | "
                     f"{result} | {parts_shown(r['cold'])} | {parts_shown(r['warm'])} | "
                     f"{peer_shown(r, 'eager')} | {peer_shown(r, 'compile')} |")
    met = sum(r["targets_met"] for r in rows)
    total = sum(r["targets_total"] for r in rows)
    cells = sum(r["met"] for r in rows)
    lines.append("")
    lines.append(f"targets met: {met} of {total}; cells passed: {cells} of {len(rows)}")
    layouts = {row.get("channels_last") for r in rows for run in RUNS for row in r["pytorch"][run].values()}
    layouts.discard(None)
    layout = " in channels_last" if layouts == {True} else " in NCHW" if layouts == {False} else ""
    lines.append("")
    lines.append("Seconds from the process's start to the end of step 1 (vdnn: summary.json's "
                 "first_step_end_seconds; cold: a fresh empty --cost-cache, warm: the same again); wall: "
                 "launch to exit, measured by tools/startup-gpu.sh. PyTorch" + layout + ": tools/torch_reference.py "
                 "--first-step, a fresh process per mode (cold: fresh Inductor and Triton caches, warm: "
                 "the same again).")
    return "\n".join(lines)


def report(out, cells):
    rows = [cell_row(out, c) for c in cells if c in CELLS]
    text = table(rows)
    with open(os.path.join(out, "startup.json"), "w") as f:
        json.dump(rows, f, indent=2)
    return rows, text


def self_test():
    """Made-up OUT folders through the report: passes, misses, failures, missing files."""
    import tempfile

    def vdnn(out, name, status, seconds=None, setup=None, wall=None, summary=True):
        write(os.path.join(out, name + ".exit"), f"{status}\n")
        if wall is not None:
            write(os.path.join(out, name + ".wall"), f"{wall:.3f}\n")
        if summary:
            s = {"images_per_s": 100.0}
            if seconds is not None:
                s["first_step_end_seconds"] = seconds
            if setup is not None:
                s["setup_seconds"] = setup
            write(os.path.join(out, name, "summary.json"), json.dumps(s))

    with tempfile.TemporaryDirectory() as out:
        parts = {"total": 5.5, "context": 0.4, "convolutions": 3.0, "layout": 1.2, "data": 0.9}
        vdnn(out, "resnet50-cold", 0, 7.4, parts, 7.7)
        vdnn(out, "resnet50-warm", 0, 2.5, {"total": 0.8, "context": 0.4, "data": 0.4}, 2.8)
        vdnn(out, "resnet50-auto-cold", 0, 16.0, {"total": 14.0, "planning": 9.0}, 16.3)   # misses cold
        vdnn(out, "resnet50-auto-warm", 0, 3.9, None, 4.1)                                  # no parts
        vdnn(out, "vgg16-cold", 1, wall=3.0, summary=False)                                 # crashed
        vdnn(out, "vgg16-warm", 0, 4.0, parts, 4.2)
        vdnn(out, "densenet264-auto-cold", 0, None, parts, 19.0)           # no first_step_end_seconds
        # densenet264-auto-warm: never ran (missing)
        rn = [{"mode": "eager", "first_step_end_seconds": 6.25, "wall_seconds": 7.0},
              {"mode": "compile", "first_step_end_seconds": 48.5, "wall_seconds": 50.0}]
        write(os.path.join(out, "torch-resnet50-cold.jsonl"), "\n".join(json.dumps(r) for r in rn) + "\nnot json\n")
        rn[1] = {"mode": "compile", "first_step_end_seconds": 21.0}
        write(os.path.join(out, "torch-resnet50-warm.jsonl"), "\n".join(json.dumps(r) for r in rn) + "\n")
        write(os.path.join(out, "torch-vgg16-cold.jsonl"),
              json.dumps({"mode": "compile", "error": "TimeoutError: compile did not finish within 300 s"}) + "\n")
        rows, text = report(out, list(CELLS))
        print(text)
        by = {r["cell"]: r for r in rows}
        lines = {r["cell"]: line for r, line in zip(rows, text.splitlines()[2:])}
        checks = [
            (by["resnet50"]["met"] and by["resnet50"]["targets_met"] == 2, "resnet50 passes both"),
            ("total 5.50: context 0.40, convolutions 3.00, layout 1.20, data 0.90" in lines["resnet50"],
             "setup parts in summary.json's order"),
            ("7.40 (wall 7.70)" in lines["resnet50"], "cold seconds with wall"),
            ("| 6.25 / 6.25 | 48.50 / 21.00 |" in lines["resnet50"], "PyTorch cold / warm"),
            (not by["resnet50-auto"]["met"] and by["resnet50-auto"]["targets_met"] == 1, "auto misses cold"),
            ("| FAIL: cold |" in lines["resnet50-auto"], "the result names the missed run"),
            ("**16.00**" in lines["resnet50-auto"], "a missed target is bold"),
            (not by["vgg16"]["met"] and "exit 1 (runtime error)" in lines["vgg16"], "a crashed run fails"),
            (by["vgg16"]["targets_total"] == 1 and "| 10 / - |" in lines["vgg16"], "VGG-16 has no warm target"),
            ("missing / missing" not in lines["vgg16"] and "| - |" in lines["vgg16"], "no eager rows: '-'"),
            ("TimeoutError: compile did not finish within 300 s / missing" in lines["vgg16"], "compile error"),
            ("no first_step_end_seconds" in lines["densenet264-auto"], "summary without the field"),
            (by["densenet264-auto"]["warm"]["error"] == "missing", "a run that never ran is missing"),
            ("targets met: 3 of 7; cells passed: 1 of 4" in text, "totals"),
            (len(read_json(os.path.join(out, "startup.json"))) == 4, "startup.json written"),
        ]
    return self_test_status(checks)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.split("Usage: ")[1])
    if sys.argv[1] == "--self-test":
        sys.exit(self_test())
    out = sys.argv[1]
    unknown = [c for c in sys.argv[2:] if c not in CELLS]
    if unknown:
        sys.exit(f"startup_report.py: unknown cells {unknown} ({' '.join(CELLS)})")
    _, text = report(out, sys.argv[2:] or list(CELLS))
    print(text)


if __name__ == "__main__":
    main()
