#!/usr/bin/env python3
"""torch_names.py [--to-vdnn] [--drop-optimizer] NETWORK IN.safetensors OUT.safetensors: renames
the tensors of a vdnn checkpoint to the state_dict keys of the torchvision module of the same
network (README, "Checkpoint names and PyTorch"), or with --to-vdnn a torchvision state_dict's
tensors to vdnn's names, which `vdnn train --init-from` and vdnn::Predictor read. The ResNets,
RegNets, EfficientNets, MobileNets and ConvNeXts keep their names, vgg16, alexnet, googlenet and
densenet121/169/201 are mapped by rule; ConvNeXt's pointwise convolutions are torchvision's
Linear layers, so their weights are reshaped between vdnn's [out, in, 1, 1] and [out, in]. The
optimizer's tensors are renamed alike (optimizer.<key>.momentum_buffer, or AdamW's exp_avg,
exp_avg_sq and step); pass --drop-optimizer to leave them out, so that the file loads with
load_state_dict(strict=True). NETWORK is the config's "name" ("vgg16"); the command needs the
safetensors package and torch. As a module: torchvision_key(network, name), vdnn_key(network,
key), rename(network, tensors) and rename_to_vdnn(network, tensors), which need neither."""
import re
import sys

PARAMS = ("weight", "bias", "running_mean", "running_var", "num_batches_tracked", "layer_scale")
OPTIMIZER = re.compile(r"^optimizer\.(.+)\.(momentum_buffer|exp_avg|exp_avg_sq|step)$")
# Networks whose configs use torchvision's names as they are.
SAME_NAMES = re.compile(r"resnet\d+(-cifar)?|regnet_[xy]_\w+|convnext_(tiny|small|base|large)"
                        r"|efficientnet_b[0-7]|mobilenet_v2|mobilenet_v3_(large|small)")
# ConvNeXt's CNBlock: block.3 and block.5 are nn.Linear in torchvision, 1x1 convs in vdnn.
CONVNEXT = re.compile(r"convnext_(tiny|small|base|large)")
CONVNEXT_LINEAR = re.compile(r"features\.\d+\.\d+\.block\.[35]\.weight")

# vgg16: the index in torchvision's `features` of the first conv of each block and the block's
# convs, 2 apart (conv, ReLU); a max-pool follows each block.
VGG16_BLOCKS = {1: (0, 2), 2: (5, 2), 3: (10, 3), 4: (17, 3), 5: (24, 3)}
VGG16_LAYERS = {"fc1": "classifier.0", "fc2": "classifier.3", "fc3": "classifier.6"}
ALEXNET_LAYERS = {"conv1.0.conv": "features.0", "conv2.0.conv": "features.3",
                  "conv3.0.conv": "features.6", "conv4.0.conv": "features.8",
                  "conv4.1.conv": "features.10", "classifier.0.fc": "classifier.1",
                  "classifier.1.fc": "classifier.4", "fc3": "classifier.6"}
DENSENET_LAYERS = {"conv1": "features.conv0", "bn1": "features.norm0", "bn": "features.norm5",
                   "fc": "classifier"}
# googlenet: a layer of an inception module -> its path in torchvision's Inception.
GOOGLENET_INCEPTIONS = ("3a", "3b", "4a", "4b", "4c", "4d", "4e", "5a", "5b")
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
        start, convs = VGG16_BLOCKS[int(match.group(1))]
        index = int(match.group(2))
        return f"features.{start + 2 * index}" if index < convs else None
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


def _densenet_inverse(module):
    match = re.fullmatch(r"features\.denseblock(\d+)\.denselayer(\d+)\.(norm1|conv1|norm2|conv2)",
                         module)
    if match:
        block, index, part = match.groups()
        return f"dense{block}.{int(index) - 1}.{part}"
    match = re.fullmatch(r"features\.transition(\d+)\.(norm|conv)", module)
    if match:
        return f"transition{match.group(1)}.0.{match.group(2)}"
    return _inverse(DENSENET_LAYERS.keys(), DENSENET_LAYERS.get)(module)


def _googlenet(layer):
    match = re.fullmatch(r"conv([1-3])\.0\.(conv|bn)", layer)
    if match:
        return f"conv{match.group(1)}.{match.group(2)}"
    match = re.fullmatch(r"(inception[345][a-e])\.0\.(\w+)", layer)
    if match and match.group(2) in GOOGLENET_BRANCHES:
        return f"{match.group(1)}.{GOOGLENET_BRANCHES[match.group(2)]}"
    return "fc" if layer == "fc" else None


def _inverse(layers, forward):
    """The inverse of `forward` over the finite set `layers` of vdnn layer names."""
    return {forward(layer): layer for layer in layers}.get


def _vgg16_layers():
    return [f"block{b}.{i}.conv" for b, (_, convs) in VGG16_BLOCKS.items()
            for i in range(convs)] + list(VGG16_LAYERS)


