#!/usr/bin/env bash
# Issue 25's speed acceptance on the GPU machine: generated ImageNet-like JPEGs (tools/make-images.sh:
# an ImageFolder and the same as WebDataset shards), the loader alone on each (`vdnn data-bench`)
# decoding on the CPU and on the GPU (nvJPEG), then ResNet-50 at batch 128 trained from the JPEGs
# (the default `--decode auto`, which is the CPU on a host of 16 cores, and `--decode gpu`) and from
# synthetic data in the same run, in fp32 (TF32) and bf16, with each step's wait for data; then ResNet-18 trained 3 epochs on the JPEGs
# (--deterministic, cosine schedule) with the val split's accuracy at the end, and the same run
# resumed from its mid-epoch checkpoint (step 234 of 468), whose losses must be bitwise the
# straight run's (VDNN_IMAGES_SKIP_LEARN skips this part). tools/images_report.py prints the
# tables and the PASS/FAIL lines (loader >= 4000 img/s CPU-only, >= 8000 with nvJPEG; JPEG training
# with the default decode >= 95% of synthetic; resume bitwise).
# Usage: tools/images-gpu.sh OUT
# Environment: VDNN_IMAGES_TRAIN (200) training images per class of 100 classes, VDNN_IMAGES_ITERS
# (40) steps per training run, VDNN_IMAGES_LEARN_DECODE (auto) the ResNet-18 runs' --decode; VDNN_SKIP_BUILD, VDNN_BUILD_DIR (build-gpu), VDNN_PREFIX_PATH as for
# tools/speed-gpu.sh. About 4 minutes on the H200 after the build.
set -euo pipefail
# shellcheck source=tools/bench-common.sh
source "$(dirname "$0")/bench-common.sh"
bench_out "$0" "$@"
build=${VDNN_BUILD_DIR:-build-gpu}
per_class=${VDNN_IMAGES_TRAIN:-200}
iters=${VDNN_IMAGES_ITERS:-40}
bench_build
vdnn=$build/bin/vdnn

images=$out/images
rm -rf "$images" "$images-wds"
VDNN_CLI=$vdnn tools/make-images.sh --webdataset --out "$images" --classes 100 \
  --train "$per_class" --val 10 >"$out/make-images.log" 2>&1
shards=$(find "$images-wds/train" -name 'shard-*.tar' | wc -l)
last=$(printf '%06d' $((shards - 1)))

for decode in cpu gpu; do
  "$vdnn" data-bench --data "imagefolder:$images" --batch 256 --batches 20 --decode $decode \
    --json "$out/bench-imagefolder-$decode.json" >"$out/bench-imagefolder-$decode.log" 2>&1
  "$vdnn" data-bench --data "webdataset:$images-wds/train/shard-{000000..$last}.tar" --batch 256 \
    --batches 20 --decode $decode --json "$out/bench-webdataset-$decode.json" \
    >"$out/bench-webdataset-$decode.log" 2>&1
done

# ResNet-50 and ResNet-18 with 100 classes, the generated set's.
for net in resnet50 resnet18; do
  python3 - "configs/$net.json" "$out/$net-100.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["num_classes"] = 100
for layer in c["layers"]:
    if layer.get("out_features") == 1000:
        layer["out_features"] = 100
json.dump(c, open(sys.argv[2], "w"), indent=1)
PY
done
for precision in fp32 bf16; do
  for data in synthetic "imagefolder:$images auto" "imagefolder:$images gpu"; do
    read -r source decode <<<"$data"
    name=r50-$precision-${source%%:*}${decode:+-$decode}
    "$vdnn" train --device cuda --config "$out/resnet50-100.json" --batch 128 --iters "$iters" \
      --precision "$precision" --data "$source" --decode "${decode:-auto}" --out "$out/$name" \
      --cost-cache "$out/costs" >"$out/$name.log" 2>&1 || echo "vdnn $name: exit $?" >&2
  done
done
# Three epochs of 20000 images at batch 128: 468 steps, a checkpoint at step 234 (mid-epoch 2),
# from which a second run resumes to 468 on the same schedule.
learn=("$vdnn" train --device cuda --config "$out/resnet18-100.json" --batch 128 --deterministic
  --data "imagefolder:$images" --decode "${VDNN_IMAGES_LEARN_DECODE:-auto}" --lr 0.1
  --schedule cosine --iters 468 --eval-every 468)
rm -rf "$out/r18-straight" "$out/r18-resumed"
if [ -z "${VDNN_IMAGES_SKIP_LEARN:-}" ]; then
  "${learn[@]}" --checkpoint-every 234 --out "$out/r18-straight" >"$out/r18-straight.log" 2>&1 ||
    echo "vdnn r18-straight: exit $?" >&2
  "${learn[@]}" --resume "$out/r18-straight/checkpoints/iter-000000234.safetensors" \
    --out "$out/r18-resumed" >"$out/r18-resumed.log" 2>&1 || echo "vdnn r18-resumed: exit $?" >&2
fi
python3 tools/images_report.py "$out"
