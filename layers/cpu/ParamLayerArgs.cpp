// Argument checks of the CPU layers with parameters: view counts and shapes against the layer's.
#include "layers/cpu/ParamLayerArgs.hpp"

#include <algorithm>

#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {
namespace {

// True when `views` are exactly the parameters, with the shapes param_specs() gives.
bool params_match(const std::vector<TensorView>& views, const std::vector<Shape>& shapes) {
  return std::equal(views.begin(), views.end(), shapes.begin(), shapes.end(),
                    [](const TensorView& view, const Shape& shape) { return view.shape == shape; });
}

}  // namespace

std::vector<Shape> param_shape_list(const LayerSpec& spec, const std::vector<Shape>& inputs) {
  std::vector<Shape> shapes;
  for (const ParamSpec& param : param_specs(spec, inputs)) shapes.push_back(param.shape);
  return shapes;
}

void expect_param_forward(const std::string& layer, const ForwardArgs& args, const Shape& input,
                          const Shape& output, const std::vector<Shape>& params) {
  VDNN_EXPECTS(args.inputs.size() == 1 && params_match(args.params, params),
               layer + "::forward: expected one input and the weight (and bias) views of the " +
                   "parameter shapes");
  VDNN_EXPECTS(args.inputs[0].shape == input && args.output.shape == output,
               layer + "::forward: input or output view does not match the layer's shapes");
}

void expect_param_backward(const std::string& layer, const BackwardArgs& args, const Shape& input,
                           const Shape& output, const std::vector<Shape>& params) {
  VDNN_EXPECTS(args.inputs.size() == 1 && args.grad_inputs.size() == 1 &&
                   params_match(args.params, params) && params_match(args.grad_params, params),
               layer + "::backward: expected one input, one input gradient and the weight (and " +
                   "bias) views with their gradients, of the parameter shapes");
  VDNN_EXPECTS(
      args.inputs[0].shape == input && args.grad_output.shape == output &&
          (args.grad_inputs[0].tensor.empty() || args.grad_inputs[0].tensor.shape == input),
      layer + "::backward: a view does not match the layer's shapes");
}

}  // namespace vdnn::layers::cpu
