#!/usr/bin/env python3
"""torch_names.py NETWORK IN.safetensors OUT.safetensors: renames the tensors of a vdnn
checkpoint to the state_dict keys of the torchvision module of the same network (README,
"Checkpoint names and PyTorch"): the ResNets keep theirs, vgg16, alexnet, googlenet and
densenet121/169/201 are mapped by rule. The optimizer's tensors are renamed alike
(optimizer.<key>.momentum_buffer, or AdamW's exp_avg, exp_avg_sq and step); pass --drop-optimizer to leave them out, so that the file
loads with load_state_dict(strict=True). NETWORK is the config's "name" ("vgg16"); the command
needs the safetensors package and torch. As a module: torchvision_key(network, name) and
rename(network, tensors), which need neither."""
import re
import sys

PARAMS = ("weight", "bias", "running_mean", "running_var", "num_batches_tracked")
OPTIMIZER = re.compile(r"^optimizer\.(.+)\.(momentum_buffer|exp_avg|exp_avg_sq|step)$")

# vgg16: the index in torchvision's `features` of the first conv of each block; a block's convs
# are 2 apart (conv, ReLU), and a max-pool follows each block.
VGG16_BLOCK_START = {1: 0, 2: 5, 3: 10, 4: 17, 5: 24}
VGG16_LAYERS = {"fc1": "classifier.0", "fc2": "classifier.3", "fc3": "classifier.6"}
ALEXNET_LAYERS = {"conv1.0.conv": "features.0", "conv2.0.conv": "features.3",
                  "conv3.0.conv": "features.6", "conv4.0.conv": "features.8",
                  "conv4.1.conv": "features.10", "classifier.0.fc": "classifier.1",
                  "classifier.1.fc": "classifier.4", "fc3": "classifier.6"}
DENSENET_LAYERS = {"conv1": "features.conv0", "bn1": "features.norm0", "bn": "features.norm5",
                   "fc": "classifier"}
# googlenet: a layer of an inception module -> its path in torchvision's Inception.
GOOGLENET_BRANCHES = {"branch1": "branch1.conv", "branch1_bn": "branch1.bn",
                      "branch4": "branch4.1.conv", "branch4_bn": "branch4.1.bn"}
for b in (2, 3):
    GOOGLENET_BRANCHES.update({f"branch{b}_reduce": f"branch{b}.0.conv",
                               f"branch{b}_reduce_bn": f"branch{b}.0.bn",
                               f"branch{b}": f"branch{b}.1.conv",
                               f"branch{b}_bn": f"branch{b}.1.bn"})


def _vgg16(layer):
    match = re.fullmatch(r"block([1-5])\.(\d+)\.conv", layer)
    if match:
        return f"features.{VGG16_BLOCK_START[int(match.group(1))] + 2 * int(match.group(2))}"
    return VGG16_LAYERS.get(layer)


def _densenet(layer):
    match = re.fullmatch(r"dense(\d+)\.(\d+)\.(norm1|conv1|norm2|conv2)", layer)
    if match:
        block, index, part = match.groups()
        return f"features.denseblock{block}.denselayer{int(index) + 1}.{part}"
    match = re.fullmatch(r"transition(\d+)\.0\.(norm|conv)", layer)
    if match:
        return f"features.transition{match.group(1)}.{match.group(2)}"
    return DENSENET_LAYERS.get(layer)


def _googlenet(layer):
    match = re.fullmatch(r"conv([1-3])\.0\.(conv|bn)", layer)
    if match:
        return f"conv{match.group(1)}.{match.group(2)}"
    match = re.fullmatch(r"(inception[345][a-e])\.0\.(\w+)", layer)
    if match and match.group(2) in GOOGLENET_BRANCHES:
        return f"{match.group(1)}.{GOOGLENET_BRANCHES[match.group(2)]}"
    return "fc" if layer == "fc" else None


def _layer_rule(network):
    if re.fullmatch(r"resnet\d+(-cifar)?", network):
        return lambda layer: layer
    if network == "vgg16":
        return _vgg16
    if network == "alexnet":
        return ALEXNET_LAYERS.get
    if network in ("densenet121", "densenet169", "densenet201"):
        return _densenet
    if network == "googlenet":
        return _googlenet
    raise ValueError(f"no torchvision names known for network {network!r}")


def torchvision_key(network, name):
    """The torchvision state_dict key of vdnn tensor `name` ("block1.0.conv.weight" ->
    "features.0.weight" for vgg16), optimizer.<name>.<state> (momentum_buffer, AdamW's exp_avg,
    exp_avg_sq and step) renamed alike. Raises
    ValueError for an unknown network or a name the network's rule does not cover."""
    match = OPTIMIZER.fullmatch(name)
    if match:
        return f"optimizer.{torchvision_key(network, match.group(1))}.{match.group(2)}"
    layer, _, param = name.rpartition(".")
    key = _layer_rule(network)(layer) if param in PARAMS else None
    if key is None:
        raise ValueError(f"{network}: no torchvision name for {name!r}")
    return f"{key}.{param}"


def rename(network, tensors, drop_optimizer=False):
    """`tensors` (name -> anything) under torchvision's keys. Raises ValueError as
    torchvision_key, and when two names would map to one key."""
    renamed = {}
    for name, value in tensors.items():
        if drop_optimizer and name.startswith("optimizer."):
            continue
        key = torchvision_key(network, name)
        if key in renamed:
            raise ValueError(f"{network}: two tensors map to {key!r}")
        renamed[key] = value
    return renamed


def main(argv):
    args = [a for a in argv[1:] if a != "--drop-optimizer"]
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    from safetensors.torch import load_file, save_file
    network, source, target = args
    tensors = rename(network, load_file(source), "--drop-optimizer" in argv)
    save_file(tensors, target)
    print(f"{len(tensors)} tensors renamed for torchvision's {network}: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
