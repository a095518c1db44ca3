#!/usr/bin/env python3
"""PyTorch reference for vdnn's GPU benchmarks: trains a network on random data with SGD (momentum,
weight decay), fp32 storage, TF32 convolutions (PyTorch's default), and prints one JSON object per
mode: img/s, ms/iter (median), peak device bytes; a mode that fails (out of memory, say) prints an
object with "error" instead, and the other modes still run.

Networks: any torchvision classification model by name (resnet50, vgg16, ...), resnet1001_cifar
(the pre-activation bottleneck ResNet of configs/resnet1001-cifar.json; use --size 32 --classes 10)
and densenet264 (torchvision's DenseNet with the blocks of configs/densenet264.json).
Modes:
  eager                   plain eager training
  save_on_cpu             activations saved to pinned host memory (torch.autograd.graph.save_on_cpu)
  checkpoint              per-block checkpointing (torch.utils.checkpoint, use_reentrant=False)
                          around each residual block, each VGG conv stage between max-pools;
                          DenseNet: torchvision's memory_efficient=True
  checkpoint_save_on_cpu  checkpoint, and what is still saved goes to pinned host memory
  compile                 torch.compile (Inductor's defaults)
  compile_budget          torch.compile with torch._functorch.config.activation_memory_budget
                          (--compile-budget, 0.5 by default): its min-cut recompute planner
A compile mode that has not compiled and measured within --compile-limit seconds reports an error
saying so (DenseNet-264 once compiled for over 5 minutes).
"""
import argparse
import contextlib
import functools
import gc
import json
import signal
import statistics
import sys
import traceback

import torch
import torchvision
from torch import nn
from torch.utils.checkpoint import checkpoint

# DenseNet-BC-264 as configs/densenet264.json: growth 32, dense blocks of 6/12/64/48 layers.
densenet264 = functools.partial(torchvision.models.DenseNet, growth_rate=32, block_config=(6, 12, 64, 48),
                                num_init_features=64)
MODES = ("eager", "save_on_cpu", "checkpoint", "checkpoint_save_on_cpu", "compile", "compile_budget")
COMPILED = ("compile", "compile_budget")


class PreActBottleneck(nn.Module):
    """BN-ReLU-conv1x1, BN-ReLU-conv3x3 (stride), BN-ReLU-conv1x1 (x4 channels), plus the block
    input, through a 1x1 conv (stride) where the block projects."""

    def __init__(self, cin, width, stride, project):
        super().__init__()
        out = 4 * width
        self.bn1 = nn.BatchNorm2d(cin)
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
        self.bn3 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, out, 1, bias=False)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = nn.Sequential(nn.Conv2d(cin, out, 1, stride=stride, bias=False)) if project else None

    def forward(self, x):
        shortcut = x if self.downsample is None else self.downsample(x)
        y = self.conv1(self.relu(self.bn1(x)))
        y = self.conv2(self.relu(self.bn2(y)))
        y = self.conv3(self.relu(self.bn3(y)))
        return y + shortcut


class PreActResNetCifar(nn.Module):
    """Pre-activation bottleneck ResNet for 32x32 inputs, as configs/resnet1001-cifar.json: a 3x3
    conv to 16 channels, three stages of (depth - 2) / 9 blocks of widths 16/32/64 (stride 2 and a
    projection in the first block of stages 2 and 3, a projection alone in that of stage 1), then
    BN-ReLU, global average pooling and the classifier."""

    def __init__(self, depth, classes):
        super().__init__()
        assert (depth - 2) % 9 == 0, "depth must be 9n+2"
        blocks = (depth - 2) // 9
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        cin = 16
        for stage, (width, stride) in enumerate(((16, 1), (32, 2), (64, 2)), start=1):
            layers = []
            for i in range(blocks):
                layers.append(PreActBottleneck(cin, width, stride if i == 0 else 1, project=i == 0))
                cin = 4 * width
            setattr(self, f"layer{stage}", nn.Sequential(*layers))
        self.bn = nn.BatchNorm2d(cin)
        self.relu = nn.ReLU(inplace=True)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.layer3(self.layer2(self.layer1(self.conv1(x))))
        return self.fc(torch.flatten(self.avgpool(self.relu(self.bn(x))), 1))


