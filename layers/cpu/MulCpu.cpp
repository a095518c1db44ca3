// The product of a feature map and a (broadcast) scale on the CPU backend. In NCHW the scale
// element of x[i] is s[i / plane] in both cases (plane 1 when the shapes agree).
#include "layers/cpu/MulCpu.hpp"

#include <cmath>
#include <cstdint>
#include <utility>

namespace vdnn::layers::cpu {
namespace {

template <typename T>
void mul_forward(const ForwardArgs& args, std::int64_t plane) {
  const T* x = args.inputs[0].as<T>();
  const T* s = args.inputs[1].as<T>();
  T* y = args.output.as<T>();
  const std::int64_t n = args.output.numel();
  for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] * s[i / plane];
}

// dx (+)= dy * s.
template <typename T>
void grad_of_x(const BackwardArgs& args, std::int64_t plane) {
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  const T* s = args.inputs[1].as<T>();
  const T* dy = args.grad_output.as<T>();
  T* dx = target.tensor.as<T>();
  const std::int64_t n = args.grad_output.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    // Accumulating: one rounding of dx + dy * s, whatever the compiler contracts (the CUDA
    // layer's fused multiply-add, bit for bit).
    dx[i] = target.accumulate ? std::fma(dy[i], s[i / plane], dx[i]) : dy[i] * s[i / plane];
  }
}

// ds (+)= sum over each plane of dy * x, in double.
template <typename T>
void grad_of_scale(const BackwardArgs& args, std::int64_t plane) {
  const GradTarget& target = args.grad_inputs[1];
  if (target.tensor.empty()) return;
  const T* x = args.inputs[0].as<T>();
  const T* dy = args.grad_output.as<T>();
  T* ds = target.tensor.as<T>();
  const std::int64_t scales = target.tensor.numel();
  if (plane == 1) {  // the shapes agree: ds (+)= dy * x element by element, as dx above
    for (std::int64_t j = 0; j < scales; ++j) {
      ds[j] = target.accumulate ? std::fma(dy[j], x[j], ds[j]) : dy[j] * x[j];
    }
    return;
  }
  for (std::int64_t j = 0; j < scales; ++j) {
    double sum = 0.0;
    for (std::int64_t p = j * plane; p < (j + 1) * plane; ++p) {
      sum += static_cast<double>(dy[p]) * static_cast<double>(x[p]);
    }
    const T g = static_cast<T>(sum);
    ds[j] = target.accumulate ? ds[j] + g : g;
  }
}

}  // namespace

MulCpu::MulCpu(const MulSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype),
      plane_(this->input_shapes()[0].numel() / this->input_shapes()[1].numel()) {}

void MulCpu::forward(const ForwardArgs& args) {
  if (dtype() == DType::F64) {
    mul_forward<double>(args, plane_);
  } else {
    mul_forward<float>(args, plane_);
  }
}

void MulCpu::backward(const BackwardArgs& args) {
  if (dtype() == DType::F64) {
    grad_of_x<double>(args, plane_);
    grad_of_scale<double>(args, plane_);
  } else {
    grad_of_x<float>(args, plane_);
    grad_of_scale<float>(args, plane_);
  }
}

}  // namespace vdnn::layers::cpu
