// ImageInput: the rewrite that makes a network take its input as image bytes (Note [Image input]).
#pragma once

#include <array>

#include "graph/Graph.hpp"

namespace vdnn::graph {

/// Name of the normalize node the rewrite puts after the network input (no config can give a
/// name with a dot at the top level).
inline constexpr const char* kInputNormalizeName = "input.normalize";

/// Per-channel statistics that images are normalized with: x / 255 is mapped to (x / 255 - mean)
/// / std.
struct ImageStatistics {
  std::array<float, 3> mean{};
  std::array<float, 3> std{};
};

/// ImageNet's (torchvision's normalization constants).
inline constexpr ImageStatistics kImageNetStatistics{{0.485f, 0.456f, 0.406f},
                                                     {0.229f, 0.224f, 0.225f}};

/// `graph` taking u8 NHWC image bytes: a normalize node (layers::NormalizeSpec, named
/// kInputNormalizeName) reads the input and writes the feature maps' type, replacing the bf16 cast
/// where there is one, and every former reader of the input reads it instead. Throws
/// InvalidArgument when the input does not have 3 channels, a std is not positive, or the graph
/// takes image bytes already.
Graph with_image_input(const Graph& graph, const ImageStatistics& statistics);

}  // namespace vdnn::graph
