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
  ddp                     eager under DistributedDataParallel (NCCL, its default 25 MiB buckets),
                          one process per GPU under torchrun (--standalone --nproc-per-node N
                          tools/torch_reference.py --modes ddp ...): --batch per GPU; rank 0 alone
                          prints the row, with world_size and img/s of all ranks together
A compile mode that has not compiled and measured within --compile-limit seconds reports an error
saying so (DenseNet-264 once compiled for over 5 minutes). --channels-last trains in
torch.channels_last (model and input); the default is NCHW.
--precision bf16 (mixed precision, vdnn train --precision bf16's peer) runs forward and loss under
torch.autocast("cuda", dtype=torch.bfloat16) in channels_last (model and input), with fp32 master
weights and the same SGD; no GradScaler (bf16 has fp32's exponent range). Every row carries
"precision"; fp32 (the default) is unchanged.

--first-step (issue 23's start-up time) measures time to the first step instead: each mode runs in a
fresh python process of its own (this script again), so that importing torch, CUDA's and cuDNN's
initialisation, building the model, moving it to the GPU, cuDNN's autotuning (cudnn.benchmark) and,
for the compile modes, compiling all count. Each prints one JSON object per mode with
"first_step_end_seconds": from that process's start to the end of its first training step
(torch.cuda.synchronize() after the optimizer step). The process's start is the kernel's record of
it, /proc/self/stat field 22 (clock ticks since boot, so 1/SC_CLK_TCK = 10 ms resolution), against
CLOCK_BOOTTIME (the clock /proc/uptime reads) now; "parts" splits that into "import" (start to torch
imported), "setup" (model built, on the GPU, optimizer, torch.compile wrapper, batch on the GPU) and
"step" (the first step); "wall_seconds" is the process's wall time from launch to exit as the
launching process measured it (time.monotonic around it). --inductor-cache DIR gives the processes
TORCHINDUCTOR_CACHE_DIR=DIR/inductor and TRITON_CACHE_DIR=DIR/triton: a fresh DIR measures a cold
compile, the same DIR again a warm one (without it Inductor's default caches are used, which
earlier runs may have filled).
"""
import argparse
import contextlib
import functools
import gc
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import traceback

import torch
import torchvision
from torch import nn
from torch.utils.checkpoint import checkpoint

# CLOCK_BOOTTIME when torch and torchvision had been imported (--first-step's "import" part).
IMPORTED_AT = time.clock_gettime(time.CLOCK_BOOTTIME)

# DenseNet-BC-264 as configs/densenet264.json: growth 32, dense blocks of 6/12/64/48 layers.
densenet264 = functools.partial(torchvision.models.DenseNet, growth_rate=32, block_config=(6, 12, 64, 48),
                                num_init_features=64)
MODES = ("eager", "save_on_cpu", "checkpoint", "checkpoint_save_on_cpu", "compile", "compile_budget",
         "ddp")
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


def prepare(args, mode):
    """The model (on the GPU, channels_last if asked), its optimizer, what a step calls (the
    torch.compile wrapper in compile modes), the loss and one random batch on the GPU."""
    torch.manual_seed(0)
    model = build(args.network, args.classes, mode).cuda()
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    if mode == "ddp":
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[torch.cuda.current_device()])
    step_model = torch.compile(model) if mode in COMPILED else model
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randn(args.batch, 3, args.size, args.size, device="cuda")
    if args.channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    y = torch.randint(0, args.classes, (args.batch,), device="cuda")
    return step_model, opt, loss_fn, x, y


def autocast(precision):
    """Forward and loss under bf16 autocast for --precision bf16; nothing for fp32."""
    if precision == "bf16":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def train_step(args, mode, step_model, opt, loss_fn, x, y):
    offload = mode.endswith("save_on_cpu")
    with torch.autograd.graph.save_on_cpu(pin_memory=True) if offload else contextlib.nullcontext(), \
            autocast(args.precision):
        loss = loss_fn(step_model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()


def measure(args, mode):
    step_model, opt, loss_fn, x, y = prepare(args, mode)
    torch.cuda.reset_peak_memory_stats()
    times = []
    limit = time_limit(args.compile_limit, f"{mode} (compiling and {args.warmup + args.iters} steps)")
    with compile_budget(args.compile_budget) if mode == "compile_budget" else contextlib.nullcontext(), \
            limit if mode in COMPILED else contextlib.nullcontext():
        for it in range(args.warmup + args.iters):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            train_step(args, mode, step_model, opt, loss_fn, x, y)
            end.record()
            end.synchronize()
            if it >= args.warmup:
                times.append(start.elapsed_time(end))
    ms = statistics.median(times)
    world = torch.distributed.get_world_size() if mode == "ddp" else 1
    row = {
        "ms_per_iter": ms,
        "images_per_s": world * args.batch * 1000.0 / ms,
        "peak_device_bytes": torch.cuda.max_memory_allocated(),
    }
    if mode == "ddp":
        row["world_size"] = world
    if args.profile_kernels:
        row["kernels"] = kernel_profile(args, mode, (step_model, opt, loss_fn, x, y))
    return row


def kernel_profile(args, mode, prepared, steps=3):
    """The --profile-kernels most expensive GPU kernels of a step (torch.profiler over `steps`
    steps after measure's): [name, ms per step, calls per step], to set beside vdnn's layers.json."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            train_step(args, mode, *prepared)
        torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages():
        device_us = getattr(e, "self_device_time_total", None)
        if device_us is None:
            device_us = e.self_cuda_time_total
        if device_us > 0:
            rows.append([e.key[:120], device_us / 1000.0 / steps, e.count / steps])
    rows.sort(key=lambda r: -r[1])
    return rows[:args.profile_kernels]


def start_ddp(modes):
    """One process per GPU under torchrun: this rank's GPU and the NCCL group; every rank but 0
    prints nothing (stdout to /dev/null)."""
    if modes != ["ddp"] or "LOCAL_RANK" not in os.environ:
        sys.exit("torch_reference.py: --modes ddp runs alone, under torchrun")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    torch.distributed.init_process_group("nccl")
    if torch.distributed.get_rank() != 0:
        sys.stdout = open(os.devnull, "w")


def process_start():
    """This process's start on CLOCK_BOOTTIME, as the kernel recorded it: /proc/self/stat field 22
    (starttime, clock ticks since boot)."""
    with open("/proc/self/stat") as f:
        stat = f.read()
    fields = stat[stat.rindex(")") + 2:].split()  # the name in parentheses may hold spaces; field 3 on
    return int(fields[22 - 3]) / os.sysconf("SC_CLK_TCK")


def first_step(args, mode):
    """--first-step's measurement, in the process of its own that --first-step started for `mode`:
    seconds from this process's start to the end of its first step, and the parts of it."""
    started = process_start()
    limit = time_limit(args.compile_limit, f"{mode} (compiling and its first step)")
    with compile_budget(args.compile_budget) if mode == "compile_budget" else contextlib.nullcontext(), \
            limit if mode in COMPILED else contextlib.nullcontext():
        step_model, opt, loss_fn, x, y = prepare(args, mode)
        torch.cuda.synchronize()
        ready = time.clock_gettime(time.CLOCK_BOOTTIME)
        train_step(args, mode, step_model, opt, loss_fn, x, y)
        torch.cuda.synchronize()
        end = time.clock_gettime(time.CLOCK_BOOTTIME)
    return {
        "first_step_end_seconds": end - started,
        "parts": {"import": IMPORTED_AT - started, "setup": ready - IMPORTED_AT, "step": end - ready},
        "peak_device_bytes": torch.cuda.max_memory_allocated(),
    }


def run_first_steps(args, modes):
    """--first-step: one fresh process per mode (this script with --first-step-child), each
    printing its row; adds the process's wall time from launch to exit. A process that fails or
    prints no row gives a row with "error"."""
    env = dict(os.environ)
    if args.inductor_cache:
        cache = os.path.abspath(args.inductor_cache)
        env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cache, "inductor")
        env["TRITON_CACHE_DIR"] = os.path.join(cache, "triton")
    # A compile mode's own limit fires inside the process; this one is for a process that hangs.
    timeout = args.compile_limit + 120 if args.compile_limit > 0 else None
    for mode in modes:
        row = {"framework": "pytorch", "network": args.network, "batch": args.batch, "mode": mode,
               "first_step": True, "channels_last": args.channels_last, "precision": args.precision}
        command = [sys.executable, os.path.abspath(__file__)] + sys.argv[1:] + ["--modes", mode, "--first-step-child"]
        start = time.monotonic()
        try:
            done = subprocess.run(command, stdout=subprocess.PIPE, env=env, timeout=timeout, text=True)
        except subprocess.TimeoutExpired:
            row["wall_seconds"] = time.monotonic() - start
            row["error"] = f"TimeoutError: the {mode} process did not exit within {timeout} s (killed)"
            print(json.dumps(row), flush=True)
            continue
        row["wall_seconds"] = time.monotonic() - start
        child = None
        for line in done.stdout.splitlines():
            try:
                parsed = json.loads(line)
            except ValueError:
                continue
            if isinstance(parsed, dict):
                child = parsed
        if child is not None:
            row.update(child)
        if done.returncode != 0 and "error" not in row:
            row["error"] = f"the {mode} process exited with {done.returncode}"
        elif child is None and "error" not in row:
            row["error"] = f"the {mode} process printed no result"
        print(json.dumps(row), flush=True)


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
    p.add_argument("--channels-last", action="store_true",
                   help="train in torch.channels_last (model and input); default NCHW")
    p.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                   help="fp32 (default), or bf16: autocast around forward and loss, channels_last, "
                        "fp32 master weights")
    p.add_argument("--profile-kernels", type=int, default=0, metavar="N",
                   help="add the N most expensive GPU kernels of a step to each row (torch.profiler)")
    p.add_argument("--first-step", action="store_true",
                   help="time from process start to the end of the first step, one fresh process per mode")
    p.add_argument("--inductor-cache", metavar="DIR",
                   help="with --first-step: Inductor's and Triton's caches under DIR (fresh: a cold compile)")
    p.add_argument("--first-step-child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    modes = args.modes.split(",")
    if args.precision == "bf16":
        args.channels_last = True
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        p.error(f"unknown modes {unknown}; known: {', '.join(MODES)}")
    if args.first_step and not args.first_step_child:
        run_first_steps(args, modes)
        return
    if not torch.cuda.is_available():
        sys.exit("torch_reference.py: no CUDA device")
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True
    if "ddp" in modes:
        start_ddp(modes)
    if args.first_step_child:
        row = {"mode": modes[0]}
        try:
            row.update(first_step(args, modes[0]))
        except Exception as e:
            traceback.print_exc()
            row["error"] = describe_error(e)
        print(json.dumps(row), flush=True)
        sys.exit(1 if "error" in row else 0)
    for mode in modes:
        row = {"framework": "pytorch", "network": args.network, "batch": args.batch, "mode": mode,
               "precision": args.precision, "channels_last": args.channels_last}
        try:
            row.update(measure(args, mode))
        except Exception as e:  # out of memory, a compile failure: report it, go on with the next mode
            traceback.print_exc()
            row["error"] = describe_error(e)
        print(json.dumps(row), flush=True)
        free_device(mode)


if __name__ == "__main__":
    main()
