// The fused convolution and ReLU on the CPU backend, built on Conv2dCpu.
#include "layers/cpu/Conv2dReluCpu.hpp"

#include <cstdint>
#include <utility>

#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {

Conv2dReluCpu::Conv2dReluCpu(const Conv2dReluSpec& spec, std::vector<Shape> input_shapes,
                             const LayerOptions& options)
    : Layer(spec, input_shapes, options.dtype),
      conv_(spec.conv, std::move(input_shapes), options) {}

template <typename T>
void Conv2dReluCpu::forward_typed(const ForwardArgs& args) {
  conv_.forward(args);
  T* y = args.output.as<T>();
  const std::int64_t n = args.output.numel();
  for (std::int64_t i = 0; i < n; ++i) y[i] = y[i] < T(0) ? T(0) : y[i];  // a NaN stays NaN
}

// The ReLU's gradient in place of the output gradient, which nothing reads again
// (BackwardArgs::grad_output), then the convolution's backward from it.
template <typename T>
void Conv2dReluCpu::backward_typed(const BackwardArgs& args) {
  VDNN_EXPECTS(
      args.output.shape == output_shape() && args.grad_output.shape == output_shape(),
      "Conv2dReluCpu: backward needs the output (the ReLU's mask) and its gradient, of the "
      "output shape");
  const T* y = args.output.as<T>();
  T* g = args.grad_output.as<T>();
  const std::int64_t n = output_shape().numel();
  for (std::int64_t i = 0; i < n; ++i) g[i] = y[i] > T(0) ? g[i] : T(0);
  conv_.backward(args);
}

void Conv2dReluCpu::forward(const ForwardArgs& args) {
  if (dtype() == DType::F64) {
    forward_typed<double>(args);
  } else {
    forward_typed<float>(args);
  }
}

void Conv2dReluCpu::backward(const BackwardArgs& args) {
  if (dtype() == DType::F64) {
    backward_typed<double>(args);
  } else {
    backward_typed<float>(args);
  }
}

}  // namespace vdnn::layers::cpu