class Checkpointed(nn.Module):
    """Runs `inner` under torch.utils.checkpoint: its activations are recomputed in backward."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return checkpoint(self.inner, x, use_reentrant=False)


def add_checkpoints(model):
    """Wraps each residual block (layer1..layer4 of a ResNet) or each conv stage between max-pools
    (VGG's features) in a checkpoint."""
    stages = [getattr(model, f"layer{i}") for i in range(1, 5) if hasattr(model, f"layer{i}")]
    if stages:
        for stage in stages:
            for i in range(len(stage)):
                stage[i] = Checkpointed(stage[i])
        return model
    if isinstance(getattr(model, "features", None), nn.Sequential):
        layers, run = [], []
        for layer in model.features:
            if isinstance(layer, nn.MaxPool2d):
                if run:
                    layers.append(Checkpointed(nn.Sequential(*run)))
                layers.append(layer)
                run = []
            else:
                run.append(layer)
        if run:
            layers.append(Checkpointed(nn.Sequential(*run)))
        model.features = nn.Sequential(*layers)
        return model
    raise ValueError(f"no checkpoint blocks known for {type(model).__name__}")


def build(name, classes, mode):
    checkpointed = mode.startswith("checkpoint")
    if name == "resnet1001_cifar":
        model = PreActResNetCifar(1001, classes)
    elif name.startswith("densenet"):
        # DenseNet checkpoints each dense layer's concat-BN-ReLU-conv1x1 itself (memory_efficient).
        make = densenet264 if name == "densenet264" else getattr(torchvision.models, name)
        return make(num_classes=classes, memory_efficient=checkpointed)
    else:
        model = getattr(torchvision.models, name)(num_classes=classes)
    return add_checkpoints(model) if checkpointed else model


@contextlib.contextmanager
def compile_budget(budget):
    """torch._functorch.config.activation_memory_budget = budget while the model compiles (at its
    first step) and runs."""
    import torch._functorch.config as config
    saved = config.activation_memory_budget
    config.activation_memory_budget = budget
    try:
        yield
    finally:
        config.activation_memory_budget = saved


@contextlib.contextmanager
def time_limit(seconds, what):
    """Raises TimeoutError in the main thread when `what` takes more than `seconds` (0: no limit)."""
    def expire(signum, frame):
        raise TimeoutError(f"{what} did not finish within {seconds} s")
    saved = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, saved)


def measure(args, mode):
    torch.manual_seed(0)
    model = build(args.network, args.classes, mode).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    step_model = torch.compile(model) if mode in COMPILED else model
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randn(args.batch, 3, args.size, args.size, device="cuda")
    y = torch.randint(0, args.classes, (args.batch,), device="cuda")
    offload = mode.endswith("save_on_cpu")
    torch.cuda.reset_peak_memory_stats()
    times = []
    limit = time_limit(args.compile_limit, f"{mode} (compiling and {args.warmup + args.iters} steps)")
    with compile_budget(args.compile_budget) if mode == "compile_budget" else contextlib.nullcontext(), \
            limit if mode in COMPILED else contextlib.nullcontext():
        for it in range(args.warmup + args.iters):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            with torch.autograd.graph.save_on_cpu(pin_memory=True) if offload else contextlib.nullcontext():
                loss = loss_fn(step_model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            end.record()
            end.synchronize()
            if it >= args.warmup:
                times.append(start.elapsed_time(end))
    ms = statistics.median(times)
    return {
        "ms_per_iter": ms,
        "images_per_s": args.batch * 1000.0 / ms,
        "peak_device_bytes": torch.cuda.max_memory_allocated(),
    }


def describe_error(e):
    """One line: the time limit's own message where it fired (Inductor wraps it), else the
    exception's type and first line."""
    cause = e
    while cause is not None and not isinstance(cause, TimeoutError):
        cause = cause.__cause__ or cause.__context__
    e = cause or e
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def free_device(mode):
    """Drops what a mode left (compiled graphs, cached blocks) so that the next peak is its own."""
    if mode in COMPILED:
        torch._dynamo.reset()
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--network", default="resnet50")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--classes", type=int, default=1000)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--modes", default="eager,save_on_cpu", help="comma-separated, of: " + ", ".join(MODES))
    p.add_argument("--compile-budget", type=float, default=0.5,
                   help="activation_memory_budget of mode compile_budget (default 0.5)")
    p.add_argument("--compile-limit", type=int, default=300,
                   help="seconds a compile mode may take, compiling included (default 300; 0: no limit)")
    args = p.parse_args()
    modes = args.modes.split(",")
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        p.error(f"unknown modes {unknown}; known: {', '.join(MODES)}")
    if not torch.cuda.is_available():
        sys.exit("torch_reference.py: no CUDA device")
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True
    for mode in modes:
        row = {"framework": "pytorch", "network": args.network, "batch": args.batch, "mode": mode}
        try:
            row.update(measure(args, mode))
        except Exception as e:  # out of memory, a compile failure: report it, go on with the next mode
            traceback.print_exc()
            row["error"] = describe_error(e)
        print(json.dumps(row), flush=True)
        free_device(mode)


if __name__ == "__main__":
    main()
