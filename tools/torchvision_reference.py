#!/usr/bin/env python3
"""torchvision reference fixtures for issue 25's ImageNet augmentation (the tests in
tests/models/data/image/ read them): run where torch, torchvision, PIL and numpy are installed.

  python3 tools/torchvision_reference.py tests/models/data/image/fixtures

writes into that folder:
  crop_quantiles.json  per image size, 100,000 boxes of RandomResizedCrop.get_params (default
                       scale and ratio): the quantiles of the area fraction h*w/(H*W) and of
                       log(w/h) (numpy's default, linear), and the fraction of boxes equal to the
                       centre-crop fallback box.
  resample_cases.json  the resize cases: the test images (a formula that ResampleTest.cpp
                       implements too, with an FNV-1a 64 hash of their bytes) and per case the
                       transform, its parameters and its output file.
  <image>-<case>.u8    each case's output, 64 x 64 RGB bytes (HWC): (a) the eval transform
                       Resize(int(64 * 256 / 224)) + CenterCrop(64), (b) PIL's
                       img.resize((64, 64), BILINEAR, box=...), fractional and integer boxes,
                       (c) torchvision.transforms.functional.resized_crop(img, t, l, h, w, [64, 64]).
It takes a few seconds (the crop draws run one process per image size) and prints what it wrote."""
import concurrent.futures
import json
import math
import os
import sys

import numpy as np
import PIL
import torch
import torchvision
import torchvision.transforms as T
import torchvision.transforms.functional as F
from PIL import Image

CROP_SIZES = [(500, 375), (375, 500), (224, 224), (1000, 250), (250, 1000), (64, 48)]
CROP_DRAWS = 100_000
QUANTILES = [0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99]
SCALE = (0.08, 1.0)
RATIO = (3.0 / 4.0, 4.0 / 3.0)

OUT_SIZE = 64
EVAL_RESIZE = int(OUT_SIZE * 256 / 224)
MASK32 = 0xFFFFFFFF
MASK64 = 0xFFFFFFFFFFFFFFFF
# (width, height, seed, PIL boxes (left, top, right, bottom), resized_crop boxes (top, left, h, w))
IMAGES = [
    (123, 97, 1, [(10.25, 7.5, 110.75, 90.125), (20, 10, 100, 80), (30.5, 20.25, 61.75, 45.5)],
     [(5, 9, 80, 100), (40, 50, 30, 40)]),
    (300, 200, 2, [(0.5, 0.25, 299.5, 199.75), (37, 11, 250, 180), (100.375, 60.625, 140.125, 90.875)],
     [(13, 27, 150, 201), (120, 250, 50, 50)]),
    (97, 301, 3, [(3.75, 40.5, 90.25, 290.0), (0, 0, 97, 301), (60.5, 250.25, 96.5, 300.75)],
     [(100, 0, 201, 97), (7, 11, 60, 33)]),
]


def hash32(x):
    """lowbias32: a 32-bit integer hash (ResampleTest.cpp has the same)."""
    x &= MASK32
    x ^= x >> 16
    x = (x * 0x7FEB352D) & MASK32
    x ^= x >> 15
    x = (x * 0x846CA68B) & MASK32
    return x ^ (x >> 16)


