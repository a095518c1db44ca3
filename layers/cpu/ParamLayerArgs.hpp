// ParamLayerArgs: the argument checks shared by the CPU layers with parameters and one input
// (convolution, fully connected). Internal to layers/cpu.
#pragma once

#include <string>
#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// The shapes of the parameters param_specs() gives for `spec` over `inputs`, in order.
std::vector<Shape> param_shape_list(const LayerSpec& spec, const std::vector<Shape>& inputs);

/// Throws runtime::InvalidArgument, with a message naming `layer`, unless `args` holds one input
/// of shape `input`, an output of shape `output` and parameter views of exactly `params`' shapes.
void expect_param_forward(const std::string& layer, const ForwardArgs& args, const Shape& input,
                          const Shape& output, const std::vector<Shape>& params);

/// Throws runtime::InvalidArgument, with a message naming `layer`, unless `args` holds one input
/// of shape `input`, one input gradient of that shape or empty, an output gradient of shape
/// `output`, and parameter and parameter-gradient views of exactly `params`' shapes.
void expect_param_backward(const std::string& layer, const BackwardArgs& args, const Shape& input,
                           const Shape& output, const std::vector<Shape>& params);

}  // namespace vdnn::layers::cpu
