#!/usr/bin/env python3
"""torch_optimizer_test.py VDNN SOURCE_DIR: vdnn's optimizers against torch.optim's.
For AdamW (torch.optim.AdamW), SGD with Nesterov momentum (torch.optim.SGD) and LARS (no PyTorch
built-in: the reference update below, apex's LARC without clipping: d = trust * (g + wd * w),
trust = eta * ||w|| / (||g|| + wd * ||w||), 1 where a norm is 0, then SGD momentum), ResNet-20
(configs/resnet20-cifar.json, the module of torch_checkpoint_test.py) trains STEPS steps from the
same initial weights (PyTorch's initialization, given to vdnn with --init-from) on the same batch:
a CIFAR-10 binary file of BATCH random images that this script writes, so that every step's batch
is the whole file (vdnn shuffles it; a batch's loss and gradients do not depend on the order but
for float rounding), normalized as vdnn normalizes CIFAR-10 (in float32), no augmentation.
vdnn runs `--deterministic --math fp32` (CUDA where it has it), PyTorch runs with TF32 off in
float32 and in float64. Per optimizer it prints the max relative error against the float64 run
of the losses (per step) and of the final weights (per state_dict tensor, norm-wise: ||w - w64|| /
||w64||, running statistics included), for vdnn and for PyTorch's own float32 run, and fails
when vdnn's exceeds FACTOR times PyTorch's (or FLOOR, where PyTorch's is below it).
Exit status 0: passed; 1: a comparison failed; 2: usage; 77: skipped, torch is not importable.
tools/gpu-check.sh runs it with the other torch-labelled tests (ctest -L torch)."""
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_checkpoint_test  # noqa: E402  pylint: disable=wrong-import-position

STEPS = 20
BATCH = 32
CLASSES = 10
FACTOR = 10.0
FLOOR = 1e-6  # relative errors below this are float32 rounding whatever their ratio
TRAIN_TIMEOUT_S = 600
CIFAR_MEAN = (0.4914, 0.4822, 0.4465)  # Cifar10Dataset's normalization
CIFAR_STD = (0.2470, 0.2435, 0.2616)

# name -> (vdnn flags, settings of the PyTorch run)
OPTIMIZERS = {
    "adamw": (["--optimizer", "adamw", "--lr", "0.001", "--weight-decay", "0.05"],
              {"kind": "adamw", "lr": 0.001, "weight_decay": 0.05}),
    "sgd-nesterov": (["--optimizer", "sgd", "--lr", "0.05", "--momentum", "0.9", "--nesterov",
                      "--weight-decay", "5e-4"],
                     {"kind": "sgd", "lr": 0.05, "momentum": 0.9, "weight_decay": 5e-4}),
    "lars": (["--optimizer", "lars", "--lr", "2.0", "--momentum", "0.9", "--weight-decay", "5e-4",
              "--lars-trust", "0.001"],
             {"kind": "lars", "lr": 2.0, "momentum": 0.9, "weight_decay": 5e-4, "eta": 0.001}),
}


class Failure(Exception):
    pass


def write_cifar(path, seed=0):
    """BATCH records of CIFAR-10's binary format (a label byte, 3072 CHW pixel bytes); returns
    (pixels as BATCH lists of 3072 ints, labels)."""
    rng = random.Random(seed)
    images, labels = [], []
    with open(path, "wb") as f:
        for _ in range(BATCH):
            label = rng.randrange(CLASSES)
            pixels = [rng.randrange(256) for _ in range(3 * 32 * 32)]
            f.write(bytes([label]) + bytes(pixels))
            images.append(pixels)
            labels.append(label)
    return images, labels


def batch_tensors(torch, images, labels, device):
    """The batch as vdnn feeds it: (v / 255 - mean) / std in float32, NCHW."""
    x = torch.tensor(images, dtype=torch.float32).reshape(BATCH, 3, 32, 32) / 255.0
    mean = torch.tensor(CIFAR_MEAN, dtype=torch.float32).reshape(1, 3, 1, 1)
    std = torch.tensor(CIFAR_STD, dtype=torch.float32).reshape(1, 3, 1, 1)
    x = (x - mean) / std
    return x.to(device), torch.tensor(labels, dtype=torch.int64, device=device)


