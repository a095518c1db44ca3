#!/usr/bin/env python3
"""torch_zoo_interop_test.py VDNN PREDICT_LOGITS SOURCE_DIR NETWORK: configs/NETWORK.json and
torchvision.models.NETWORK() exchange weights both ways through tools/torch_names.py.
vdnn -> torchvision: `vdnn train` STEPS steps of batch 2 on the CPU with a checkpoint, renamed
(rename: ConvNeXt's pointwise weights become Linear weights) and checked as
tests/models/train/torch_checkpoint_test.py checks the zoo: every state_dict key with its shape
and dtype, one momentum buffer per parameter, load_state_dict(strict=True), the loaded values and
a finite eval forward. torchvision -> vdnn: a torchvision module's state_dict (random weights,
batch-norm statistics and layer scales made non-trivial) under vdnn's names (rename_to_vdnn, which
must give exactly the checkpoint's tensor names), read by vdnn::Predictor as `--init-from` reads
it, whose logits must be within 10x PyTorch's own float32 error of the float64 forward
(tests/api/torch_predict_test.py's bound). CTest runs it once per network (label torch).
Exit status 0: passed; 1: a check failed; 2: usage; 77: skipped (torch or torchvision missing)."""
import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, os.pardir, "models", "train"))
import torch_checkpoint_test  # noqa: E402  pylint: disable=wrong-import-position
import torch_predict_test  # noqa: E402  pylint: disable=wrong-import-position

STEPS = 2
BATCH = 2


def to_torchvision(network, config, vdnn, out, torch, torchvision, torch_names):
    """vdnn -> torchvision; returns (failure lines, the checkpoint's non-optimizer names)."""
    path = torch_checkpoint_test.train(vdnn, config, out, STEPS, BATCH)
    tensors, metadata = torch_checkpoint_test.load(path, torch)
    renamed = torch_names.rename(network, tensors)
    with open(config, encoding="utf-8") as f:
        spec = json.load(f)
    failures = torch_checkpoint_test.check(network, getattr(torchvision.models, network)(),
                                           renamed, metadata, STEPS, spec["input"]["height"],
                                           spec["num_classes"], torch)
    return failures, [n for n in tensors if not n.startswith("optimizer.")]


def to_vdnn(network, config, names, predict, out, torch, torchvision, torch_names):
    """torchvision -> vdnn: the Predictor's logits on the renamed state_dict."""
    import safetensors.torch  # pylint: disable=import-outside-toplevel
    module = getattr(torchvision.models, network)()
    generator = torch.Generator().manual_seed(7)
    torch_predict_test.perturb(module, torch, generator)
    weights = torch_predict_test.vdnn_weights(network, module, names, torch_names)
    checkpoint = os.path.join(out, "torchvision.safetensors")
    safetensors.torch.save_file(weights, checkpoint)
    with open(config, encoding="utf-8") as f:
        side = json.load(f)["input"]["height"]
    torch_predict_test.compare_logits(network, module, predict, config, checkpoint, out, torch,
                                      generator, side)


def main(argv):
    started = torch_predict_test.start_torchvision(argv, 5, __doc__)
    if isinstance(started, int):
        return started
    torch, torchvision = started
    vdnn, predict, source = (os.path.abspath(a) for a in argv[1:4])
    network = argv[4]
    sys.path.insert(0, os.path.join(source, "tools"))
    import torch_names  # pylint: disable=import-outside-toplevel
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}: {network}")
    torch.manual_seed(0)
    config = os.path.join(source, "configs", f"{network}.json")
    failures = []
    with tempfile.TemporaryDirectory(prefix=f"vdnn-interop-{network}-") as out:
        try:
            failures, names = to_torchvision(network, config, vdnn, out, torch, torchvision,
                                             torch_names)
            to_vdnn(network, config, names, predict, out, torch, torchvision, torch_names)
        except (torch_checkpoint_test.Failure, torch_predict_test.Failure, ValueError,
                RuntimeError, subprocess.TimeoutExpired, OSError) as e:
            failures.append(f"{network}: {e}")
    for line in failures:
        print("FAILED:", line)
    print(f"torchvision interop of {network}:", "FAILED" if failures else "passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
