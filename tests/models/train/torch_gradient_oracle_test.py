#!/usr/bin/env python3
"""torch_gradient_oracle_test.py VDNN SOURCE_DIR NETWORK: vdnn's first-step gradients of
configs/NETWORK.json against a float64 PyTorch oracle, held to PyTorch's own float32 error. Both
start from the weights of torchvision.models.NETWORK() (its initialization, ConvNeXt's layer scales
raised from 1e-6 to U(0.1, 0.3) so that every block's gradients count), given to vdnn with
--init-from through tools/torch_names.py's reverse mapping, and take one batch: the CIFAR-10 file of
tests/models/train/torch_optimizer_test.py (32 random 32x32 images, normalized as vdnn normalizes
CIFAR-10), so the config runs at 32x32 with a 10-class classifier; stochastic depth and dropout are
set to p = 0 in both, their masks being no arithmetic. vdnn (`--deterministic --math fp32`, CUDA
where there is a GPU) takes one SGD step of learning rate LR = 2^20 without momentum or weight decay
from w0, so its gradient is (w0 - w1) / LR (w1 from its checkpoint; the float32 rounding of w1 costs
about 1e-7 relative, as |w0| << LR |g|). PyTorch computes the same gradients in float32 (TF32 off)
and float64. The criterion ("as closely as PyTorch's own float32 does"): for every parameter tensor,
vdnn's norm-wise relative error against float64, ||g - g64|| / ||g64||, is at most FACTOR = 10 times
PyTorch float32's for that tensor or PyTorch float32's median over all tensors, whichever is larger
(floor FLOOR = 1e-6), and likewise the loss's error. The median keeps a tensor where PyTorch's own
rounding happened to cancel from setting the bar below float32's typical error: in a network whose
gradients are ill-conditioned at initialization (RegNetY-16GF at 32x32: about 5e-3 for both through
the third stage, then PyTorch's falls to 4e-5 on the fourth stage's tensors, vdnn's to 3e-4) which
tensors land lucky is chance.
Exit status 0: passed; 1: a check failed; 2: usage; 77: skipped (torch, torchvision or safetensors
missing)."""
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_checkpoint_test  # noqa: E402  pylint: disable=wrong-import-position
import torch_optimizer_test as batch_io  # noqa: E402  pylint: disable=wrong-import-position

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "api"))
import torch_predict_test  # noqa: E402  pylint: disable=wrong-import-position

LR = 2.0 ** 20
FACTOR = 10.0
FLOOR = 1e-6
SIDE = 32
WORST_SHOWN = 5
RUN_TIMEOUT_S = 900
RANDOM_LAYERS = ("stochastic_depth", "dropout")


class Failure(Exception):
    pass


def without_randomness(node):
    """The config (parsed JSON) with every stochastic_depth and dropout layer at p = 0."""
    if isinstance(node, list):
        return [without_randomness(item) for item in node]
    if not isinstance(node, dict):
        return node
    copy = {key: without_randomness(value) for key, value in node.items()}
    if copy.get("type") in RANDOM_LAYERS and "p" in copy:
        copy["p"] = 0.0
    return copy


def with_classes(node, classes, wanted):
    """The config's layers with each linear of `classes` outputs (the classifier) at `wanted`."""
    if isinstance(node, list):
        return [with_classes(item, classes, wanted) for item in node]
    if not isinstance(node, dict):
        return node
    copy = {key: with_classes(value, classes, wanted) for key, value in node.items()}
    if copy.get("type") == "linear" and copy.get("out_features") == classes:
        copy["out_features"] = wanted
    return copy


def write_config(source, network, path):
    """The config for CIFAR-10's batch: 32x32, 10 classes, no randomness."""
    with open(os.path.join(source, "configs", f"{network}.json"), encoding="utf-8") as f:
        config = without_randomness(json.load(f))
    config["input"]["height"] = config["input"]["width"] = SIDE
    config["layers"] = with_classes(config["layers"], config["num_classes"], batch_io.CLASSES)
    if "templates" in config:
        config["templates"] = with_classes(config["templates"], config["num_classes"],
                                           batch_io.CLASSES)
    config["num_classes"] = batch_io.CLASSES
    with open(path, "w", encoding="utf-8") as f:
        json.dump(config, f)


def initial_model(torch, torchvision, network):
    torch.manual_seed(0)
    model = getattr(torchvision.models, network)(num_classes=batch_io.CLASSES)
    generator = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for key, p in model.named_parameters():
            if key.endswith("layer_scale"):
                p.copy_(torch.rand(p.shape, generator=generator) * 0.2 + 0.1)
    for m in model.modules():
        if isinstance(m, (torch.nn.Dropout, torchvision.ops.StochasticDepth)):
            m.p = 0.0
    return model


