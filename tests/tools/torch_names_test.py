#!/usr/bin/env python3
"""torch_names_test.py: the rules of tools/torch_names.py, without torch: names each way for
every network family, the inverse undoing the forward mapping, ConvNeXt's pointwise weights
reshaped between [out, in, 1, 1] and [out, in] (the optimizer's buffers alike), and the errors.
A CPU ctest (label cpu)."""
import math
import os
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir,
                                "tools"))
import torch_names  # noqa: E402  pylint: disable=wrong-import-position


class Tensor:
    """The part of a torch tensor rename uses: a shape, and reshape to one of as many elements."""

    def __init__(self, *shape):
        self.shape = tuple(shape)

    def reshape(self, shape):
        if math.prod(shape) != math.prod(self.shape):
            raise ValueError(f"cannot reshape {self.shape} to {shape}")
        return Tensor(*shape)


# (network, vdnn name, torchvision key)
PAIRS = [
    ("resnet50", "layer1.0.downsample.0.weight", "layer1.0.downsample.0.weight"),
    ("vgg16", "block1.0.conv.weight", "features.0.weight"),
    ("vgg16", "block4.2.conv.bias", "features.21.bias"),
    ("vgg16", "fc3.weight", "classifier.6.weight"),
    ("alexnet", "conv4.1.conv.weight", "features.10.weight"),
    ("densenet121", "dense2.0.norm1.running_var",
     "features.denseblock2.denselayer1.norm1.running_var"),
    ("densenet121", "transition3.0.conv.weight", "features.transition3.conv.weight"),
    ("densenet121", "bn.num_batches_tracked", "features.norm5.num_batches_tracked"),
    ("googlenet", "inception4e.0.branch3_reduce_bn.bias", "inception4e.branch3.0.bn.bias"),
    ("googlenet", "conv2.0.conv.weight", "conv2.conv.weight"),
    ("convnext_base", "features.5.26.layer_scale", "features.5.26.layer_scale"),
    ("convnext_tiny", "features.1.0.block.3.weight", "features.1.0.block.3.weight"),
    ("regnet_y_16gf", "trunk_output.block3.block3-10.f.se.fc1.bias",
     "trunk_output.block3.block3-10.f.se.fc1.bias"),
    ("efficientnet_b0", "features.1.0.block.1.fc1.weight", "features.1.0.block.1.fc1.weight"),
    ("efficientnet_b7", "features.8.0.1.running_mean", "features.8.0.1.running_mean"),
    ("mobilenet_v2", "features.18.0.weight", "features.18.0.weight"),
    ("mobilenet_v3_large", "classifier.3.weight", "classifier.3.weight"),
    ("vgg16", "optimizer.fc1.weight.momentum_buffer",
     "optimizer.classifier.0.weight.momentum_buffer"),
    ("googlenet", "optimizer.fc.bias.exp_avg_sq", "optimizer.fc.bias.exp_avg_sq"),
]


class NamesTest(unittest.TestCase):
    def test_torchvision_keys(self):
        for network, name, key in PAIRS:
            with self.subTest(network=network, name=name):
                self.assertEqual(torch_names.torchvision_key(network, name), key)

    def test_vdnn_keys_invert_them(self):
        for network, name, key in PAIRS:
            with self.subTest(network=network, key=key):
                self.assertEqual(torch_names.vdnn_key(network, key), name)

    def test_every_vgg16_googlenet_and_alexnet_layer_round_trips(self):
        # pylint: disable=protected-access
        for network, layers in (("vgg16", torch_names._vgg16_layers()),
                                ("googlenet", torch_names._googlenet_layers()),
                                ("alexnet", list(torch_names.ALEXNET_LAYERS))):
            keys = {torch_names.torchvision_key(network, f"{layer}.weight") for layer in layers}
            self.assertEqual(len(keys), len(layers), network)  # one key per layer
            for layer in layers:
                key = torch_names.torchvision_key(network, f"{layer}.weight")
                self.assertEqual(torch_names.vdnn_key(network, key), f"{layer}.weight")

    def test_unknown_names_and_networks_are_errors(self):
        with self.assertRaisesRegex(ValueError, "network 'lenet'"):
            torch_names.torchvision_key("lenet", "fc.weight")
        with self.assertRaisesRegex(ValueError, "vgg16: no counterpart for 'block1.2.conv.weight'"):
            torch_names.torchvision_key("vgg16", "block1.2.conv.weight")  # block 1 has 2 convs
        with self.assertRaisesRegex(ValueError, "no counterpart for 'features.1.weight'"):
            torch_names.vdnn_key("vgg16", "features.1.weight")  # a ReLU in torchvision
        with self.assertRaisesRegex(ValueError, "no counterpart"):
            torch_names.vdnn_key("convnext_tiny", "features.1.0.block.3.scale")