def _googlenet_layers():
    return ([f"conv{k}.0.{part}" for k in (1, 2, 3) for part in ("conv", "bn")] +
            [f"inception{i}.0.{branch}" for i in GOOGLENET_INCEPTIONS
             for branch in GOOGLENET_BRANCHES] + ["fc"])


def _layer_rules(network):
    """(vdnn layer -> torchvision module, the inverse) of `network`; each returns None for a name
    it does not cover."""
    if SAME_NAMES.fullmatch(network):
        return (lambda layer: layer), (lambda module: module)
    if network == "vgg16":
        return _vgg16, _inverse(_vgg16_layers(), _vgg16)
    if network == "alexnet":
        return ALEXNET_LAYERS.get, _inverse(ALEXNET_LAYERS.keys(), ALEXNET_LAYERS.get)
    if network in ("densenet121", "densenet169", "densenet201"):
        return _densenet, _densenet_inverse
    if network == "googlenet":
        return _googlenet, _inverse(_googlenet_layers(), _googlenet)
    raise ValueError(f"no torchvision names known for network {network!r}")


def _map_key(network, name, rule):
    match = OPTIMIZER.fullmatch(name)
    if match:
        return f"optimizer.{_map_key(network, match.group(1), rule)}.{match.group(2)}"
    layer, _, param = name.rpartition(".")
    mapped = rule(layer) if param in PARAMS else None
    if mapped is None:
        raise ValueError(f"{network}: no counterpart for {name!r}")
    return f"{mapped}.{param}"


def torchvision_key(network, name):
    """The torchvision state_dict key of vdnn tensor `name` ("block1.0.conv.weight" ->
    "features.0.weight" for vgg16), optimizer.<name>.<state> (momentum_buffer, AdamW's exp_avg,
    exp_avg_sq and step) renamed alike. Raises
    ValueError for an unknown network or a name the network's rule does not cover."""
    return _map_key(network, name, _layer_rules(network)[0])


def vdnn_key(network, key):
    """The vdnn tensor name of torchvision state_dict key `key` (optimizer.<key>.<state> alike):
    the inverse of torchvision_key. Raises ValueError as torchvision_key."""
    return _map_key(network, key, _layer_rules(network)[1])


def _linear_as_conv(network, name):
    """Whether vdnn tensor `name` (a parameter, or its optimizer state but `step`) is a 1x1
    convolution's weight that torchvision holds as a Linear weight."""
    match = OPTIMIZER.fullmatch(name)
    if match and match.group(2) == "step":
        return False
    return bool(CONVNEXT.fullmatch(network) and
                CONVNEXT_LINEAR.fullmatch(match.group(1) if match else name))


def _to_linear(name, value):
    shape = tuple(value.shape)
    if len(shape) != 4 or shape[2:] != (1, 1):
        raise ValueError(f"{name}: shape {list(shape)}, expected [out, in, 1, 1]")
    return value.reshape(shape[:2])


def _to_conv(name, value):
    shape = tuple(value.shape)
    if len(shape) != 2:
        raise ValueError(f"{name}: shape {list(shape)}, expected a Linear weight [out, in]")
    return value.reshape(shape + (1, 1))


def _renamed(network, tensors, drop_optimizer, key_of, to_vdnn):
    renamed = {}
    for name, value in tensors.items():
        if drop_optimizer and name.startswith("optimizer."):
            continue
        key = key_of(network, name)
        vdnn_name = key if to_vdnn else name
        if _linear_as_conv(network, vdnn_name):
            value = _to_conv(name, value) if to_vdnn else _to_linear(name, value)
        if key in renamed:
            raise ValueError(f"{network}: two tensors map to {key!r}")
        renamed[key] = value
    return renamed


def rename(network, tensors, drop_optimizer=False):
    """`tensors` (vdnn name -> a tensor: anything with .shape and .reshape) under torchvision's
    keys, ConvNeXt's pointwise weights reshaped to [out, in]. Raises ValueError as
    torchvision_key, when two names would map to one key, and for a pointwise weight whose shape
    is not [out, in, 1, 1]."""
    return _renamed(network, tensors, drop_optimizer, torchvision_key, False)


def rename_to_vdnn(network, tensors, drop_optimizer=False):
    """The inverse of rename: torchvision's `tensors` (a state_dict) under vdnn's names, ConvNeXt's
    Linear weights reshaped to [out, in, 1, 1]. Raises ValueError as vdnn_key, when two keys would
    map to one name, and for such a Linear weight that is not 2-D."""
    return _renamed(network, tensors, drop_optimizer, vdnn_key, True)


def main(argv):
    flags = {"--drop-optimizer", "--to-vdnn"}
    args = [a for a in argv[1:] if a not in flags]
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    from safetensors.torch import load_file, save_file
    network, source, target = args
    convert = rename_to_vdnn if "--to-vdnn" in argv else rename
    tensors = convert(network, load_file(source), "--drop-optimizer" in argv)
    save_file(tensors, target)
    side = "vdnn" if "--to-vdnn" in argv else "torchvision"
    print(f"{len(tensors)} tensors renamed for {side}'s {network}: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
