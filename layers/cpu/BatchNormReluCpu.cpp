// The fused batch norm, residual add and ReLU on the CPU backend, built on BatchNorm2dCpu.
#include "layers/cpu/BatchNormReluCpu.hpp"

#include <cstdint>
#include <utility>

#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {

BatchNormReluCpu::BatchNormReluCpu(const BatchNormReluSpec& spec, std::vector<Shape> input_shapes,
                                   const LayerOptions& options)
    : Layer(spec, input_shapes, options.dtype), bn_(spec.bn, {input_shapes.front()}, options) {}

WorkspaceBytes BatchNormReluCpu::workspace() const {
  return {0, output_shape().bytes(dtype())};  // backward: the ReLU's gradient dz
}

template <typename T>
void BatchNormReluCpu::forward_typed(const ForwardArgs& args) {
  ForwardArgs bn = args;
  bn.inputs.resize(1);
  bn_.forward(bn);
  T* y = args.output.as<T>();
  const T* r = args.inputs.size() > 1 ? args.inputs[1].as<T>() : nullptr;
  const std::int64_t n = args.output.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    const T z = r == nullptr ? y[i] : y[i] + r[i];
    y[i] = z < T(0) ? T(0) : z;  // a NaN stays NaN, as in ReLU
  }
}

template <typename T>
void BatchNormReluCpu::backward_typed(const BackwardArgs& args) {
  VDNN_EXPECTS(args.workspace.bytes() >= workspace().backward,
               "BatchNormReluCpu: the workspace view is smaller than workspace().backward");
  const T* dy = args.grad_output.as<T>();
  T* dz = static_cast<T*>(args.workspace.data);
  const std::int64_t n = args.grad_output.numel();
  const bool residual = args.grad_inputs.size() > 1;
  // The mask: the residual chain reads y; the plain one renormalizes x into dz as the last forward
  // did (a recompute after training, the running buffers again after inference: the forward's
  // bits, so bn(x) > 0 exactly where y > 0) and masks in place.
  const T* y = residual ? args.output.as<T>() : dz;
  if (!residual)
    bn_.normalize_again(args.inputs.front(), args.params, {dz, output_shape(), dtype()});
  for (std::int64_t i = 0; i < n; ++i) dz[i] = y[i] > T(0) ? dy[i] : T(0);
  if (args.grad_inputs.size() > 1 && !args.grad_inputs[1].tensor.empty()) {
    const GradTarget& target = args.grad_inputs[1];
    T* dr = target.tensor.as<T>();
    for (std::int64_t i = 0; i < n; ++i) dr[i] = target.accumulate ? dr[i] + dz[i] : dz[i];
  }
  BackwardArgs bn = args;
  bn.inputs.resize(1);
  bn.grad_inputs.resize(1);
  bn.grad_output = {dz, output_shape(), dtype()};
  bn_.backward(bn);
}

void BatchNormReluCpu::forward(const ForwardArgs& args) {
  if (dtype() == DType::F64) {
    forward_typed<double>(args);
  } else {
    forward_typed<float>(args);
  }
}

void BatchNormReluCpu::backward(const BackwardArgs& args) {
  if (dtype() == DType::F64) {
    backward_typed<double>(args);
  } else {
    backward_typed<float>(args);
  }
}

}  // namespace vdnn::layers::cpu