class RenameTest(unittest.TestCase):
    def test_convnext_pointwise_weights_become_linear_weights_and_back(self):
        vdnn = {"features.1.0.block.3.weight": Tensor(384, 96, 1, 1),
                "features.1.0.block.3.bias": Tensor(384),
                "features.1.0.block.0.weight": Tensor(96, 1, 7, 7),
                "features.1.0.layer_scale": Tensor(96, 1, 1),
                "optimizer.features.1.0.block.5.weight.exp_avg": Tensor(96, 384, 1, 1),
                "optimizer.features.1.0.block.5.weight.step": Tensor(),
                "classifier.2.weight": Tensor(1000, 768)}
        renamed = torch_names.rename("convnext_tiny", vdnn)
        shapes = {k: v.shape for k, v in renamed.items()}
        self.assertEqual(shapes, {"features.1.0.block.3.weight": (384, 96),
                                  "features.1.0.block.3.bias": (384,),
                                  "features.1.0.block.0.weight": (96, 1, 7, 7),
                                  "features.1.0.layer_scale": (96, 1, 1),
                                  "optimizer.features.1.0.block.5.weight.exp_avg": (96, 384),
                                  "optimizer.features.1.0.block.5.weight.step": (),
                                  "classifier.2.weight": (1000, 768)})
        back = torch_names.rename_to_vdnn("convnext_tiny", renamed)
        self.assertEqual({k: v.shape for k, v in back.items()},
                         {k: v.shape for k, v in vdnn.items()})

    def test_other_networks_keep_their_shapes(self):
        tensors = {"trunk_output.block1.block1-0.f.c.0.weight": Tensor(224, 224, 1, 1)}
        renamed = torch_names.rename("regnet_y_16gf", tensors)
        self.assertEqual(renamed["trunk_output.block1.block1-0.f.c.0.weight"].shape,
                         (224, 224, 1, 1))

    def test_drop_optimizer_leaves_out_the_optimizer_both_ways(self):
        tensors = {"fc1.weight": Tensor(4096, 25088),
                   "optimizer.fc1.weight.momentum_buffer": Tensor(4096, 25088)}
        self.assertEqual(list(torch_names.rename("vgg16", tensors, drop_optimizer=True)),
                         ["classifier.0.weight"])
        state = {"classifier.0.weight": Tensor(4096, 25088),
                 "optimizer.classifier.0.weight.momentum_buffer": Tensor(4096, 25088)}
        self.assertEqual(list(torch_names.rename_to_vdnn("vgg16", state, drop_optimizer=True)),
                         ["fc1.weight"])

    def test_wrong_pointwise_shapes_are_errors(self):
        with self.assertRaisesRegex(ValueError, r"expected \[out, in, 1, 1\]"):
            torch_names.rename("convnext_base", {"features.1.0.block.5.weight": Tensor(128, 512)})
        with self.assertRaisesRegex(ValueError, r"expected a Linear weight"):
            torch_names.rename_to_vdnn("convnext_base",
                                       {"features.1.0.block.5.weight": Tensor(128, 512, 1, 1)})


if __name__ == "__main__":
    unittest.main()
