// The EfficientNet compound-scaling family (Tan & Le 2019) as torchvision builds it: configs of
// any width, depth and resolution, and torchvision's B0-B7, as `vdnn gen efficientnet` prints them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vdnn::models {

/// One member of the family: torchvision's EfficientNet(width_mult, depth_mult) at a resolution.
struct EfficientNetOptions {
  double width = 1.0;               // channels: _make_divisible(c * width, 8)
  double depth = 1.0;               // blocks per stage: ceil(n * depth)
  std::int64_t resolution = 224;    // the input's height and width
  double dropout = 0.2;             // before the classifier
  std::int64_t num_classes = 1000;  // the classifier's outputs
  // BatchNorm2d(eps=1e-3, momentum=0.01), torchvision's B5-B7 (their weights came from
  // TensorFlow); else PyTorch's defaults (eps=1e-5, momentum=0.1), as its B0-B4 and its class.
  bool tf_batch_norm = false;
  // The preset these options started from (efficientnet_preset sets it), which names the config
  // "efficientnet_bN"; empty: "efficientnet_w<W>_d<D>", each '.' written 'p' ("..._w1p2_d1p4").
  std::string preset;
};

/// torchvision's efficientnet_bN for `preset` "b0".."b7": width, depth, resolution (its weights'
/// crop size), dropout and batch norm as its builder sets them, 1000 classes. Throws
/// runtime::InvalidArgument naming the presets for any other string. Thread-safe.
EfficientNetOptions efficientnet_preset(const std::string& preset);

/// The MBConv blocks of each of the 7 stages: ceil(n * depth) of B0's 1, 2, 2, 3, 3, 4, 1.
/// Thread-safe; `depth` is not checked (generate_efficientnet_config checks it).
std::vector<std::int64_t> efficientnet_stages(double depth);

/// torchvision's _make_divisible(channels * width, 8): the nearest multiple of 8, at least 8 and
/// at least 90% of channels * width. Thread-safe; `width` is not checked.
std::int64_t efficientnet_channels(std::int64_t channels, double width);

/// The config (JSON text, one layer a line) of that EfficientNet with torchvision's module names
/// as layer names, so that its tensors are named as torchvision's state_dict keys: features.0
/// (stem conv 3x3/2, BN, SiLU), features.1-7 (the stages of MBConv blocks: expand 1x1 conv-BN-
/// SiLU unless the expansion is 1, depthwise kxk conv-BN-SiLU, squeeze-excitation avgpool, fc1,
/// SiLU, fc2, sigmoid and mul, project 1x1 conv-BN, and where stride is 1 and the channels agree
/// stochastic depth of p = 0.2 * block / blocks and the residual add), features.8 (1x1 conv to 4x
/// the last stage's channels, BN, SiLU), avgpool, flatten, classifier.0 (dropout), classifier.1
/// (linear). Throws runtime::InvalidArgument stating the rule an option breaks: width and depth
/// in (0, 8], resolution in [32, 2048], dropout in [0, 1), num_classes in [2, 2^20], preset empty
/// or "b0".."b7". Thread-safe.
std::string generate_efficientnet_config(const EfficientNetOptions& options);

}  // namespace vdnn::models
