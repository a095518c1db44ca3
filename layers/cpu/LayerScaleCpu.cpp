// The per-channel scale on the CPU backend: each (sample, channel) plane of an NCHW tensor is
// scaled, and differentiated, by one value.
#include "layers/cpu/LayerScaleCpu.hpp"

#include <cstdint>
#include <utility>

namespace vdnn::layers::cpu {
namespace {

// out (+)= in * scale[c] over every plane (n, c) of `shape`.
template <typename T>
void scale_planes(const Shape& shape, const T* in, const T* scale, T* out, bool accumulate) {
  const std::int64_t pixels = shape.h() * shape.w();
  for (std::int64_t plane = 0; plane < shape.n() * shape.c(); ++plane) {
    const T s = scale[plane % shape.c()];
    for (std::int64_t i = plane * pixels; i < (plane + 1) * pixels; ++i) {
      const T v = in[i] * s;
      out[i] = accumulate ? out[i] + v : v;
    }
  }
}

// dscale[c] = sum over n and the plane of dy * x, in double.
template <typename T>
void scale_gradient(const Shape& shape, const T* dy, const T* x, T* dscale) {
  const std::int64_t pixels = shape.h() * shape.w();
  for (std::int64_t c = 0; c < shape.c(); ++c) {
    double sum = 0.0;
    for (std::int64_t n = 0; n < shape.n(); ++n) {
      const std::int64_t plane = (n * shape.c() + c) * pixels;
      for (std::int64_t i = plane; i < plane + pixels; ++i) {
        sum += static_cast<double>(dy[i]) * static_cast<double>(x[i]);
      }
    }
    dscale[c] = static_cast<T>(sum);
  }
}

template <typename T>
void layer_scale_backward(const Shape& shape, const BackwardArgs& args) {
  const T* dy = args.grad_output.as<T>();
  const GradTarget& dx = args.grad_inputs[0];
  if (!dx.tensor.empty()) {
    scale_planes(shape, dy, args.params[0].as<T>(), dx.tensor.as<T>(), dx.accumulate);
  }
  if (!args.grad_params.empty() && !args.grad_params[0].empty()) {
    scale_gradient(shape, dy, args.inputs[0].as<T>(), args.grad_params[0].as<T>());
  }
}

}  // namespace

LayerScaleCpu::LayerScaleCpu(const LayerScaleSpec& spec, std::vector<Shape> input_shapes,
                             const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype) {}

void LayerScaleCpu::forward(const ForwardArgs& args) {
  if (dtype() == DType::F64) {
    scale_planes(input_shapes()[0], args.inputs[0].as<double>(), args.params[0].as<double>(),
                 args.output.as<double>(), false);
  } else {
    scale_planes(input_shapes()[0], args.inputs[0].as<float>(), args.params[0].as<float>(),
                 args.output.as<float>(), false);
  }
}

void LayerScaleCpu::backward(const BackwardArgs& args) {
  if (dtype() == DType::F64) {
    layer_scale_backward<double>(input_shapes()[0], args);
  } else {
    layer_scale_backward<float>(input_shapes()[0], args);
  }
}

}  // namespace vdnn::layers::cpu
