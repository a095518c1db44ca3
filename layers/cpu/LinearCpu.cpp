// CPU fully connected layer: three Eigen GEMMs (forward, data gradient, weight gradient) over the
// batch seen as an [N, in] row-major matrix.
#include "layers/cpu/LinearCpu.hpp"

#include <utility>

#include "layers/cpu/EigenMaps.hpp"
#include "layers/cpu/ParamLayerArgs.hpp"

namespace vdnn::layers::cpu {
LinearCpu::LinearCpu(const LinearSpec& spec, std::vector<Shape> input_shapes,
                     const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype),
      spec_(spec),
      param_shapes_(param_shape_list(spec, this->input_shapes())) {}

void LinearCpu::forward(const ForwardArgs& args) {
  expect_param_forward("LinearCpu", args, input_shapes()[0], output_shape(), param_shapes_);
  if (dtype() == DType::F64) {
    forward_as<double>(args);
  } else {
    forward_as<float>(args);
  }
}

void LinearCpu::backward(const BackwardArgs& args) {
  expect_param_backward("LinearCpu", args, input_shapes()[0], output_shape(), param_shapes_);
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
  ConstMatrixMap<T> weight(args.params[0].as<T>(), out, in);
  store(MatrixMap<T>(target.tensor.as<T>(), batch, in), dy * weight, target.accumulate);
}

}  // namespace vdnn::layers::cpu
