#!/usr/bin/env python3
"""PyTorch's own bf16 error, the peer of tests/graph/cuda/PrecisionCudaTest: ResNet-50's first-step
parameter gradients under bf16 autocast (channels_last) against true FP32 (TF32 off), on the same
weights and batch (torchvision's initialization, a uniform random batch of 32, random labels).
Prints the losses, the lowest cosine similarities, the median and how many are below 0.99.
Usage (GPU machine): python3 tools/torch_precision_grads.py"""
import torch
import torchvision

torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
def grads(bf16, seed=3):
    torch.manual_seed(seed)
    m = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last)
    g = torch.Generator(device='cuda').manual_seed(1)
    x = torch.rand(32, 3, 224, 224, device='cuda', generator=g).to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (32,), device='cuda', generator=g)
    with torch.autocast('cuda', dtype=torch.bfloat16, enabled=bf16):
        loss = torch.nn.functional.cross_entropy(m(x), y)
    loss.backward()
    return {n: p.grad.double().flatten() for n, p in m.named_parameters()}, loss.item()
a, la = grads(False); b, lb = grads(True)
cos = {n: float(torch.dot(a[n], b[n]) / (a[n].norm() * b[n].norm())) for n in a}
print("losses", la, lb)
worst = sorted(cos.items(), key=lambda kv: kv[1])[:8]
print("torch bf16 vs fp32 lowest cosines:", worst)
print("median", sorted(cos.values())[len(cos)//2], "count<0.99", sum(v < 0.99 for v in cos.values()), "of", len(cos))
for n in ["conv1.weight", "bn1.bias", "layer1.0.conv1.weight", "layer4.2.conv3.weight", "fc.weight"]: print(n, cos[n])
