// The model zoo generator: configs of pre-activation ResNets and DenseNet-BCs of any valid depth,
// written with templates and repeat, as `vdnn gen` prints them.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace vdnn::models {

enum class ZooFamily : std::uint8_t { ResNet, DenseNet };
enum class ZooInput : std::uint8_t { Cifar, ImageNet };

/// Blocks (ResNet: bottleneck blocks; DenseNet: dense layers) per stage, for `depth` weighted
/// layers (convs and linears on the main path, as the papers count):
/// - ResNet, cifar: 3b+2 with b >= 3, the b blocks over 3 stages as evenly as possible (earlier
///   stages take the remainder), so 9n+2 gives He et al.'s n blocks per stage;
/// - ResNet, imagenet: 50/101/152/200 as in He et al.; any other 3b+2 with b >= 4 in ResNet-152's
///   proportions (stages 1, 2 and 4 get 3/50, 8/50 and 3/50 of the blocks, rounded, at least 1;
///   stage 3 the rest);
/// - DenseNet, cifar: 6n+4 with n >= 1, n layers in each of 3 blocks (DenseNet-BC);
/// - DenseNet, imagenet: 121/169/201/264 as in Huang et al. (264 has 2*130+5 = 265 weighted
///   layers: the paper's name); any other odd 2b+5 with b >= 20: 6 and 12, the rest split 4:3.
/// Throws runtime::InvalidArgument stating the rule `depth` breaks. Thread-safe.
std::vector<std::int64_t> zoo_stages(ZooFamily family, ZooInput input, std::int64_t depth);

/// The config (JSON text, one layer a line) of the network of that family and depth:
/// pre-activation bottleneck ResNets (He et al. 2016, identity mappings) with 1x1 projection
/// shortcuts in the first block of each stage, or DenseNet-BC (bottleneck 4k, compression 0.5)
/// with growth 12 (cifar) or 32 (imagenet). Named "resnetD", "resnetD-cifar", "densenetD",
/// "densenetD-cifar". Throws runtime::InvalidArgument as zoo_stages. Thread-safe.
std::string generate_zoo_config(ZooFamily family, ZooInput input, std::int64_t depth);

}  // namespace vdnn::models
