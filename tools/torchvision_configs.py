#!/usr/bin/env python3
"""torchvision_configs.py [--check] [CONFIG_DIR]: writes the zoo configs whose layers follow a
torchvision builder one module at a time (convnext_tiny, convnext_base, regnet_y_16gf) into
CONFIG_DIR (default: the configs/ beside this script), tensor names as torchvision's state_dict.
Their layer lists are long and irregular (ConvNeXt's stochastic depth grows block by block,
RegNet's names are `blockS-i`), which config templates cannot express, so they are generated
here rather than kept by hand. --check writes nothing and exits 1 when a file differs from what
this script would write (a CPU ctest runs it). Needs neither torch nor torchvision."""
import json
import math
import os
import sys

# ConvNeXt: torchvision's CNBlockConfig lists (dims per stage, blocks per stage) and its
# stochastic depth probability, reached linearly at the last block.
CONVNEXT = {
    "convnext_tiny": ((96, 192, 384, 768), (3, 3, 9, 3), 0.1, "28,589,128"),
    "convnext_base": ((128, 256, 512, 1024), (3, 3, 27, 3), 0.5, "88,591,464"),
}
# RegNetY: torchvision's BlockParams.from_init_params(depth, w_0, w_a, w_m, group_width,
# se_ratio=0.25) arguments.
REGNET = {
    "regnet_y_16gf": ((18, 200, 106.23, 2.48, 112), "83,590,140"),
}
REGNET_QUANT = 8
REGNET_STEM = 32
SE_RATIO = 0.25


def number(value):
    """JSON text of a number as the configs write it: 1e-6, not Python's 1e-06."""
    text = json.dumps(value)
    mantissa, e, exponent = text.partition("e")
    return f"{mantissa}e{int(exponent)}" if e else text


def layer(name, kind, **attributes):
    parts = [f'"name": {json.dumps(name)}', f'"type": {json.dumps(kind)}']
    for key, value in attributes.items():
        text = number(value) if isinstance(value, float) else json.dumps(value)
        parts.append(f"{json.dumps(key)}: {text}")
    return "{" + ", ".join(parts) + "}"


def document(name, description, layers):
    head = [f'  "$schema": "schema/network.schema.json",',
            f'  "description": {json.dumps(description)},',
            f'  "name": {json.dumps(name)},',
            '  "input": {"channels": 3, "height": 224, "width": 224},',
            '  "num_classes": 1000,',
            '  "layers": [']
    body = ",\n".join("    " + text for text in layers)
    return "{\n" + "\n".join(head) + "\n" + body + "\n  ]\n}\n"


def convnext_block(prefix, dim, input_name, p):
    """torchvision's CNBlock; returns (layers, output name)."""
    layers = [
        layer(f"{prefix}.block.0", "conv2d", out_channels=dim, kernel=7, padding=3, groups=dim,
              bias=True),
        layer(f"{prefix}.block.2", "layernorm2d", eps=1e-6),
        layer(f"{prefix}.block.3", "conv2d", out_channels=4 * dim, kernel=1, bias=True),
        layer(f"{prefix}.block.4", "gelu"),
        layer(f"{prefix}.block.5", "conv2d", out_channels=dim, kernel=1, bias=True),
        layer(prefix, "layer_scale"),
        layer(f"{prefix}.stochastic_depth", "stochastic_depth", p=p),
        layer(f"{prefix}.add", "add", inputs=[input_name, f"{prefix}.stochastic_depth"]),
    ]
    return layers, f"{prefix}.add"


def convnext(name):
    dims, depths, sd_prob, count = CONVNEXT[name]
    layers = [layer("features.0.0", "conv2d", out_channels=dims[0], kernel=4, stride=4,
                    bias=True),
              layer("features.0.1", "layernorm2d", eps=1e-6)]
    output, block_id, total = "features.0.1", 0, sum(depths)
    for stage, (dim, depth) in enumerate(zip(dims, depths)):
        if stage > 0:
            down = f"features.{2 * stage}"
            layers += [layer(f"{down}.0", "layernorm2d", eps=1e-6),
                       layer(f"{down}.1", "conv2d", out_channels=dim, kernel=2, stride=2,
                             bias=True)]
            output = f"{down}.1"
        for b in range(depth):
            # torchvision: sd_prob = stochastic_depth_prob * stage_block_id / (total - 1)
            p = sd_prob * block_id / (total - 1.0)
            block, output = convnext_block(f"features.{2 * stage + 1}.{b}", dim, output, p)
            layers += block
            block_id += 1
    layers += [layer("avgpool", "global_avgpool"),
               layer("classifier.0", "layernorm2d", eps=1e-6),
               layer("classifier.1", "flatten"),
               layer("classifier.2", "linear", out_features=1000),
               layer("loss", "softmax_cross_entropy")]
    stages = ", ".join(str(d) for d in depths)
    description = (
        f"torchvision {name} for 224x224 ImageNet: a 4x4 stride-4 stem, stages of {stages} "
        "CNBlocks (7x7 depthwise conv, layernorm2d, the two Linear layers as 1x1 convolutions "
        "with bias, GELU, layer_scale, stochastic_depth with torchvision's linear schedule to "
        f"{sd_prob}, residual add), each later stage after a layernorm2d and a 2x2 stride-2 "
        "conv; tensor names as its state_dict's (the 1x1 convolutions' weights are its Linear "
        f"weights with two trailing 1s); {count} parameters.")
    return document(name, description, layers)