def write_safetensors(path, state, torch):
    """A state_dict as safetensors (the published format: 8-byte header length, JSON header,
    raw little-endian data), which vdnn's --init-from reads."""
    names = {torch.float32: "F32", torch.int64: "I64"}
    header, blobs, offset = {}, [], 0
    for name in sorted(state):
        t = state[name].detach().cpu().contiguous()
        data = bytes(t.reshape(-1).view(torch.uint8).tolist())  # no numpy needed
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def run_vdnn(vdnn, source, data, init, out, flags):
    """`vdnn train` for STEPS steps; returns (losses, final state as {name: raw tensor})."""
    command = [vdnn, "train", "--config", os.path.join(source, "configs", "resnet20-cifar.json"),
               "--batch", str(BATCH), "--iters", str(STEPS), "--data", "cifar10:" + data,
               "--augment", "none", "--deterministic", "--math", "fp32", "--schedule", "constant",
               "--init-from", init, "--checkpoint-every", str(STEPS), "--out", out] + flags
    print("running:", " ".join(command), flush=True)
    run = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         timeout=TRAIN_TIMEOUT_S, check=False)
    if run.returncode != 0:
        raise Failure(f"vdnn train exited with {run.returncode}:\n{run.stdout[-3000:]}")
    with open(os.path.join(out, "metrics.jsonl"), encoding="utf-8") as f:
        losses = [json.loads(line)["loss"] for line in f if line.strip()]
    if len(losses) != STEPS:
        raise Failure(f"metrics.jsonl has {len(losses)} steps, expected {STEPS}")
    checkpoint = os.path.join(out, "checkpoints", f"iter-{STEPS:09d}.safetensors")
    tensors, _ = torch_checkpoint_test.read_safetensors(checkpoint)
    return losses, tensors


class Lars:
    """The LARS reference (apex's LARC, clip off, eps 0) over SGD momentum, in the parameters'
    dtype: d = trust * (g + wd * w); buf = d on the first step, else momentum * buf + d;
    w -= lr * buf."""

    def __init__(self, torch, params, lr, momentum, weight_decay, eta):
        self.torch, self.params, self.lr = torch, list(params), lr
        self.momentum, self.weight_decay, self.eta = momentum, weight_decay, eta
        self.buffers = [None] * len(self.params)

    def zero_grad(self, set_to_none=True):  # pylint: disable=unused-argument
        for p in self.params:
            p.grad = None

    def step(self):
        with self.torch.no_grad():
            for i, p in enumerate(self.params):
                w_norm, g_norm = float(p.norm()), float(p.grad.norm())
                trust = 1.0
                if w_norm > 0 and g_norm > 0:
                    trust = self.eta * w_norm / (g_norm + self.weight_decay * w_norm)
                d = (p.grad + self.weight_decay * p) * trust
                if self.buffers[i] is None:
                    self.buffers[i] = d.clone()
                else:
                    self.buffers[i].mul_(self.momentum).add_(d)
                p.sub_(self.lr * self.buffers[i])


def make_optimizer(torch, params, s):
    if s["kind"] == "adamw":
        return torch.optim.AdamW(params, lr=s["lr"], weight_decay=s["weight_decay"])
    if s["kind"] == "sgd":
        return torch.optim.SGD(params, lr=s["lr"], momentum=s["momentum"], nesterov=True,
                               weight_decay=s["weight_decay"])
    return Lars(torch, params, s["lr"], s["momentum"], s["weight_decay"], s["eta"])