def vdnn_gradients(vdnn, config, data, init, out, torch, torch_names, network, w0):
    """(loss, {torchvision key: float64 gradient}) of vdnn's first step."""
    command = [vdnn, "train", "--config", config, "--batch", str(batch_io.BATCH), "--iters", "1",
               "--data", "cifar10:" + data, "--augment", "none", "--deterministic", "--math",
               "fp32", "--schedule", "constant", "--optimizer", "sgd", "--momentum", "0",
               "--weight-decay", "0", "--lr", repr(LR), "--init-from", init,
               "--checkpoint-every", "1", "--out", out]
    print("running:", " ".join(command), flush=True)
    run = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         timeout=RUN_TIMEOUT_S, check=False)
    if run.returncode != 0:
        raise Failure(f"vdnn train exited with {run.returncode}:\n{run.stdout[-3000:]}")
    with open(os.path.join(out, "metrics.jsonl"), encoding="utf-8") as f:
        loss = [json.loads(line)["loss"] for line in f if line.strip()][0]
    tensors, _ = torch_checkpoint_test.load(
        os.path.join(out, "checkpoints", "iter-000000001.safetensors"), torch)
    names = torch_names.rename_to_vdnn(network, w0).keys()
    w1 = torch_names.rename(network, {name: tensors[name] for name in names})
    return loss, {key: (w0[key].double() - w1[key].double()) / LR for key in w0}


def torch_gradients(torch, model, init, x, y, dtype):
    """(loss, {key: float64 gradient on the CPU}) of PyTorch's first step in `dtype`."""
    model.load_state_dict(init)
    model = model.to(device=x.device, dtype=dtype).train()
    model.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x.to(dtype)), y)
    loss.backward()
    return float(loss.detach()), {k: p.grad.detach().to("cpu", torch.float64)
                         for k, p in model.named_parameters()}


def relative(value, reference):
    return float((value - reference).norm() / reference.norm())


def compare(network, vdnn, torch32, torch64):
    """Per parameter tensor and for the loss, the errors and the bound; returns the failure
    lines."""
    errors = {}  # name -> (vdnn's error, PyTorch float32's)
    for key, reference in torch64[1].items():
        if float(reference.norm()) > 0.0:
            errors[key] = (relative(vdnn[1][key], reference), relative(torch32[1][key], reference))
    typical = statistics.median(theirs for _, theirs in errors.values())
    errors["loss"] = (abs(vdnn[0] - torch64[0]) / abs(torch64[0]),
                      abs(torch32[0] - torch64[0]) / abs(torch64[0]))
    rows = sorted(((ours / (FACTOR * max(theirs, typical, FLOOR)), key, ours, theirs)
                   for key, (ours, theirs) in errors.items()), reverse=True)
    print(f"{network}: {len(rows) - 1} parameter tensors and the loss (float64 loss "
          f"{torch64[0]:.6f}); PyTorch float32's median error {typical:.3e}; worst against the "
          f"bound ({FACTOR:g}x the larger of PyTorch float32's error and its median, floor "
          f"{FLOOR:g}):")
    for ratio, key, ours, theirs in rows[:WORST_SHOWN]:
        print(f"  {key}: vdnn {ours:.3e}, PyTorch float32 {theirs:.3e} ({ratio:.2f} of the bound)")
    print(f"  largest over all tensors: vdnn {max(r[2] for r in rows):.3e}, PyTorch float32 "
          f"{max(r[3] for r in rows):.3e}")
    return [f"{network}: {key}: vdnn's error against float64 is {ours:.3e}, PyTorch float32's "
            f"{theirs:.3e}" for ratio, key, ours, theirs in rows if ratio > 1.0]


def check(network, vdnn, source, tmp, torch, torchvision, torch_names):
    import safetensors.torch  # pylint: disable=import-outside-toplevel
    config = os.path.join(tmp, f"{network}-{SIDE}.json")
    write_config(source, network, config)
    data = os.path.join(tmp, "cifar")
    os.makedirs(data)
    images, labels = batch_io.write_cifar(os.path.join(data, "data_batch_1.bin"))
    model = initial_model(torch, torchvision, network)
    w0 = {k: v.detach().clone() for k, v in model.state_dict().items()}
    init = os.path.join(tmp, "init.safetensors")
    safetensors.torch.save_file({k: v.contiguous() for k, v in
                                 torch_names.rename_to_vdnn(network, w0).items()}, init)
    params = {k for k, _ in model.named_parameters()}
    ours = vdnn_gradients(vdnn, config, data, init, os.path.join(tmp, "vdnn"), torch, torch_names,
                          network, {k: v for k, v in w0.items() if k in params})
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x, y = batch_io.batch_tensors(torch, images, labels, device)
    torch32 = torch_gradients(torch, model, w0, x, y, torch.float32)
    torch64 = torch_gradients(torch, model, w0, x, y, torch.float64)
    return compare(network, ours, torch32, torch64)


def main(argv):
    started = torch_predict_test.start_torchvision(argv, 4, __doc__)
    if isinstance(started, int):
        return started
    torch, torchvision = started
    vdnn, source = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    network = argv[3]
    sys.path.insert(0, os.path.join(source, "tools"))
    import torch_names  # pylint: disable=import-outside-toplevel
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.deterministic = True
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}; PyTorch on "
          f"{'cuda' if torch.cuda.is_available() else 'cpu'}")
    with tempfile.TemporaryDirectory(prefix=f"vdnn-gradient-oracle-{network}-") as tmp:
        try:
            failures = check(network, vdnn, source, tmp, torch, torchvision, torch_names)
        except (Failure, batch_io.Failure, torch_checkpoint_test.Failure, ValueError, KeyError,
                RuntimeError, subprocess.TimeoutExpired, OSError) as e:
            failures = [f"{network}: {e!r}"]
    for line in failures:
        print("FAILED:", line)
    print(f"float64 gradient oracle, {network}:", "FAILED" if failures else "passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
