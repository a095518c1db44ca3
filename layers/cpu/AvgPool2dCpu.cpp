// CPU average pooling: every output is the window's sum over a divisor fixed by count_include_pad;
// backward spreads each output gradient evenly over the same window.
#include "layers/cpu/AvgPool2dCpu.hpp"

#include <algorithm>
#include <utility>

namespace vdnn::layers::cpu {

AvgPool2dCpu::AvgPool2dCpu(const AvgPool2dSpec& spec, std::vector<Shape> input_shapes,
                           const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype),
      spec_(spec),
      window_(Window2d::for_pool(spec, this->input_shapes()[0], output_shape())),
      planes_(output_shape().n() * output_shape().c()) {}

void AvgPool2dCpu::forward(const ForwardArgs& args) {
  expect_pool_forward("AvgPool2dCpu", args, input_shapes()[0], output_shape());
  if (dtype() == DType::F64) {
    forward_as<double>(args);
  } else {
    forward_as<float>(args);
  }
}

void AvgPool2dCpu::backward(const BackwardArgs& args) {
  if (!expect_pool_backward("AvgPool2dCpu", args, input_shapes()[0], output_shape(), false)) return;
  if (dtype() == DType::F64) {
    backward_as<double>(args);
  } else {
    backward_as<float>(args);
  }
}

double AvgPool2dCpu::divisor(const WindowAt& at) const noexcept {
  // Without ceil mode a window never reaches past the padding, so with count_include_pad the
  // divisor is always the full kernel area (as in PyTorch).
  if (spec_.count_include_pad) return static_cast<double>(window_.taps());
  return static_cast<double>((at.rows.end - at.rows.begin) * (at.cols.end - at.cols.begin));
}

template <typename T>
void AvgPool2dCpu::forward_as(const ForwardArgs& args) const {
  const T* x = args.inputs[0].as<T>();
  T* y = args.output.as<T>();
  for_each_window(window_, planes_, [&](const WindowAt& at) {
    T sum = 0;
    for (std::int64_t ih = at.rows.begin; ih < at.rows.end; ++ih) {
      const T* row = x + at.plane + ih * window_.in[1];
      for (std::int64_t iw = at.cols.begin; iw < at.cols.end; ++iw) sum += row[iw];
    }
    y[at.out] = sum / static_cast<T>(divisor(at));
  });
}

template <typename T>
void AvgPool2dCpu::backward_as(const BackwardArgs& args) const {
  const T* dy = args.grad_output.as<T>();
  const GradTarget& target = args.grad_inputs[0];
  T* dx = target.tensor.as<T>();
  if (!target.accumulate) std::fill_n(dx, target.tensor.numel(), T(0));
  for_each_window(window_, planes_, [&](const WindowAt& at) {
    const T share = dy[at.out] / static_cast<T>(divisor(at));
    for (std::int64_t ih = at.rows.begin; ih < at.rows.end; ++ih) {
      T* row = dx + at.plane + ih * window_.in[1];
      for (std::int64_t iw = at.cols.begin; iw < at.cols.end; ++iw) row[iw] += share;
    }
  });
}

}  // namespace vdnn::layers::cpu
