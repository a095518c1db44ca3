// Element-wise sum of two or more inputs on the CPU backend.
#include "layers/cpu/AddCpu.hpp"

#include <cstddef>
#include <cstdint>
#include <utility>

namespace vdnn::layers::cpu {
namespace {

template <typename T>
void add_forward(const ForwardArgs& args) {
  T* y = args.output.as<T>();
  const std::int64_t n = args.output.numel();
  // Arity guarantees two inputs; fusing them avoids a separate copy pass over the output.
  const T* x0 = args.inputs[0].as<T>();
  const T* x1 = args.inputs[1].as<T>();
  for (std::int64_t i = 0; i < n; ++i) y[i] = x0[i] + x1[i];
  for (std::size_t k = 2; k < args.inputs.size(); ++k) {
    const T* x = args.inputs[k].as<T>();
    for (std::int64_t i = 0; i < n; ++i) y[i] += x[i];
  }
}

template <typename T>
void add_backward(const BackwardArgs& args) {
  const T* dy = args.grad_output.as<T>();
  const std::int64_t n = args.grad_output.numel();
  for (const GradTarget& target : args.grad_inputs) {
    if (target.tensor.empty()) continue;
    T* dx = target.tensor.as<T>();
    for (std::int64_t i = 0; i < n; ++i) dx[i] = target.accumulate ? dx[i] + dy[i] : dy[i];
  }
}

}  // namespace

AddCpu::AddCpu(const AddSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype) {}

void AddCpu::forward(const ForwardArgs& args) {
  if (dtype() == DType::F64) {
    add_forward<double>(args);
  } else {
    add_forward<float>(args);
  }
}

void AddCpu::backward(const BackwardArgs& args) {
  if (dtype() == DType::F64) {
    add_backward<double>(args);
  } else {
    add_backward<float>(args);
  }
}

}  // namespace vdnn::layers::cpu
