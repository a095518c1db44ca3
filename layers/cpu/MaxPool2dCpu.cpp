// CPU max pooling: forward and backward both locate each window's maximum with the same scan, so
// the gradient goes exactly where the forward value came from.
#include "layers/cpu/MaxPool2dCpu.hpp"

#include <algorithm>
#include <utility>

namespace vdnn::layers::cpu {
namespace {

// Offset in the input of the window's first maximum in row-major order; a NaN wins over numbers
// so that it propagates as in PyTorch.
template <typename T>
std::int64_t window_argmax(const T* x, std::int64_t width, const WindowAt& at) {
  std::int64_t best = at.plane + at.rows.begin * width + at.cols.begin;
  for (std::int64_t ih = at.rows.begin; ih < at.rows.end; ++ih) {
    const std::int64_t row = at.plane + ih * width;
    for (std::int64_t i = row + at.cols.begin; i < row + at.cols.end; ++i) {
      if (x[i] > x[best] || (x[i] != x[i] && x[best] == x[best])) best = i;
    }
  }
  return best;
}

}  // namespace

MaxPool2dCpu::MaxPool2dCpu(const MaxPool2dSpec& spec, std::vector<Shape> input_shapes,
                           const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype),
      spec_(spec),
      window_(Window2d::for_pool(spec, this->input_shapes()[0], output_shape())),
      planes_(output_shape().n() * output_shape().c()) {}

void MaxPool2dCpu::forward(const ForwardArgs& args) {
  expect_pool_forward("MaxPool2dCpu", args, input_shapes()[0], output_shape());
  if (dtype() == DType::F64) {
    forward_as<double>(args);
  } else {
    forward_as<float>(args);
  }
}

void MaxPool2dCpu::backward(const BackwardArgs& args) {
  if (!expect_pool_backward("MaxPool2dCpu", args, input_shapes()[0], output_shape(), true)) return;
  if (dtype() == DType::F64) {
    backward_as<double>(args);
  } else {
    backward_as<float>(args);
  }
}

template <typename T>
void MaxPool2dCpu::forward_as(const ForwardArgs& args) const {
  const T* x = args.inputs[0].as<T>();
  T* y = args.output.as<T>();
  for_each_window(window_, planes_,
                  [&](const WindowAt& at) { y[at.out] = x[window_argmax(x, window_.in[1], at)]; });
}

template <typename T>
void MaxPool2dCpu::backward_as(const BackwardArgs& args) const {
  const T* x = args.inputs[0].as<T>();
  const T* dy = args.grad_output.as<T>();
  const GradTarget& target = args.grad_inputs[0];
  T* dx = target.tensor.as<T>();
  if (!target.accumulate) std::fill_n(dx, target.tensor.numel(), T(0));
  for_each_window(window_, planes_, [&](const WindowAt& at) {
    dx[window_argmax(x, window_.in[1], at)] += dy[at.out];
  });
}

}  // namespace vdnn::layers::cpu
