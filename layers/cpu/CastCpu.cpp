// The cast between F32 and BF16 on the CPU backend, element by element.
#include "layers/cpu/CastCpu.hpp"

#include <cstdint>
#include <utility>

#include "runtime/BFloat16.hpp"
#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {
namespace {

using runtime::BFloat16;

bool castable(DType dtype) { return dtype == DType::F32 || dtype == DType::BF16; }

// dst (+)= src converted to dst's type, over n elements.
void convert(const TensorView& src, const TensorView& dst, bool accumulate) {
  const std::int64_t n = src.numel();
  const auto read = [&](std::int64_t i) {
    return src.dtype == DType::BF16 ? runtime::to_float(src.as<BFloat16>()[i]) : src.as<float>()[i];
  };
  for (std::int64_t i = 0; i < n; ++i) {
    if (dst.dtype == DType::BF16) {
      BFloat16& out = dst.as<BFloat16>()[i];
      out = runtime::to_bfloat16(accumulate ? runtime::to_float(out) + read(i) : read(i));
    } else {
      float& out = dst.as<float>()[i];
      out = accumulate ? out + read(i) : read(i);
    }
  }
}

}  // namespace

CastCpu::CastCpu(const CastSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype) {
  VDNN_EXPECTS(castable(options.dtype) && castable(spec.to),
               "CastCpu converts between f32 and bf16 only");
}

void CastCpu::forward(const ForwardArgs& args) { convert(args.inputs[0], args.output, false); }

void CastCpu::backward(const BackwardArgs& args) {
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  convert(args.grad_output, target.tensor, target.accumulate);
}

}  // namespace vdnn::layers::cpu