def run_torch(torch, init, x, y, dtype, settings):
    """STEPS steps of PyTorch in `dtype`; returns (losses, final state_dict in float64 on the
    CPU)."""
    model = torch_checkpoint_test.resnet20_cifar(torch)
    model.load_state_dict(init)
    model = model.to(device=x.device, dtype=dtype).train()
    optimizer = make_optimizer(torch, model.parameters(), settings)
    inputs = x.to(dtype)
    losses = []
    for _ in range(STEPS):
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(inputs), y)
        losses.append(float(loss))
        loss.backward()
        optimizer.step()
    state = {k: v.detach().to("cpu", torch.float64) for k, v in model.state_dict().items()
             if not k.endswith("num_batches_tracked")}
    return losses, state


def loss_error(losses, reference):
    return max(abs(a - r) / abs(r) for a, r in zip(losses, reference))


def weight_error(state, reference):
    worst = 0.0
    for name, ref in reference.items():
        norm = float(ref.norm())
        if norm > 0:
            worst = max(worst, float((state[name] - ref).norm()) / norm)
    return worst


def vdnn_state(torch, tensors, reference):
    """vdnn's final tensors of the state_dict's names, in float64."""
    missing = [name for name in reference if name not in tensors]
    if missing:
        raise Failure(f"the checkpoint lacks {missing[:5]}")
    return {name: torch.frombuffer(bytearray(tensors[name].data), dtype=torch.float32)
            .reshape(tensors[name].shape).to(torch.float64) for name in reference}


def compare(label, vdnn_err, torch_err):
    """One line: vdnn's error next to PyTorch's float32 error; True when within the bound."""
    ok = vdnn_err <= FACTOR * max(torch_err, FLOOR)
    print(f"  {label}: max relative error vs float64: vdnn {vdnn_err:.3e}, torch float32 "
          f"{torch_err:.3e} -> {'ok' if ok else f'FAILED (above {FACTOR:g}x)'}")
    return ok


def check(torch, name, vdnn, source, tmp, init, images, labels):
    flags, settings = OPTIMIZERS[name]
    out = os.path.join(tmp, name)
    os.makedirs(out)
    losses, tensors = run_vdnn(vdnn, source, os.path.join(tmp, "cifar"),
                               os.path.join(tmp, "init.safetensors"), out, flags)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x, y = batch_tensors(torch, images, labels, device)
    losses32, state32 = run_torch(torch, init, x, y, torch.float32, settings)
    losses64, state64 = run_torch(torch, init, x, y, torch.float64, settings)
    state = vdnn_state(torch, tensors, state64)
    print(f"{name}: {STEPS} steps, loss {losses64[0]:.5f} -> {losses64[-1]:.5f} (float64); "
          f"vdnn {losses[0]:.5f} -> {losses[-1]:.5f}")
    ok = compare("losses", loss_error(losses, losses64), loss_error(losses32, losses64))
    ok = compare("weights", weight_error(state, state64), weight_error(state32, state64)) and ok
    return ok


def main(argv):
    started = torch_checkpoint_test.start(argv, __doc__)
    if isinstance(started, int):
        return started
    vdnn, source, torch = started
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    print(f"torch {torch.__version__}; torch on {'cuda' if torch.cuda.is_available() else 'cpu'}")
    failures = []
    with tempfile.TemporaryDirectory(prefix="vdnn-torch-optimizers-") as tmp:
        os.makedirs(os.path.join(tmp, "cifar"))
        images, labels = write_cifar(os.path.join(tmp, "cifar", "data_batch_1.bin"))
        torch.manual_seed(0)
        init = torch_checkpoint_test.resnet20_cifar(torch).state_dict()
        write_safetensors(os.path.join(tmp, "init.safetensors"), init, torch)
        for name in OPTIMIZERS:
            try:
                if not check(torch, name, vdnn, source, tmp, init, images, labels):
                    failures.append(name)
            except (Failure, RuntimeError, subprocess.TimeoutExpired, OSError) as e:
                print(f"{name}: {e}")
                failures.append(name)
    print("torch optimizer test:", f"FAILED ({', '.join(failures)})" if failures else "passed")
    return 1 if failures else 0

if __name__ == "__main__":
    sys.exit(main(sys.argv))
