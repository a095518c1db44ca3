#!/usr/bin/env python3
"""torch_checkpoint_test.py VDNN SOURCE_DIR: a vdnn checkpoint is a PyTorch state_dict.
Trains configs/resnet20-cifar.json two steps on the CPU with `vdnn train --checkpoint-every 2`,
reads the checkpoint with the `safetensors` package (or, where it is not installed, with the
reader below, written from the published format) and checks it against the PyTorch ResNet-20
(torchvision's BasicBlock, option-B projection shortcuts): every state_dict key is in the file
with its shape and dtype (float32; num_batches_tracked int64), every other tensor is an
optimizer.<parameter>.momentum_buffer of that parameter's shape (one per parameter),
load_state_dict(strict=True) takes the rest, the loaded model equals the file
(num_batches_tracked: the steps trained), and its forward pass in eval mode is finite. With
torchvision, configs/resnet50.json against torchvision.models.resnet50() the same way (one step,
batch 2), and alexnet, vgg16, googlenet and densenet121 against theirs after tools/torch_names.py
renamed the tensors (the mapping the README documents).
Exit status 0: passed; 1: a check failed; 2: usage; 77: skipped, torch is not importable."""
import collections
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

SKIP = 77
MAX_LINES = 40  # mismatches printed per network
TRAIN_TIMEOUT_S = 300

# safetensors dtype -> bytes per element.
DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
               "U8": 1, "BOOL": 1}
MOMENTUM = re.compile(r"^optimizer\.(.+)\.momentum_buffer$")

RawTensor = collections.namedtuple("RawTensor", "dtype shape data")


class Failure(Exception):
    pass


