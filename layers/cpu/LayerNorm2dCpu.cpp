// Layer normalization over channels on the CPU backend. In NCHW a pixel's channels lie a plane
// apart, so every pass walks channel by channel over whole planes (contiguous) and keeps one
// running value per pixel of the sample.
#include "layers/cpu/LayerNorm2dCpu.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace vdnn::layers::cpu {

LayerNorm2dCpu::LayerNorm2dCpu(const LayerNorm2dSpec& spec, std::vector<Shape> input_shapes,
                               const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype),
      eps_(spec.eps),
      // this->: the moved-from parameter input_shapes hides the accessor here.
      mean_(static_cast<std::size_t>(this->input_shapes()[0].h() * this->input_shapes()[0].w())),
      inv_std_(mean_.size()),
      grad_mean_(mean_.size()),
      grad_projection_(mean_.size()) {}

template <typename T>
void LayerNorm2dCpu::pixel_statistics(const T* x, std::int64_t n) {
  const Shape& shape = input_shapes()[0];
  const std::int64_t pixels = shape.h() * shape.w();
  const T* sample = x + n * shape.c() * pixels;
  const auto channels = static_cast<double>(shape.c());
  std::fill(mean_.begin(), mean_.end(), 0.0);
  for (std::int64_t c = 0; c < shape.c(); ++c) {
    for (std::int64_t p = 0; p < pixels; ++p) mean_[p] += sample[c * pixels + p];
  }
  for (double& m : mean_) m /= channels;
  // Two passes: the centred sum of squares does not cancel when |mean| >> std.
  std::fill(inv_std_.begin(), inv_std_.end(), 0.0);
  for (std::int64_t c = 0; c < shape.c(); ++c) {
    for (std::int64_t p = 0; p < pixels; ++p) {
      const double d = static_cast<double>(sample[c * pixels + p]) - mean_[p];
      inv_std_[p] += d * d;
    }
  }
  for (double& v : inv_std_) v = 1.0 / std::sqrt(v / channels + eps_);
}

template <typename T>
void LayerNorm2dCpu::forward_typed(const ForwardArgs& args) {
  const Shape& shape = input_shapes()[0];
  const std::int64_t pixels = shape.h() * shape.w();
  const T* x = args.inputs[0].as<T>();
  const T* weight = args.params[0].as<T>();
  const T* bias = args.params[1].as<T>();
  T* y = args.output.as<T>();
  for (std::int64_t n = 0; n < shape.n(); ++n) {
    pixel_statistics(x, n);
    for (std::int64_t c = 0; c < shape.c(); ++c) {
      const std::int64_t plane = (n * shape.c() + c) * pixels;
      for (std::int64_t p = 0; p < pixels; ++p) {
        const double xhat = (static_cast<double>(x[plane + p]) - mean_[p]) * inv_std_[p];
        y[plane + p] = static_cast<T>(xhat * weight[c] + bias[c]);
      }
    }
  }
}

// With xhat the normalized input and g = dy * weight per channel:
// dx = inv_std * (g - mean_c(g) - xhat * mean_c(g * xhat)), dweight = sum dy * xhat, dbias = sum
// dy.
template <typename T>
void LayerNorm2dCpu::backward_typed(const BackwardArgs& args) {
  const Shape& shape = input_shapes()[0];
  const std::int64_t pixels = shape.h() * shape.w();
  const auto channels = static_cast<double>(shape.c());
  const T* x = args.inputs[0].as<T>();
  const T* dy = args.grad_output.as<T>();
  const T* weight = args.params[0].as<T>();
  const GradTarget& dx = args.grad_inputs[0];
  std::vector<double> grad_weight(static_cast<std::size_t>(shape.c()), 0.0);
  std::vector<double> grad_bias(grad_weight.size(), 0.0);
  for (std::int64_t n = 0; n < shape.n(); ++n) {
    pixel_statistics(x, n);
    std::fill(grad_mean_.begin(), grad_mean_.end(), 0.0);
    std::fill(grad_projection_.begin(), grad_projection_.end(), 0.0);
    for (std::int64_t c = 0; c < shape.c(); ++c) {
      const std::int64_t plane = (n * shape.c() + c) * pixels;
      for (std::int64_t p = 0; p < pixels; ++p) {
        const double xhat = (static_cast<double>(x[plane + p]) - mean_[p]) * inv_std_[p];
        const double g = static_cast<double>(dy[plane + p]) * weight[c];
        grad_mean_[p] += g;
        grad_projection_[p] += g * xhat;
        grad_weight[c] += static_cast<double>(dy[plane + p]) * xhat;
        grad_bias[c] += dy[plane + p];
      }
    }
    if (dx.tensor.empty()) continue;
    T* out = dx.tensor.as<T>();
    for (std::int64_t c = 0; c < shape.c(); ++c) {
      const std::int64_t plane = (n * shape.c() + c) * pixels;
      for (std::int64_t p = 0; p < pixels; ++p) {
        const double xhat = (static_cast<double>(x[plane + p]) - mean_[p]) * inv_std_[p];
        const double g = static_cast<double>(dy[plane + p]) * weight[c];
        const auto value = static_cast<T>(
            inv_std_[p] * (g - (grad_mean_[p] + xhat * grad_projection_[p]) / channels));
        out[plane + p] = dx.accumulate ? out[plane + p] + value : value;
      }
    }
  }
  const std::vector<double>* sums[] = {&grad_weight, &grad_bias};
  for (std::size_t k = 0; k < args.grad_params.size(); ++k) {
    if (args.grad_params[k].empty()) continue;
    std::transform(sums[k]->begin(), sums[k]->end(), args.grad_params[k].as<T>(),
                   [](double v) { return static_cast<T>(v); });
  }
}

void LayerNorm2dCpu::forward(const ForwardArgs& args) {
  if (dtype() == DType::F64) {
    forward_typed<double>(args);
  } else {
    forward_typed<float>(args);
  }
}

void LayerNorm2dCpu::backward(const BackwardArgs& args) {
  if (dtype() == DType::F64) {
    backward_typed<double>(args);
  } else {
    backward_typed<float>(args);
  }
}

}  // namespace vdnn::layers::cpu
