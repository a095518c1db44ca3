// ReLU on the CPU backend. Backward works from the output alone (y > 0 exactly where x > 0), so
// the scheduler may drop the input right after forward.
#include "layers/cpu/ReluCpu.hpp"

#include <cstdint>
#include <utility>

namespace vdnn::layers::cpu {
namespace {

template <typename T>
void relu_forward(const ForwardArgs& args) {
  const T* x = args.inputs[0].as<T>();
  T* y = args.output.as<T>();
  const std::int64_t n = args.output.numel();
  // Written as a select rather than std::max so that a NaN input stays NaN and shows up in the
  // loss.
  for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] < T(0) ? T(0) : x[i];
}

template <typename T>
void relu_backward(const BackwardArgs& args) {
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  const T* y = args.output.as<T>();
  const T* dy = args.grad_output.as<T>();
  T* dx = target.tensor.as<T>();
  const std::int64_t n = args.grad_output.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    const T g = y[i] > T(0) ? dy[i] : T(0);
    dx[i] = target.accumulate ? dx[i] + g : g;
  }
}

}  // namespace

ReluCpu::ReluCpu(const ReluSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype) {}

void ReluCpu::forward(const ForwardArgs& args) {
  if (dtype() == DType::F64) {
    relu_forward<double>(args);
  } else {
    relu_forward<float>(args);
  }
}

void ReluCpu::backward(const BackwardArgs& args) {
  if (dtype() == DType::F64) {
    relu_backward<double>(args);
  } else {
    relu_backward<float>(args);
  }
}

}  // namespace vdnn::layers::cpu