def make_divisible(value, divisor):
    """torchvision's _make_divisible (min_value = divisor)."""
    rounded = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


def regnet_stages(depth, w_0, w_a, w_m, group_width):
    """torchvision's BlockParams.from_init_params with bottleneck multiplier 1: [(width,
    blocks, group width)] per stage."""
    widths = []
    for i in range(depth):
        capacity = round(math.log((i * w_a + w_0) / w_0) / math.log(w_m))
        widths.append(int(round(w_0 * w_m ** capacity / REGNET_QUANT) * REGNET_QUANT))
    stages = []
    for width in widths:
        if stages and stages[-1][0] == width:
            stages[-1][1] += 1
        else:
            stages.append([width, 1])
    adjusted = []
    for width, blocks in stages:
        group = min(group_width, width)
        adjusted.append((make_divisible(width, group), blocks, group))
    return adjusted


def regnet_block(prefix, width_in, width, stride, group, input_name):
    """torchvision's ResBottleneckBlock with squeeze-excitation; returns (layers, output)."""
    se = f"{prefix}.f.se"
    layers = [
        layer(f"{prefix}.f.a.0", "conv2d", out_channels=width, kernel=1),
        layer(f"{prefix}.f.a.1", "batchnorm2d"),
        layer(f"{prefix}.f.a.2", "relu"),
        layer(f"{prefix}.f.b.0", "conv2d", out_channels=width, kernel=3, stride=stride,
              padding=1, groups=width // group),
        layer(f"{prefix}.f.b.1", "batchnorm2d"),
        layer(f"{prefix}.f.b.2", "relu"),
        layer(f"{se}.avgpool", "global_avgpool"),
        layer(f"{se}.fc1", "conv2d", out_channels=int(round(SE_RATIO * width_in)), kernel=1,
              bias=True),
        layer(f"{se}.activation", "relu"),
        layer(f"{se}.fc2", "conv2d", out_channels=width, kernel=1, bias=True),
        layer(f"{se}.scale_activation", "sigmoid"),
        layer(f"{se}.mul", "mul", inputs=[f"{prefix}.f.b.2", f"{se}.scale_activation"]),
        layer(f"{prefix}.f.c.0", "conv2d", out_channels=width, kernel=1),
        layer(f"{prefix}.f.c.1", "batchnorm2d"),
    ]
    shortcut = input_name
    if width_in != width or stride != 1:
        layers += [layer(f"{prefix}.proj.0", "conv2d", inputs=[input_name], out_channels=width,
                         kernel=1, stride=stride),
                   layer(f"{prefix}.proj.1", "batchnorm2d")]
        shortcut = f"{prefix}.proj.1"
    layers += [layer(f"{prefix}.add", "add", inputs=[shortcut, f"{prefix}.f.c.1"]),
               layer(f"{prefix}.activation", "relu")]
    return layers, f"{prefix}.activation"


def regnet(name):
    arguments, count = REGNET[name]
    stages = regnet_stages(*arguments)
    layers = [layer("stem.0", "conv2d", out_channels=REGNET_STEM, kernel=3, stride=2, padding=1),
              layer("stem.1", "batchnorm2d"),
              layer("stem.2", "relu")]
    output, width_in = "stem.2", REGNET_STEM
    for s, (width, blocks, group) in enumerate(stages, start=1):
        for i in range(blocks):
            prefix = f"trunk_output.block{s}.block{s}-{i}"
            block, output = regnet_block(prefix, width_in, width, 2 if i == 0 else 1, group,
                                         output)
            layers += block
            width_in = width
    layers += [layer("avgpool", "global_avgpool"),
               layer("flatten", "flatten"),
               layer("fc", "linear", out_features=1000),
               layer("loss", "softmax_cross_entropy")]
    widths = ", ".join(str(w) for w, _, _ in stages)
    depths = ", ".join(str(b) for _, b, _ in stages)
    description = (
        f"torchvision {name} for 224x224 ImageNet: a 3x3 stride-2 stem of {REGNET_STEM} "
        f"channels, stages of {depths} RegNetY blocks of widths {widths} (1x1 conv, grouped "
        f"3x3 conv of group width {stages[0][2]}, squeeze-excitation to {SE_RATIO:g} of the "
        "block's input width, 1x1 conv, each conv with batch norm; a 1x1 conv + batch norm "
        "projection where the shape changes; ReLU after the residual add); tensor names as its "
        f"state_dict's; {count} parameters.")
    return document(name, description, layers)


def configs():
    """{file name: text} of every config this script writes."""
    texts = {f"{name}.json": convnext(name) for name in CONVNEXT}
    texts.update({f"{name}.json": regnet(name) for name in REGNET})
    return texts


def main(argv):
    args = argv[1:]
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    if len(args) > 1:
        print(__doc__, file=sys.stderr)
        return 2
    directory = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  os.pardir, "configs")
    stale = []
    for file_name, text in configs().items():
        path = os.path.join(directory, file_name)
        if check:
            try:
                with open(path, encoding="utf-8") as f:
                    if f.read() != text:
                        stale.append(file_name)
            except FileNotFoundError:
                stale.append(file_name)
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            print(f"wrote {os.path.normpath(path)}")
    if stale:
        print(f"not what tools/torchvision_configs.py writes (run it): {', '.join(stale)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