def read_safetensors(path):
    """The format as published (huggingface/safetensors): an 8-byte little-endian header length
    N, N bytes of JSON mapping each name to {dtype, shape, data_offsets: [begin, end]} (offsets
    into the data that follows) and an optional "__metadata__" object of strings, then the data,
    raw little-endian. Returns ({name: RawTensor}, metadata); raises Failure on any violation."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise Failure(f"{path}: {len(blob)} bytes, shorter than the header length")
    (length,) = struct.unpack("<Q", blob[:8])
    if length > len(blob) - 8:
        raise Failure(f"{path}: header length {length} beyond the file's {len(blob)} bytes")
    try:
        header = json.loads(blob[8:8 + length].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise Failure(f"{path}: the header is not JSON: {e}") from e
    if not isinstance(header, dict):
        raise Failure(f"{path}: the header is not a JSON object")
    metadata = header.pop("__metadata__", {})
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise Failure(f"{path}: __metadata__ is not an object of strings")
    data = blob[8 + length:]
    tensors = {}
    spans = []
    for name, entry in header.items():
        if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
            raise Failure(f"{path}: {name}: expected dtype, shape and data_offsets, got {entry}")
        dtype, shape, (begin, end) = entry["dtype"], entry["shape"], entry["data_offsets"]
        if dtype not in DTYPE_BYTES:
            raise Failure(f"{path}: {name}: unknown dtype {dtype}")
        if not all(isinstance(d, int) and d >= 0 for d in shape):
            raise Failure(f"{path}: {name}: bad shape {shape}")
        numel = 1
        for d in shape:
            numel *= d
        if not 0 <= begin <= end <= len(data) or end - begin != numel * DTYPE_BYTES[dtype]:
            raise Failure(f"{path}: {name}: data_offsets [{begin}, {end}] do not hold {dtype} "
                          f"{shape} in {len(data)} data bytes")
        tensors[name] = RawTensor(dtype, tuple(shape), data[begin:end])
        spans.append((begin, end, name))
    # The tensors tile the data exactly: no gap, no overlap, nothing after.
    position = 0
    for begin, end, name in sorted(spans):
        if begin != position:
            raise Failure(f"{path}: {name} starts at {begin}, expected {position}")
        position = end
    if position != len(data):
        raise Failure(f"{path}: {len(data) - position} data bytes after the last tensor")
    return tensors, metadata


def spec_of_raw(tensors):
    return {name: (t.dtype, t.shape) for name, t in tensors.items()}


def differences(expected, found, parameters):
    """Mismatches between a model's state_dict (`expected`: name -> (dtype, shape)) and a
    checkpoint (`found`, the same), whose optimizer.* tensors must be exactly one F32
    momentum_buffer per trainable parameter (`parameters`: name -> shape); one line each."""
    lines = []
    for name, (dtype, shape) in expected.items():
        want = "I64" if name.endswith(".num_batches_tracked") else "F32"
        if dtype != want:
            lines.append(f"the model's {name} is {dtype}, expected {want} (test error)")
        if name not in found:
            lines.append(f"missing {name} ({dtype} {list(shape)})")
        elif found[name] != (dtype, shape):
            lines.append(f"mismatched {name}: the model has {dtype} {list(shape)}, the file "
                         f"{found[name][0]} {list(found[name][1])}")
    buffered = set()
    for name, (dtype, shape) in found.items():
        if not name.startswith("optimizer."):
            if name not in expected:
                lines.append(f"unexpected {name} ({dtype} {list(shape)}): not in the state_dict")
            continue
        match = MOMENTUM.match(name)
        if not match:
            lines.append(f"unexpected {name}: optimizer.* must be <parameter>.momentum_buffer")
        elif match.group(1) not in parameters:
            lines.append(f"{name} names no parameter of the model")
        elif (dtype, shape) != ("F32", parameters[match.group(1)]):
            lines.append(f"mismatched {name}: {dtype} {list(shape)}, the parameter is F32 "
                         f"{list(parameters[match.group(1)])}")
        else:
            buffered.add(match.group(1))
    lines += [f"missing optimizer.{p}.momentum_buffer" for p in parameters if p not in buffered]
    return lines


def train(vdnn, config, out, iters, batch):
    """Runs `vdnn train` on the CPU with a checkpoint after the last step; returns its path."""
    command = [vdnn, "train", "--config", os.path.abspath(config), "--device", "cpu",
               "--iters", str(iters), "--batch", str(batch), "--checkpoint-every", str(iters),
               "--out", out]
    print("running:", " ".join(command), flush=True)
    run = subprocess.run(command, cwd=out, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, timeout=TRAIN_TIMEOUT_S, check=False)
    if run.returncode != 0:
        raise Failure(f"vdnn train exited with {run.returncode}:\n{run.stdout[-3000:]}")
    directory = os.path.join(out, "checkpoints")
    found = sorted(f for f in os.listdir(directory) if re.fullmatch(r"iter-0*\d+\.safetensors", f))
    last = [f for f in found if int(f[len("iter-"):-len(".safetensors")]) == iters]
    if len(last) != 1:
        raise Failure(f"no checkpoint of iteration {iters} in {directory}: {found}")
    return os.path.join(directory, last[0])


def load(path, torch):
    """The checkpoint as torch tensors, by the safetensors package where it is installed (and
    then also by the reader here, which must agree), else by the reader here."""
    raw, metadata = read_safetensors(path)
    dtypes = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16,
              "BF16": torch.bfloat16, "I64": torch.int64, "I32": torch.int32, "I16": torch.int16,
              "I8": torch.int8, "U8": torch.uint8, "BOOL": torch.bool}
    if sys.byteorder != "little":
        raise Failure("the reader here assumes a little-endian host")
    own = {}
    for name, t in raw.items():
        if t.data:
            own[name] = torch.frombuffer(bytearray(t.data), dtype=dtypes[t.dtype]).reshape(t.shape)
        else:
            own[name] = torch.empty(t.shape, dtype=dtypes[t.dtype])
    try:
        from safetensors.torch import load_file
    except ImportError:
        print("reader: the one in this script (the safetensors package is not installed)")
        return own, metadata
    print("reader: safetensors.torch.load_file (cross-checked with the one in this script)")
    tensors = load_file(path)
    if set(tensors) != set(own):
        raise Failure(f"the two readers disagree on the names: {sorted(set(tensors) ^ set(own))}")
    for name, t in tensors.items():
        if t.dtype != own[name].dtype or not torch.equal(t, own[name]):
            raise Failure(f"the two readers disagree on {name}")
    return tensors, metadata


def check(label, model, tensors, metadata, iters, image, classes, torch):
    """The checks of the module docstring for `model` against a checkpoint; returns failures."""
    def spec(t):
        names = {torch.float32: "F32", torch.float64: "F64", torch.int64: "I64"}
        return (names.get(t.dtype, str(t.dtype)), tuple(t.shape))

    state = model.state_dict()
    parameters = {n: tuple(p.shape) for n, p in model.named_parameters()}
    lines = differences({k: spec(v) for k, v in state.items()},
                        {k: spec(v) for k, v in tensors.items()}, parameters)
    if metadata.get("vdnn.iteration") != str(iters):
        lines.append(f"metadata vdnn.iteration is {metadata.get('vdnn.iteration')}, "
                     f"expected {iters}")
    if lines:
        return [f"{label}: {line}" for line in lines]
    weights = {k: v for k, v in tensors.items() if not k.startswith("optimizer.")}
    model.load_state_dict(weights, strict=True)
    for name, value in model.state_dict().items():
        if not torch.equal(value, weights[name]):
            lines.append(f"{label}: {name} differs from the file after load_state_dict")
        # PyTorch counts one per training-mode forward, so after `iters` steps it is `iters`.
        if name.endswith(".num_batches_tracked") and int(value) != iters:
            lines.append(f"{label}: {name} is {int(value)}, expected {iters}")
    model.eval()
    with torch.no_grad():
        out = model(torch.randn(2, 3, image, image, generator=torch.Generator().manual_seed(0)))
    if tuple(out.shape) != (2, classes):
        lines.append(f"{label}: the forward pass gives {tuple(out.shape)}, expected (2, {classes})")
    elif not bool(torch.isfinite(out).all()):
        lines.append(f"{label}: the forward pass of the loaded model is not finite: {out}")
    print(f"{label}: {len(state)} state_dict tensors and {len(parameters)} momentum buffers "
          f"match; load_state_dict(strict=True) and eval forward: "
          f"{'ok' if not lines else 'FAILED'}")
    return lines


def resnet20_cifar(torch):
    """ResNet-20 for CIFAR-10 as configs/resnet20-cifar.json: a 3x3 16-channel conv1, bn1, relu,
    layer1-layer3 of 3 BasicBlocks (16, 32, 64 channels; stride 2 and a 1x1 conv + BN
    downsample where the shape changes), global average pooling, fc 64 -> 10."""
    nn = torch.nn
    try:
        from torchvision.models.resnet import BasicBlock
    except ImportError:
        class BasicBlock(nn.Module):
            """torchvision.models.resnet.BasicBlock, attribute for attribute."""
            expansion = 1

            def __init__(self, inplanes, planes, stride=1, downsample=None):
                super().__init__()
                self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
                self.bn1 = nn.BatchNorm2d(planes)
                self.relu = nn.ReLU(inplace=True)
                self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
                self.bn2 = nn.BatchNorm2d(planes)
                self.downsample = downsample
                self.stride = stride

            def forward(self, x):
                identity = x if self.downsample is None else self.downsample(x)
                out = self.relu(self.bn1(self.conv1(x)))
                return self.relu(self.bn2(self.conv2(out)) + identity)

    class ResNet20(nn.Module):
        def __init__(self, num_classes=10):
            super().__init__()
            self.inplanes = 16
            self.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(16)
            self.relu = nn.ReLU(inplace=True)
            self.layer1 = self._make_layer(16, 3, 1)
            self.layer2 = self._make_layer(32, 3, 2)
            self.layer3 = self._make_layer(64, 3, 2)
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(64, num_classes)

        def _make_layer(self, planes, blocks, stride):
            downsample = None
            if stride != 1 or self.inplanes != planes:
                downsample = nn.Sequential(
                    nn.Conv2d(self.inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))
            layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
            self.inplanes = planes
            layers += [BasicBlock(planes, planes) for _ in range(1, blocks)]
            return nn.Sequential(*layers)

        def forward(self, x):
            x = self.relu(self.bn1(self.conv1(x)))
            x = self.layer3(self.layer2(self.layer1(x)))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    return ResNet20()


def start(argv, usage):
    """(vdnn, source directory, the torch module) from a torch test's command line VDNN
    SOURCE_DIR, or its exit status: 2 (wrong arguments; `usage` printed) or SKIP (no torch)."""
    if len(argv) != 3:
        print(usage, file=sys.stderr)
        return 2
    try:
        import torch  # pylint: disable=import-outside-toplevel
    except ImportError as e:
        print(f"SKIPPED: torch is not importable ({e})")
        return SKIP
    return os.path.abspath(argv[1]), os.path.abspath(argv[2]), torch


def main(argv):
    started = start(argv, __doc__)
    if isinstance(started, int):
        return started
    vdnn, source, torch = started
    try:
        import torchvision
    except ImportError:
        torchvision = None
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    sys.path.insert(0, os.path.join(source, "tools"))
    import torch_names  # pylint: disable=import-outside-toplevel

    # (config, PyTorch module, renamed by tools/torch_names.py, iterations, batch, image side,
    # classes)
    networks = [("resnet20-cifar", lambda: resnet20_cifar(torch), False, 2, 4, 32, 10)]
    if torchvision is None:
        print("torchvision is not importable: only resnet20-cifar is checked")
    else:
        print(f"torch {torch.__version__}, torchvision {torchvision.__version__}")
        models = torchvision.models
        networks += [
            ("resnet50", models.resnet50, False, 1, 2, 224, 1000),
            ("alexnet", models.alexnet, True, 1, 2, 224, 1000),
            ("vgg16", models.vgg16, True, 1, 2, 224, 1000),
            ("googlenet", lambda: models.googlenet(aux_logits=False, init_weights=False), True,
             1, 2, 224, 1000),
            ("densenet121", models.densenet121, True, 1, 2, 224, 1000),
        ]
    failures = []
    with tempfile.TemporaryDirectory(prefix="vdnn-torch-checkpoint-") as tmp:
        for name, build, renamed, iters, batch, image, classes in networks:
            try:
                out = os.path.join(tmp, name)
                os.makedirs(out)
                path = train(vdnn, os.path.join(source, "configs", name + ".json"), out, iters,
                             batch)
                tensors, metadata = load(path, torch)
                if renamed:
                    tensors = torch_names.rename(name, tensors)
                failures += check(name, build(), tensors, metadata, iters, image, classes, torch)
            except (Failure, ValueError, RuntimeError, subprocess.TimeoutExpired, OSError) as e:
                failures.append(f"{name}: {e}")
    for line in failures[:MAX_LINES]:
        print("FAILED:", line)
    if len(failures) > MAX_LINES:
        print(f"... and {len(failures) - MAX_LINES} more")
    print("torch checkpoint test:", "FAILED" if failures else "passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
