#!/usr/bin/env bash
# Issue 25's test data: a generated ImageFolder of learnable JPEG/PNG images (`vdnn make-images`)
# and, with --webdataset, the same images as WebDataset shards OUT-wds/{train,val}/shard-NNNNNN.tar
# (<key>.jpg or <key>.png, and <key>.cls holding the label: the class's index in sorted folder
# order), samples shuffled across shards from --seed, packed with python3's tarfile module.
# Usage: tools/make-images.sh [--webdataset] [--shard-size N] --out DIR --classes K --train N
#          [--val M] [--seed S] [other `vdnn make-images` options, e.g. --min-side, --force]
# e.g.   tools/make-images.sh --webdataset --out imgs --classes 100 --train 180 --val 20
# The binary: $VDNN_CLI, else the first of build/bin/vdnn, build-gpu/bin/vdnn, build-cpu/bin/vdnn.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

webdataset=0 shard_size=1000 out="" seed=0 force=0 args=()
while [ $# -gt 0 ]; do
  case $1 in
    --webdataset) webdataset=1 ;;
    --shard-size) shard_size=$2 && shift ;;
    --out) out=$2 && args+=("$1" "$2") && shift ;;
    --out=*) out=${1#--out=} && args+=("$1") ;;
    --seed) seed=$2 && args+=("$1" "$2") && shift ;;
    --seed=*) seed=${1#--seed=} && args+=("$1") ;;
    --force) force=1 && args+=("$1") ;;
    *) args+=("$1") ;;
  esac
  shift
done

vdnn=${VDNN_CLI:-}
for candidate in build/bin/vdnn build-gpu/bin/vdnn build-cpu/bin/vdnn; do
  if [ -z "$vdnn" ] && [ -x "$root/$candidate" ]; then vdnn=$root/$candidate; fi
done
if [ -z "$vdnn" ]; then
  echo "make-images: no vdnn binary; build one (cmake --preset release && cmake --build --preset release --target vdnn) or set VDNN_CLI" >&2
  exit 2
fi
if [ "$webdataset" = 1 ] && [ -z "$out" ]; then
  echo "make-images: --webdataset needs --out DIR" >&2
  exit 2
fi
if [ "$webdataset" = 1 ] && [ -n "$(ls -A "$out-wds" 2>/dev/null)" ] && [ "$force" = 0 ]; then
  echo "make-images: $out-wds exists and is not empty; pass --force to replace its shards" >&2
  exit 2
fi

"$vdnn" make-images "${args[@]}"
[ "$webdataset" = 1 ] || exit 0

python3 - "$out" "$out-wds" "$shard_size" "$seed" <<'PY'
import io, os, random, shutil, sys, tarfile

src, dst, shard_size, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
if shard_size < 1:
    sys.exit("make-images: --shard-size must be at least 1")


def add(tar, name, data):
    info = tarfile.TarInfo(name)  # fixed metadata: the same images give the same bytes
    info.size, info.mtime, info.mode = len(data), 0, 0o644
    tar.addfile(info, io.BytesIO(data))


for split in ("train", "val"):
    folder = os.path.join(src, split)
    if not os.path.isdir(folder):
        continue
    classes = sorted(c for c in os.listdir(folder) if os.path.isdir(os.path.join(folder, c)))
    samples = [(os.path.join(folder, c, f), label)
               for label, c in enumerate(classes)
               for f in sorted(os.listdir(os.path.join(folder, c)))]
    random.Random(seed).shuffle(samples)  # every shard holds every class, as WebDataset sets do
    out = os.path.join(dst, split)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    shards = (len(samples) + shard_size - 1) // shard_size
    for s in range(shards):
        path = os.path.join(out, "shard-%06d.tar" % s)
        with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
            for image, label in samples[s * shard_size:(s + 1) * shard_size]:
                name = os.path.basename(image)
                with open(image, "rb") as f:
                    add(tar, name, f.read())
                add(tar, os.path.splitext(name)[0] + ".cls", str(label).encode())
    print(f"make-images: {split}: {len(samples)} samples in {shards} shards under {out}")
PY
