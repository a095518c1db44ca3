// Image bytes to normalized NCHW floats on the CPU backend, one pass over the batch.
#include "layers/cpu/NormalizeCpu.hpp"

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "runtime/BFloat16.hpp"
#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {
namespace {

template <typename T>
void normalize(const NormalizeSpec& spec, const TensorView& x, const TensorView& y) {
  const Shape& s = x.shape;
  const std::int64_t plane = s.h() * s.w();
  const std::uint8_t* in = x.as<std::uint8_t>();
  T* out = y.as<T>();
  for (std::int64_t n = 0; n < s.n(); ++n) {
    for (std::int64_t c = 0; c < 3; ++c) {
      const float scale = 1.0f / (255.0f * spec.std[c]);
      const float shift = spec.mean[c] / spec.std[c];
      const std::uint8_t* from = in + n * plane * 3 + c;
      T* to = out + (n * 3 + c) * plane;
      for (std::int64_t i = 0; i < plane; ++i) {
        const float v = std::fma(static_cast<float>(from[3 * i]), scale, -shift);
        if constexpr (std::is_same_v<T, float>) {
          to[i] = v;
        } else {
          to[i] = runtime::to_bfloat16(v);
        }
      }
    }
  }
}

}  // namespace

NormalizeCpu::NormalizeCpu(const NormalizeSpec& spec, std::vector<Shape> input_shapes,
                           const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype, Layout::Nchw, Layout::Nhwc), spec_(spec) {
  VDNN_EXPECTS(options.dtype == DType::U8 && options.input_layout == Layout::Nhwc,
               "NormalizeCpu reads u8 NHWC images");
  VDNN_EXPECTS(spec.to == DType::F32 || spec.to == DType::BF16, "NormalizeCpu writes f32 or bf16");
}

void NormalizeCpu::forward(const ForwardArgs& args) {
  if (spec_.to == DType::BF16) {
    normalize<runtime::BFloat16>(spec_, args.inputs[0], args.output);
  } else {
    normalize<float>(spec_, args.inputs[0], args.output);
  }
}

void NormalizeCpu::backward(const BackwardArgs& /*args*/) {}

}  // namespace vdnn::layers::cpu
