#!/usr/bin/env python3
"""Collects a tools/planner-gpu.sh output folder (issue 10's planner benchmark) into one markdown
table, and OUT/planner.json with the same rows: per cell, vdnn's baseline and `auto` runs and the
PyTorch peers measured in the same run; img/s, peak, the ratio to the cell's reference (its vdnn
baseline for a ratio target, else the target img/s), the target and whether it is met, and for
vdnn's auto runs the planner's predicted step time against the measured one (within 15%?); then
a PASS/FAIL line per target. A run whose peak passed its budget misses its target.
A run that failed or is missing shows as failed; nothing here stops on it. report() and
report_main() serve tools/precision_report.py too, with its own cells.
Usage: tools/planner_report.py OUT [CELL ...]   (default: the cells OUT has files of)"""
import json
import os
import sys

# A target: ("base", r): img/s >= r x the cell's vdnn baseline; ("img/s", n): img/s >= n.
# Each cell: title, its vdnn runs (tools/planner-gpu.sh names them CELL-SUFFIX) as (SUFFIX, system,
# target), and the modes of tools/torch_reference.py it runs (OUT/torch-CELL.jsonl; other modes
# found there are shown too).
CELLS = {
    "resnet50": ("ResNet-50 b128", [
        ("baseline", "vdnn baseline", None),
        ("auto-half", "vdnn auto, budget 50% of baseline peak", ("base", 0.85)),
        ("auto-4GiB", "vdnn auto, budget 4 GiB", ("img/s", 1700)),
    ], ["eager", "checkpoint"]),
    "resnet1001": ("ResNet-1001 CIFAR b64", [
        ("auto-1GiB", "vdnn auto, budget 1 GiB", ("img/s", 300)),
    ], ["eager", "checkpoint", "checkpoint_save_on_cpu"]),
    "densenet264": ("DenseNet-264 b64", [
        ("baseline", "vdnn baseline", None),
        ("auto-5GiB", "vdnn auto, budget 5 GiB", ("img/s", 400)),
    ], ["eager", "checkpoint"]),
    "vgg16": ("VGG-16 b256", [
        ("baseline", "vdnn baseline", None),
        ("auto-12GiB", "vdnn auto, budget 12 GiB", ("base", 0.70)),
    ], ["eager", "checkpoint"]),
}
PEERS = {
    "eager": "PyTorch eager",
    "save_on_cpu": "PyTorch save_on_cpu",
    "checkpoint": "PyTorch per-block checkpointing",
    "checkpoint_save_on_cpu": "PyTorch checkpointing + save_on_cpu",
    "compile_budget": "torch.compile, activation_memory_budget 0.5",
}
TIME_MODEL_TOLERANCE = 0.15
EXIT_MEANINGS = {1: "runtime error", 2: "usage", 3: "does not fit the budget", 4: "diverged",
                 5: "interrupted", 124: "timed out", 137: "killed"}


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_json_lines(path):
    """The rows of a JSON-lines file (a run's metrics.jsonl), blank lines skipped; None where it
    cannot be read or a line is not JSON."""
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError):
        return None


def write_file(path, value):
    """Writes text, or any other value as JSON, to path, making its folder (the reports' self-tests
    make up run folders with it)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(value if isinstance(value, str) else json.dumps(value))


def self_test_status(checks):
    """A self-test's exit status from its (ok, what) checks: 0, or 1 after naming each that failed."""
    failed = [what for ok, what in checks if not ok]
    for what in failed:
        print(f"self-test FAILED: {what}", file=sys.stderr)
    return 1 if failed else 0


def exit_status(out, name):
    """What OUT/NAME.exit says: an exit code with its meaning, or the text planner-gpu.sh put there."""
    try:
        with open(os.path.join(out, name + ".exit")) as f:
            text = f.read().strip()
    except OSError:
        return None
    try:
        code = int(text)
    except ValueError:
        return text
    return "ok" if code == 0 else f"exit {code}" + (f" ({EXIT_MEANINGS[code]})" if code in EXIT_MEANINGS else "")


