// CPU global average pooling: a row-wise mean of the [N * C, H * W] matrix, and its adjoint.
#include "layers/cpu/GlobalAvgPoolCpu.hpp"

#include <utility>

#include <Eigen/Core>

#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {
namespace {

template <typename T>
using Planes = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
template <typename T>
using Means = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>;

}  // namespace

GlobalAvgPoolCpu::GlobalAvgPoolCpu(const GlobalAvgPoolSpec& spec, std::vector<Shape> input_shapes,
                                   const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype) {}

void GlobalAvgPoolCpu::forward(const ForwardArgs& args) {
  VDNN_EXPECTS(args.inputs.size() == 1 && args.inputs[0].shape == input_shapes()[0] &&
                   args.output.shape == output_shape(),
               "GlobalAvgPoolCpu::forward: views do not match the layer's shapes");
  if (dtype() == DType::F64) {
    forward_as<double>(args);
  } else {
    forward_as<float>(args);
  }
}

void GlobalAvgPoolCpu::backward(const BackwardArgs& args) {
  VDNN_EXPECTS(args.grad_inputs.size() == 1 && args.grad_output.shape == output_shape(),
               "GlobalAvgPoolCpu::backward: views do not match the layer's shapes");
  if (args.grad_inputs[0].tensor.empty()) return;
  VDNN_EXPECTS(args.grad_inputs[0].tensor.shape == input_shapes()[0],
               "GlobalAvgPoolCpu::backward: input gradient view does not match the input shape");
  if (dtype() == DType::F64) {
    backward_as<double>(args);
  } else {
    backward_as<float>(args);
  }
}

template <typename T>
void GlobalAvgPoolCpu::forward_as(const ForwardArgs& args) const {
  const Shape& x = input_shapes()[0];
  Means<T>(args.output.as<T>(), x.n() * x.c()) =
      Planes<T>(args.inputs[0].as<T>(), x.n() * x.c(), x.h() * x.w()).rowwise().mean();
}

template <typename T>
void GlobalAvgPoolCpu::backward_as(const BackwardArgs& args) const {
  const Shape& x = input_shapes()[0];
  const GradTarget& target = args.grad_inputs[0];
  Planes<T> dx(target.tensor.as<T>(), x.n() * x.c(), x.h() * x.w());
  const auto share =
      Means<T>(args.grad_output.as<T>(), x.n() * x.c()) / static_cast<T>(x.h() * x.w());
  if (target.accumulate) {
    dx.colwise() += share;
  } else {
    dx.colwise() = share;
  }
}

}  // namespace vdnn::layers::cpu
