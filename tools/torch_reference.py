#!/usr/bin/env python3
"""PyTorch eager reference for vdnn's GPU benchmark: trains a torchvision network on random data
with SGD (momentum, weight decay), fp32 storage, TF32 convolutions (PyTorch's default), with and
without activations saved to pinned host memory (torch.autograd.graph.save_on_cpu), and prints one
JSON object per mode: img/s, ms/iter (median), peak device bytes."""
import argparse
import json
import statistics
import sys

import torch
import torchvision


def build(name, classes):
    return getattr(torchvision.models, name)(num_classes=classes)


def measure(args, offload):
    torch.manual_seed(0)
    model = build(args.network, args.classes).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randn(args.batch, 3, args.size, args.size, device="cuda")
    y = torch.randint(0, args.classes, (args.batch,), device="cuda")
    torch.cuda.reset_peak_memory_stats()
    times = []
    for it in range(args.warmup + args.iters):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        if offload:
            with torch.autograd.graph.save_on_cpu(pin_memory=True):
                loss = loss_fn(model(x), y)
        else:
            loss = loss_fn(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        end.record()
        end.synchronize()
        if it >= args.warmup:
            times.append(start.elapsed_time(end))
    ms = statistics.median(times)
    return {
        "framework": "pytorch",
        "network": args.network,
        "batch": args.batch,
        "mode": "save_on_cpu" if offload else "eager",
        "ms_per_iter": ms,
        "images_per_s": args.batch * 1000.0 / ms,
        "peak_device_bytes": torch.cuda.max_memory_allocated(),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--network", default="resnet50")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--classes", type=int, default=1000)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--modes", default="eager,save_on_cpu")
    args = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_reference.py: no CUDA device")
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True
    for mode in args.modes.split(","):
        print(json.dumps(measure(args, mode == "save_on_cpu")), flush=True)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