def vdnn_row(out, cell, suffix, system):
    name = f"{cell}-{suffix}"
    row = {"cell": cell, "system": system, "run": name, "framework": "vdnn"}
    status = exit_status(out, name)
    s = read_json(os.path.join(out, name, "summary.json"))
    if status not in (None, "ok"):
        row["error"] = status
    elif not isinstance(s, dict) or not isinstance(s.get("images_per_s"), (int, float)) or s["images_per_s"] <= 0:
        row["error"] = "missing" if status is None and s is None else "no summary.json with images_per_s"
    if suffix.startswith("auto"):
        row["time_model_pass"] = None  # until summary.json's predicted_step_ms says
    if "error" in row:
        return row
    budget = s.get("budget_bytes") or 0
    if budget and "GiB" not in system:
        row["system"] += f" ({budget / 2**30:.2f} GiB)"
    requested, policy = s.get("requested_policy"), s.get("policy")
    if policy and requested and policy != requested:
        row["system"] += f" -> {policy}"
    row.update({"images_per_s": s["images_per_s"], "peak_device_bytes": s.get("peak_device_bytes"),
                "budget_bytes": budget, "policy": policy, "iter_ms_median": s.get("iter_ms_median")})
    if budget and isinstance(row["peak_device_bytes"], int):
        row["within_budget"] = row["peak_device_bytes"] <= budget
    if suffix.startswith("auto"):
        predicted, measured = s.get("predicted_step_ms"), s.get("iter_ms_median")
        row["predicted_step_ms"] = predicted
        if isinstance(predicted, (int, float)) and isinstance(measured, (int, float)) and measured > 0:
            row["time_model_error"] = abs(predicted / measured - 1)
            row["time_model_pass"] = row["time_model_error"] <= TIME_MODEL_TOLERANCE
    return row


def peer_rows(out, cell, modes):
    """The PyTorch peers of a cell: none where OUT/torch-CELL.jsonl is absent (skipped); a failed
    row for an expected mode that printed nothing."""
    path = os.path.join(out, f"torch-{cell}.jsonl")
    if not os.path.exists(path):
        return []
    found = {}
    try:
        with open(path) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if isinstance(r, dict) and "mode" in r:
                    found[r["mode"]] = r
    except OSError:
        pass
    rows = []
    for mode in modes + [m for m in found if m not in modes]:
        system = PEERS.get(mode, f"PyTorch {mode}")
        if cell == "densenet264" and mode == "checkpoint":
            system = "PyTorch memory-efficient DenseNet"
        row = {"cell": cell, "system": system, "run": f"torch-{cell}:{mode}", "framework": "pytorch"}
        r = found.get(mode)
        if r is None:
            row["error"] = f"no result (see torch-{cell}.log)"
        elif "error" in r or not isinstance(r.get("images_per_s"), (int, float)):
            row["error"] = str(r.get("error", "no images_per_s"))
        else:
            row.update({"images_per_s": r["images_per_s"], "peak_device_bytes": r.get("peak_device_bytes"),
                        "iter_ms_median": r.get("ms_per_iter")})
        rows.append(row)
    return rows


def judge(rows, runs):
    """Adds each row's reference, ratio, target and pass. A row with a target is judged by it; one
    without (a baseline, a peer) is set against the cell's vdnn baseline, or where the cell has
    none, its first img/s target."""
    base = next((r for r, (suffix, _, _) in zip(rows, runs) if suffix == "baseline"), None)
    has_base = base is not None
    base_img_s = base.get("images_per_s") if has_base else None
    default = None if has_base else next((t for _, _, t in runs if t and t[0] == "img/s"), None)
    targets = [t for _, _, t in runs] + [None] * (len(rows) - len(runs))
    for row, target in zip(rows, targets):
        kind, value = target or (("base", None) if has_base else default or (None, None))
        if kind == "base":
            row["reference"], reference = "vdnn baseline", base_img_s
        elif kind == "img/s":
            row["reference"], reference = f"{value} img/s", value
        else:
            row["reference"], reference = None, None
        if target:
            row["target"] = f">= {value}x baseline" if kind == "base" else f">= {value} img/s"
        ok = "error" not in row and reference
        row["ratio"] = row["images_per_s"] / reference if ok else None
        if target:  # a run past its budget misses a budget's target however fast it ran
            row["pass"] = (bool(ok) and row["ratio"] >= (value if kind == "base" else 1.0)
                           and row.get("within_budget") is not False)


def fmt(value, spec, missing="-"):
    return missing if not isinstance(value, (int, float)) else format(value, spec)


