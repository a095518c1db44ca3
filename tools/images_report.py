#!/usr/bin/env python3
"""Prints tools/images-gpu.sh's results: the loader alone per source, and ResNet-50's img/s from
JPEGs against synthetic data per precision, with PASS/FAIL against issue 25's targets."""
import json
import os
import sys

CPU_LOADER_TARGET = 4000.0
TRAIN_RATIO_TARGET = 0.95


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def main(out):
    print("| loader (CPU decode) | img/s | read ms | decode ms | resize ms | upload ms/batch |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for source in ("imagefolder", "webdataset"):
        b = load(os.path.join(out, f"bench-{source}.json"))
        if b is None:
            print(f"| {source} | missing | | | | |")
            continue
        verdict = "PASS" if b["images_per_s"] >= CPU_LOADER_TARGET else "FAIL"
        print(f"| {source}, {b['workers']} workers | {b['images_per_s']:.0f} ({verdict} >= "
              f"{CPU_LOADER_TARGET:.0f}) | {b['read_ms_per_image']:.3f} | "
              f"{b['decode_ms_per_image']:.3f} | {b['resize_ms_per_image']:.3f} | "
              f"{b['upload_ms_per_batch']:.2f} |")
    print()
    print("| ResNet-50 b128 | synthetic img/s | JPEG img/s | ratio | JPEG data wait ms (median) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for precision in ("fp32", "bf16"):
        synthetic = load(os.path.join(out, f"r50-{precision}-synthetic", "summary.json"))
        jpeg = load(os.path.join(out, f"r50-{precision}-imagefolder", "summary.json"))
        if synthetic is None or jpeg is None:
            print(f"| {precision} | missing | | | |")
            continue
        ratio = jpeg["images_per_s"] / synthetic["images_per_s"]
        verdict = "PASS" if ratio >= TRAIN_RATIO_TARGET else "FAIL"
        print(f"| {precision} | {synthetic['images_per_s']:.0f} | {jpeg['images_per_s']:.0f} | "
              f"{ratio:.3f} ({verdict} >= {TRAIN_RATIO_TARGET}) | "
              f"{jpeg.get('data_wait_ms_median', float('nan')):.2f} |")


if __name__ == "__main__":
    main(sys.argv[1])
