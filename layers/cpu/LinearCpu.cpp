// CPU fully connected layer: three Eigen GEMMs (forward, data gradient, weight gradient) over the
// batch seen as an [N, in] row-major matrix.
#include "layers/cpu/LinearCpu.hpp"

#include <algorithm>
#include <utility>

#include <Eigen/Core>

#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {
namespace {

template <typename T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using MatrixMap = Eigen::Map<RowMajor<T>>;
template <typename T>
using ConstMatrixMap = Eigen::Map<const RowMajor<T>>;
template <typename T>
using RowVectorMap = Eigen::Map<Eigen::Matrix<T, 1, Eigen::Dynamic>>;
template <typename T>
using ConstRowVectorMap = Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>>;

std::vector<Shape> param_shape_list(const LayerSpec& spec, const std::vector<Shape>& inputs) {
  std::vector<Shape> shapes;
  for (const ParamSpec& param : param_specs(spec, inputs)) shapes.push_back(param.shape);
  return shapes;
}

// True when `views` are exactly the parameters, with the shapes param_specs() gives.
bool params_match(const std::vector<TensorView>& views, const std::vector<Shape>& shapes) {
  return std::equal(views.begin(), views.end(), shapes.begin(), shapes.end(),
                    [](const TensorView& view, const Shape& shape) { return view.shape == shape; });
}

}  // namespace

LinearCpu::LinearCpu(const LinearSpec& spec, std::vector<Shape> input_shapes,
                     const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype),
      spec_(spec),
      param_shapes_(param_shape_list(spec, this->input_shapes())) {}

void LinearCpu::forward(const ForwardArgs& args) {
  VDNN_EXPECTS(args.inputs.size() == 1 && params_match(args.params, param_shapes_),
               "LinearCpu::forward: expected one input and the weight (and bias) views of the "
               "parameter shapes");
  VDNN_EXPECTS(args.inputs[0].shape == input_shapes()[0] && args.output.shape == output_shape(),
               "LinearCpu::forward: input or output view does not match the layer's shapes");
  if (dtype() == DType::F64) {
    forward_as<double>(args);
  } else {
    forward_as<float>(args);
  }
}

void LinearCpu::backward(const BackwardArgs& args) {
  VDNN_EXPECTS(args.inputs.size() == 1 && args.grad_inputs.size() == 1 &&
                   params_match(args.params, param_shapes_) &&
                   params_match(args.grad_params, param_shapes_),
               "LinearCpu::backward: expected one input, one input gradient and the weight (and "
               "bias) views with their gradients, of the parameter shapes");
  VDNN_EXPECTS(args.inputs[0].shape == input_shapes()[0] &&
                   args.grad_output.shape == output_shape() &&
                   (args.grad_inputs[0].tensor.empty() ||
                    args.grad_inputs[0].tensor.shape == input_shapes()[0]),
               "LinearCpu::backward: a view does not match the layer's shapes");
  if (dtype() == DType::F64) {
    backward_as<double>(args);
  } else {
    backward_as<float>(args);
  }
}

template <typename T>
void LinearCpu::forward_as(const ForwardArgs& args) const {
  const std::int64_t batch = input_shapes()[0].n();
  const std::int64_t in = input_shapes()[0].sample_numel();
  const std::int64_t out = spec_.out_features;
  MatrixMap<T> y(args.output.as<T>(), batch, out);
  y.noalias() = ConstMatrixMap<T>(args.inputs[0].as<T>(), batch, in) *
                ConstMatrixMap<T>(args.params[0].as<T>(), out, in).transpose();
  if (spec_.bias) y.rowwise() += ConstRowVectorMap<T>(args.params[1].as<T>(), out);
}

template <typename T>
void LinearCpu::backward_as(const BackwardArgs& args) const {
  const std::int64_t batch = input_shapes()[0].n();
  const std::int64_t in = input_shapes()[0].sample_numel();
  const std::int64_t out = spec_.out_features;
  ConstMatrixMap<T> x(args.inputs[0].as<T>(), batch, in);
  ConstMatrixMap<T> dy(args.grad_output.as<T>(), batch, out);
  MatrixMap<T>(args.grad_params[0].as<T>(), out, in).noalias() = dy.transpose() * x;
  if (spec_.bias) RowVectorMap<T>(args.grad_params[1].as<T>(), out) = dy.colwise().sum();

  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  MatrixMap<T> dx(target.tensor.as<T>(), batch, in);
  ConstMatrixMap<T> weight(args.params[0].as<T>(), out, in);
  if (target.accumulate) {
    dx.noalias() += dy * weight;
  } else {
    dx.noalias() = dy * weight;
  }
}

}  // namespace vdnn::layers::cpu