def table_line(title, r):
    failed = "error" in r
    peak = fmt(r.get("peak_device_bytes") and r["peak_device_bytes"] / 2**30, ".2f")
    if r.get("within_budget") is False:
        peak += " (over budget)"
    ratio = "-" if r.get("ratio") is None else f"{r['ratio']:.2f}x {r['reference']}"
    result = {True: "pass", False: "FAIL", None: ""}[r.get("pass")]
    steps, model = "", ""
    if "time_model_pass" in r:
        steps = f"{fmt(r.get('predicted_step_ms'), '.1f')} / {fmt(r.get('iter_ms_median'), '.1f')}"
        model = ("n/a" if r["time_model_pass"] is None
                 else f"{r['time_model_error']:.2f} {'ok' if r['time_model_pass'] else 'FAIL'}")
    cells = [title, r["system"], "failed: " + r["error"] if failed else fmt(r["images_per_s"], ".1f"), peak,
             ratio, r.get("target", ""), result, steps, model]
    return "| " + " | ".join(cells) + " |"


def verdict(title, r):
    """'PASS|FAIL title, system: img/s, ratio against target, peak', for a row with a target."""
    if "error" in r:
        measured = "failed: " + r["error"]
    else:
        peak = r.get("peak_device_bytes")
        measured = f"{r['images_per_s']:.1f} img/s"
        if r.get("ratio") is not None:
            measured += f" = {r['ratio']:.2f}x {r['reference']}"
        if isinstance(peak, int):
            budget = r.get("budget_bytes")
            measured += f", peak {peak / 2**30:.2f} GiB" + (f" of {budget / 2**30:.2f}" if budget else "")
        if r.get("within_budget") is False:
            measured += " (over budget)"
    return f"{'PASS' if r['pass'] else 'FAIL'} {title}, {r['system']}: {measured} (target {r['target']})"


def report(out, cells, table, json_name):
    """Prints the table of `cells` (keys of `table`, shaped as CELLS) with a PASS/FAIL line per
    target, and writes OUT/json_name; returns what it writes."""
    collected = []
    verdicts = []
    print("| cell | system | img/s | peak GiB | ratio | target | result | step ms predicted / measured "
          f"| time model \\|p/m-1\\| <= {TIME_MODEL_TOLERANCE} |")
    print("| --- | --- | ---: | ---: | --- | --- | --- | --- | --- |")
    for cell in cells:
        if cell not in table:
            print(f"{os.path.basename(sys.argv[0])}: unknown cell {cell}", file=sys.stderr)
            continue
        title, runs, modes = table[cell]
        rows = [vdnn_row(out, cell, suffix, system) for suffix, system, _ in runs] + peer_rows(out, cell, modes)
        judge(rows, runs)
        for r in rows:
            print(table_line(title, r))
        verdicts += [verdict(title, r) for r in rows if "pass" in r]
        collected += rows
    targets = [r["pass"] for r in collected if "pass" in r]
    models = [r["time_model_pass"] for r in collected if "time_model_pass" in r]
    print(f"\ntargets met: {sum(targets)} of {len(targets)}; time model within "
          f"{TIME_MODEL_TOLERANCE:.0%}: {sum(m is True for m in models)} of {len(models)}")
    print("\n".join(verdicts))
    summary = {"rows": collected, "targets_met": sum(targets), "targets": len(targets),
               "time_model_ok": sum(m is True for m in models), "time_models": len(models),
               "all_pass": bool(targets) and all(targets) and all(m is True for m in models)}
    with open(os.path.join(out, json_name), "w") as f:
        json.dump(summary, f, indent=1)
    return summary


def report_main(doc, table, json_name):
    """A report's command line: OUT [CELL ...], the cells by default those OUT has files of."""
    if len(sys.argv) < 2:
        sys.exit(doc.split("Usage: ")[1])
    out = sys.argv[1]
    try:
        names = os.listdir(out)
    except OSError as e:
        sys.exit(f"{os.path.basename(sys.argv[0])}: {e}")
    cells = sys.argv[2:] or [c for c in table if any(n.startswith((c + "-", f"torch-{c}.")) for n in names)]
    report(out, cells, table, json_name)


def main():
    report_main(__doc__, CELLS, "planner.json")


if __name__ == "__main__":
    main()
