#!/usr/bin/env python3
"""torch_predict_test.py VDNN PREDICT_LOGITS SOURCE_DIR: vdnn::Predictor's logits are PyTorch's.
For configs/resnet50.json and configs/densenet121.json: takes the tensor names of a vdnn
checkpoint (one CPU step of batch 2), fills them from a torchvision model's state_dict (random
weights, batch-norm running statistics made non-trivial; tools/torch_names.py's reverse mapping
gives exactly those names),
runs PREDICT_LOGITS (deterministic kernels, FP32 math) on 4 random images, and compares its
logits with the module's eval-mode forward in float32 (TF32 off) and in float64: vdnn's max
relative error against float64 must be within 10x PyTorch's own float32 error (floor 1e-6).
Exit status 0: passed; 1: a check failed; 2: usage; 77: skipped (torch or torchvision missing)."""
import os
import subprocess
import sys
import tempfile

SKIP = 77
IMAGES = 4
RUN_TIMEOUT_S = 600
FACTOR = 10.0
FLOOR = 1e-6


class Failure(Exception):
    pass


def run(command, cwd):
    print("running:", " ".join(command), flush=True)
    done = subprocess.run(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=RUN_TIMEOUT_S, check=False)
    if done.returncode != 0:
        raise Failure(f"{command[0]} exited with {done.returncode}:\n{done.stdout[-3000:]}")


def vdnn_names(vdnn, config, out, safetensors):
    """The non-optimizer tensor names of a checkpoint `vdnn train` writes for `config`."""
    run([vdnn, "train", "--config", config, "--device", "cpu", "--iters", "1", "--batch", "2",
         "--checkpoint-every", "1", "--out", out], out)
    path = os.path.join(out, "checkpoints", "iter-000000001.safetensors")
    with safetensors.safe_open(path, "np") as f:
        return [k for k in f.keys() if not k.startswith("optimizer.")]


def relative(a, b):
    return float((a - b).abs().max() / b.abs().max())


def perturb(module, torch, generator):
    """Makes the weights that initialize to constants non-trivial: batch-norm running statistics
    and affine parameters, and ConvNeXt's layer scales (1e-6 at initialization)."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.num_features, generator=generator) * 0.1)
                m.running_var.copy_(torch.rand(m.num_features, generator=generator) + 0.5)
                m.weight.copy_(torch.rand(m.num_features, generator=generator) + 0.5)
                m.bias.copy_(torch.randn(m.num_features, generator=generator) * 0.1)
        for key, p in module.named_parameters():
            if key.endswith("layer_scale"):
                p.copy_(torch.rand(p.shape, generator=generator) * 0.2 + 0.1)


def vdnn_weights(name, module, names, torch_names):
    """The module's state_dict under vdnn's names (tools/torch_names.py's reverse mapping), which
    must be exactly `names`, the tensors of a vdnn checkpoint of the config."""
    try:
        weights = torch_names.rename_to_vdnn(name, module.state_dict())
    except ValueError as e:
        raise Failure(str(e)) from e
    if set(weights) != set(names):
        raise Failure(f"{name}: torchvision's state_dict maps to other names than vdnn's: "
                      f"{sorted(set(weights) ^ set(names))[:10]}")
    return {n: t.detach().clone().contiguous() for n, t in weights.items()}


def compare_logits(name, module, predict, config, checkpoint, out, torch, generator, side=224):
    """PREDICT_LOGITS on `checkpoint` against the module's eval-mode forward (the same weights)
    in float32 and float64 on IMAGES random images of side x side (the config's input); raises
    Failure beyond the bound."""
    module.eval()
    images = torch.randn(IMAGES, 3, side, side, generator=generator)
    images_path = os.path.join(out, "images.f32")
    images.numpy().astype("<f4").tofile(images_path)
    logits_path = os.path.join(out, "logits.f32")
    run([predict, config, checkpoint, images_path, str(IMAGES), logits_path], out)
    import numpy  # pylint: disable=import-outside-toplevel
    got = torch.from_numpy(numpy.fromfile(logits_path, dtype="<f4")).double()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    with torch.no_grad():
        f32 = module.to(device).float()(images.to(device)).double().cpu().flatten()
        f64 = module.to(device).double()(images.to(device).double()).cpu().flatten()
    if got.numel() != f64.numel():
        raise Failure(f"{name}: {got.numel()} logits from vdnn, {f64.numel()} from PyTorch")
    vdnn_error = relative(got, f64)
    torch_error = relative(f32, f64)
    bound = FACTOR * max(torch_error, FLOOR)
    verdict = "ok" if vdnn_error <= bound else "FAIL"
    print(f"{name}: max relative error against float64: vdnn {vdnn_error:.3e}, PyTorch float32 "
          f"{torch_error:.3e} (bound {bound:.3e}) {verdict}", flush=True)
    if vdnn_error > bound:
        raise Failure(f"{name}: vdnn's logits are {vdnn_error:.3e} from float64, beyond {bound:.3e}")


def check(name, module, vdnn, predict, source, out, torch, torch_names):
    import safetensors  # pylint: disable=import-outside-toplevel
    import safetensors.torch  # pylint: disable=import-outside-toplevel
    config = os.path.join(source, "configs", f"{name}.json")
    generator = torch.Generator().manual_seed(7)
    perturb(module, torch, generator)
    weights = vdnn_weights(name, module, vdnn_names(vdnn, config, out, safetensors), torch_names)
    checkpoint = os.path.join(out, "torchvision.safetensors")
    safetensors.torch.save_file(weights, checkpoint)
    compare_logits(name, module, predict, config, checkpoint, out, torch, generator)


def start_torchvision(argv, count, usage):
    """(torch, torchvision) for a torchvision test whose command line has `count` words, or its
    exit status: 2 (another count; `usage` printed) or SKIP (torch, torchvision or safetensors is
    not importable)."""
    if len(argv) != count:
        print(usage, file=sys.stderr)
        return 2
    try:
        import torch  # pylint: disable=import-outside-toplevel
        import torchvision  # pylint: disable=import-outside-toplevel
        import safetensors.torch  # noqa: F401 pylint: disable=import-outside-toplevel,unused-import
    except ImportError as e:
        print(f"SKIPPED: torch, torchvision or safetensors is not importable ({e})")
        return SKIP
    return torch, torchvision


def main(argv):
    started = start_torchvision(argv, 4, __doc__)
    if isinstance(started, int):
        return started
    torch, torchvision = started
    vdnn, predict, source = (os.path.abspath(a) for a in argv[1:])
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    sys.path.insert(0, os.path.join(source, "tools"))
    import torch_names  # pylint: disable=import-outside-toplevel
    torch.manual_seed(0)
    failures = 0
    for name, build in (("resnet50", torchvision.models.resnet50),
                        ("densenet121", torchvision.models.densenet121)):
        with tempfile.TemporaryDirectory(prefix=f"vdnn-predict-{name}-") as out:
            try:
                check(name, build(), vdnn, predict, source, out, torch, torch_names)
            except Failure as e:
                print(f"FAILED: {e}", flush=True)
                failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
