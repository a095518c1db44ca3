#!/usr/bin/env python3
"""Prints tools/images-gpu.sh's results: the loader alone per source, and ResNet-50's img/s from
JPEGs against synthetic data per precision, with PASS/FAIL against issue 25's targets (for training,
on the decode a run gets by default, `--decode auto`; `--decode gpu` is reported beside it)."""
import os
import sys

from planner_report import read_json, read_json_lines

LOADER_TARGET = {"cpu": 4000.0, "gpu": 8000.0}
TRAIN_RATIO_TARGET = 0.95


def main(out):
    print("| loader | decode | img/s | on the GPU | read ms | decode ms | resize ms | "
          "GPU ms/batch | upload ms/batch |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for source in ("imagefolder", "webdataset"):
        for decode, target in LOADER_TARGET.items():
            b = read_json(os.path.join(out, f"bench-{source}-{decode}.json"))
            if b is None:
                print(f"| {source} | {decode} | missing | | | | | | |")
                continue
            verdict = "PASS" if b["images_per_s"] >= target else "FAIL"
            images = b["batch"] * b["batches"]
            print(f"| {source}, {b['workers']} workers | {decode} {b.get('gpu_decoder', '')} | "
                  f"{b['images_per_s']:.0f} ({verdict} >= {target:.0f}) | "
                  f"{b.get('gpu_images', 0) / images:.0%} | {b['read_ms_per_image']:.3f} | "
                  f"{b['decode_ms_per_image']:.3f} | {b['resize_ms_per_image']:.3f} | "
                  f"{b.get('gpu_ms_per_batch', 0.0):.2f} | {b['upload_ms_per_batch']:.2f} |")
    print()
    print("| ResNet-50 b128 | decode | synthetic img/s | JPEG img/s | ratio | "
          "JPEG data wait ms (median) |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for precision in ("fp32", "bf16"):
        synthetic = read_json(os.path.join(out, f"r50-{precision}-synthetic", "summary.json"))
        for decode in ("auto", "gpu"):
            jpeg = read_json(os.path.join(out, f"r50-{precision}-imagefolder-{decode}", "summary.json"))
            if synthetic is None or jpeg is None:
                print(f"| {precision} | {decode} | missing | | | |")
                continue
            ratio = jpeg["images_per_s"] / synthetic["images_per_s"]
            verdict = "PASS" if ratio >= TRAIN_RATIO_TARGET else "FAIL"
            judged = f"{verdict} >= {TRAIN_RATIO_TARGET}" if decode == "auto" else "not the default"
            print(f"| {precision} | {decode} | {synthetic['images_per_s']:.0f} | "
                  f"{jpeg['images_per_s']:.0f} | {ratio:.3f} ({judged}) | "
                  f"{jpeg.get('data_wait_ms_median', float('nan')):.2f} |")


def losses(path):
    """The training losses of a metrics.jsonl, as exact hex floats."""
    rows = read_json_lines(path)
    if rows is None:
        return None
    return [float(r["loss"]).hex() for r in rows if "loss" in r and "iter" in r]


def learning(out):
    straight = read_json(os.path.join(out, "r18-straight", "summary.json"))
    resumed = read_json(os.path.join(out, "r18-resumed", "summary.json"))
    print()
    if straight is None or "eval" not in straight:
        print("ResNet-18, 3 epochs on the JPEGs: missing")
        return
    e = straight["eval"]
    print(f"ResNet-18, 3 epochs (468 steps of 128) on the JPEGs: val top-1 {e['accuracy']:.3f} "
          f"over {e['images']} images (chance 0.010), final training loss {straight['losses'][-1]:.4f}")
    a = losses(os.path.join(out, "r18-straight", "metrics.jsonl"))
    b = losses(os.path.join(out, "r18-resumed", "metrics.jsonl"))
    same = a is not None and b is not None and len(a) == 468 and a[234:] == b
    print(f"resumed from the step-234 checkpoint (mid-epoch 2): {len(b or [])} losses, "
          f"{'PASS bitwise equal' if same else 'FAIL: they differ'} to the straight run's"
          + ("" if resumed is None else f"; its val top-1 {resumed['eval']['accuracy']:.3f}"))


if __name__ == "__main__":
    main(sys.argv[1])
    learning(sys.argv[1])