def test_pixel(width, height, seed, x, y, c):
    """Three vertical bands: smooth gradients, an 8-pixel checkerboard, hashed noise."""
    band = 3 * x // width
    if band == 0:
        return [x * 255 // (width - 1), y * 255 // (height - 1),
                (x + y) * 255 // (width + height - 2)][c]
    if band == 1:
        return 230 - 20 * c if (x // 4 + y // 4) % 2 else 25 + 20 * c
    return hash32(seed * 0x9E3779B1 + (y * width + x) * 3 + c) & 0xFF


def test_image(width, height, seed):
    return bytes(test_pixel(width, height, seed, x, y, c)
                 for y in range(height) for x in range(width) for c in range(3))


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & MASK64
    return h


def fallback_box(width, height):
    """RandomResizedCrop.get_params's centre crop after ten misses, as (top, left, h, w)."""
    in_ratio = width / height
    if in_ratio < min(RATIO):
        w, h = width, int(round(width / min(RATIO)))
    elif in_ratio > max(RATIO):
        w, h = int(round(height * max(RATIO))), height
    else:
        w, h = width, height
    return ((height - h) // 2, (width - w) // 2, h, w)


def crop_statistics(task):
    index, (width, height) = task
    torch.manual_seed(1000 + index)
    torch.set_num_threads(1)
    img = torch.empty((1, height, width), dtype=torch.uint8)
    get_params = T.RandomResizedCrop.get_params
    boxes = np.array([get_params(img, list(SCALE), list(RATIO)) for _ in range(CROP_DRAWS)],
                     dtype=np.int64)
    top, left, h, w = boxes.T
    assert (top >= 0).all() and (left >= 0).all() and (top + h <= height).all() \
        and (left + w <= width).all()
    area = h * w / (height * width)
    log_aspect = np.log(w / h)
    fallback = (boxes == np.array(fallback_box(width, height))).all(axis=1)
    return {
        "width": width, "height": height,
        "area_fraction": np.quantile(area, QUANTILES).tolist(),
        "log_aspect": np.quantile(log_aspect, QUANTILES).tolist(),
        "fallback_box": list(fallback_box(width, height)),
        "fallback_fraction": float(fallback.mean()),
    }


def write_crop_quantiles(out):
    with concurrent.futures.ProcessPoolExecutor(len(CROP_SIZES)) as pool:
        sizes = list(pool.map(crop_statistics, enumerate(CROP_SIZES)))
    path = os.path.join(out, "crop_quantiles.json")
    with open(path, "w") as f:
        json.dump({"draws": CROP_DRAWS, "scale": list(SCALE), "ratio": list(RATIO),
                   "quantiles": QUANTILES, "quantile_method": "numpy linear",
                   "torch": torch.__version__, "torchvision": torchvision.__version__,
                   "sizes": sizes}, f, indent=1)
    print(f"wrote {path}: {len(sizes)} sizes x {CROP_DRAWS} boxes")
    for s in sizes:
        print(f"  {s['width']}x{s['height']}: median area {s['area_fraction'][4]:.4f}, "
              f"median log aspect {s['log_aspect'][4]:+.4f}, fallback {s['fallback_fraction']:.4f}")


def resample_cases(img, pil_boxes, crops):
    """(case name, parameters, output image) for one test image."""
    eval_transform = T.Compose([T.Resize(EVAL_RESIZE), T.CenterCrop(OUT_SIZE)])
    yield "eval", {"kind": "eval", "size": OUT_SIZE}, eval_transform(img)
    for i, box in enumerate(pil_boxes):
        yield (f"box{i}", {"kind": "pil_box", "box": list(box)},
               img.resize((OUT_SIZE, OUT_SIZE), Image.BILINEAR, box=box))
    for i, (top, left, h, w) in enumerate(crops):
        yield (f"crop{i}", {"kind": "resized_crop", "top": top, "left": left, "height": h,
                            "width": w},
               F.resized_crop(img, top, left, h, w, [OUT_SIZE, OUT_SIZE]))


def write_resample_cases(out):
    images, cases, total = [], [], 0
    for width, height, seed, pil_boxes, crops in IMAGES:
        data = test_image(width, height, seed)
        name = f"img{width}x{height}"
        images.append({"name": name, "width": width, "height": height, "seed": seed,
                       "fnv1a64": f"{fnv1a64(data):016x}"})
        img = Image.frombytes("RGB", (width, height), data)
        for case, params, result in resample_cases(img, pil_boxes, crops):
            assert result.mode == "RGB" and result.size == (OUT_SIZE, OUT_SIZE), result
            file = f"{name}-{case}.u8"
            raw = result.tobytes()
            with open(os.path.join(out, file), "wb") as f:
                f.write(raw)
            total += len(raw)
            cases.append({"image": name, "case": case, "file": file, "out_width": OUT_SIZE,
                          "out_height": OUT_SIZE, **params})
    path = os.path.join(out, "resample_cases.json")
    with open(path, "w") as f:
        json.dump({"out_size": OUT_SIZE, "eval_resize": EVAL_RESIZE, "pil": PIL.__version__,
                   "torchvision": torchvision.__version__, "images": images, "cases": cases},
                  f, indent=1)
    print(f"wrote {path} and {len(cases)} .u8 outputs ({total} bytes) for {len(images)} images")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    write_resample_cases(out)
    write_crop_quantiles(out)


if __name__ == "__main__":
    main()
