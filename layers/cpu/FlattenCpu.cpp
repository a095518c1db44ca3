// Flatten on the CPU backend: a copy, because input and output are separate buffers owned by the
// executor (row-major NCHW already is the (N, features) layout).
#include "layers/cpu/FlattenCpu.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace vdnn::layers::cpu {
namespace {

template <typename T>
void flatten_forward(const ForwardArgs& args) {
  std::copy_n(args.inputs[0].as<T>(), args.output.numel(), args.output.as<T>());
}

template <typename T>
void flatten_backward(const BackwardArgs& args) {
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  const T* dy = args.grad_output.as<T>();
  T* dx = target.tensor.as<T>();
  const std::int64_t n = args.grad_output.numel();
  for (std::int64_t i = 0; i < n; ++i) dx[i] = target.accumulate ? dx[i] + dy[i] : dy[i];
}

}  // namespace

FlattenCpu::FlattenCpu(const FlattenSpec& spec, std::vector<Shape> input_shapes,
                       const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype) {}

void FlattenCpu::forward(const ForwardArgs& args) {
  if (dtype() == DType::F64) {
    flatten_forward<double>(args);
  } else {
    flatten_forward<float>(args);
  }
}

void FlattenCpu::backward(const BackwardArgs& args) {
  if (dtype() == DType::F64) {
    flatten_backward<double>(args);
  } else {
    flatten_backward<float>(args);
  }
}

}  // namespace vdnn::layers::cpu
