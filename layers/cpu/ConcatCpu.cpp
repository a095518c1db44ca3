// Channel concatenation on the CPU backend. In NCHW each (sample, input) pair is one contiguous
// block on both sides, so forward and backward are the same block walk in opposite directions.
#include "layers/cpu/ConcatCpu.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace vdnn::layers::cpu {
namespace {

// Calls fn(input, input_offset, output_offset, count) for every contiguous (sample, input) block.
template <typename Fn>
void for_each_block(const std::vector<Shape>& inputs, Fn&& fn) {
  const std::int64_t pixels = inputs[0].h() * inputs[0].w();
  std::int64_t channels = 0;
  for (const Shape& s : inputs) channels += s.c();
  for (std::int64_t n = 0; n < inputs[0].n(); ++n) {
    std::int64_t output_offset = n * channels * pixels;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const std::int64_t count = inputs[k].c() * pixels;
      fn(k, n * count, output_offset, count);
      output_offset += count;
    }
  }
}

template <typename T>
void concat_forward(const std::vector<Shape>& shapes, const ForwardArgs& args) {
  T* y = args.output.as<T>();
  for_each_block(shapes, [&](std::size_t k, std::int64_t in, std::int64_t out, std::int64_t count) {
    std::copy_n(args.inputs[k].as<T>() + in, count, y + out);
  });
}

template <typename T>
void concat_backward(const std::vector<Shape>& shapes, const BackwardArgs& args) {
  const T* dy = args.grad_output.as<T>();
  for_each_block(shapes, [&](std::size_t k, std::int64_t in, std::int64_t out, std::int64_t count) {
    const GradTarget& target = args.grad_inputs[k];
    if (target.tensor.empty()) return;
    T* dx = target.tensor.as<T>() + in;
    for (std::int64_t i = 0; i < count; ++i) {
      dx[i] = target.accumulate ? dx[i] + dy[out + i] : dy[out + i];
    }
  });
}

}  // namespace

ConcatCpu::ConcatCpu(const ConcatSpec& spec, std::vector<Shape> input_shapes,
                     const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype) {}

void ConcatCpu::forward(const ForwardArgs& args) {
  if (dtype() == DType::F64) {
    concat_forward<double>(input_shapes(), args);
  } else {
    concat_forward<float>(input_shapes(), args);
  }
}

void ConcatCpu::backward(const BackwardArgs& args) {
  if (dtype() == DType::F64) {
    concat_backward<double>(input_shapes(), args);
  } else {
    concat_backward<float>(input_shapes(), args);
  }
}

}  // namespace vdnn::layers::cpu
