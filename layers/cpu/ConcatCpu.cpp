// Channel concatenation on the CPU backend (NCHW). Input k fills one contiguous block of every
// output row (a sample), so forward and backward are the same row walk in opposite directions. The
// output and the inputs may be row-strided views, and an input already in place in the output is
// not copied (Note [Dense block storage]).
#include "layers/cpu/ConcatCpu.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace vdnn::layers::cpu {
namespace {

// Calls fn(k, output_offset, block) for every input k, where block = C_k * H * W is the size of its
// part of a sample and output_offset where that part starts in an output row.
template <typename Fn>
void for_each_input(const std::vector<Shape>& inputs, Fn&& fn) {
  const std::int64_t pixels = inputs[0].h() * inputs[0].w();
  std::int64_t output_offset = 0;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const std::int64_t block = inputs[k].c() * pixels;
    fn(k, output_offset, block);
    output_offset += block;
  }
}

template <typename T>
void concat_forward(const std::vector<Shape>& shapes, const Shape& output,
                    const ForwardArgs& args) {
  const std::int64_t row = output.sample_numel();
  T* y = args.output.as<T>();
  const std::int64_t y_pitch = row_pitch(args.output, row);
  for_each_input(shapes, [&](std::size_t k, std::int64_t offset, std::int64_t block) {
    const TensorView& input = args.inputs[k];
    if (lies_in_place(input, block, args.output, row, offset)) return;
    const T* x = input.as<T>();
    const std::int64_t x_pitch = row_pitch(input, block);
    for (std::int64_t n = 0; n < output.n(); ++n) {
      std::copy_n(x + n * x_pitch, block, y + n * y_pitch + offset);
    }
  });
}

template <typename T>
void concat_backward(const std::vector<Shape>& shapes, const Shape& output,
                     const BackwardArgs& args) {
  const std::int64_t row = output.sample_numel();
  const T* dy = args.grad_output.as<T>();
  for_each_input(shapes, [&](std::size_t k, std::int64_t offset, std::int64_t block) {
    const GradTarget& target = args.grad_inputs[k];
    if (target.tensor.empty()) return;
    for (std::int64_t n = 0; n < output.n(); ++n) {
      T* dx = target.tensor.as<T>() + n * block;
      const T* g = dy + n * row + offset;
      for (std::int64_t i = 0; i < block; ++i) dx[i] = target.accumulate ? dx[i] + g[i] : g[i];
    }
  });
}

}  // namespace

ConcatCpu::ConcatCpu(const ConcatSpec& spec, std::vector<Shape> input_shapes,
                     const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype) {}

void ConcatCpu::forward(const ForwardArgs& args) {
  if (dtype() == DType::F64) {
    concat_forward<double>(input_shapes(), output_shape(), args);
  } else {
    concat_forward<float>(input_shapes(), output_shape(), args);
  }
}

void ConcatCpu::backward(const BackwardArgs& args) {
  if (dtype() == DType::F64) {
    concat_backward<double>(input_shapes(), output_shape(), args);
  } else {
    concat_backward<float>(input_shapes(), output_shape(), args);
  }
}

}  // namespace vdnn::layers::cpu
