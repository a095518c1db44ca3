// Channel concatenation on the CUDA backend. Input k fills one contiguous block of every output
// row: in NCHW a row is a sample (blocks of C_k * H * W), in NHWC a pixel (blocks of C_k). So each
// input is one strided row copy in either direction. In forward the output and the inputs may be
// row-strided views, and an input already in place in the output is not copied (Note [Dense block
// storage]).
#include "layers/cuda/ConcatCuda.hpp"

#include <cstddef>
#include <utility>

#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/ElementwiseKernels.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {
namespace {

// The rows of a concatenation in `layout`: `count` rows, each holding `per_channel` elements of
// every channel.
struct Rows {
  std::int64_t count;
  std::int64_t per_channel;
};

Rows rows_of(const Shape& output, Layout layout) {
  const std::int64_t pixels = output.h() * output.w();
  return layout == Layout::Nhwc ? Rows{output.n() * pixels, 1} : Rows{output.n(), pixels};
}

// Calls fn(k, output_offset, block) for every input k, where block = C_k * rows.per_channel is the
// size of its (contiguous) part of one row and output_offset where that part starts in row 0.
template <typename Fn>
void for_each_input(const std::vector<Shape>& inputs, const Rows& rows, Fn&& fn) {
  std::int64_t output_offset = 0;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const std::int64_t block = inputs[k].c() * rows.per_channel;
    fn(k, output_offset, block);
    output_offset += block;
  }
}

}  // namespace

ConcatCuda::ConcatCuda(const ConcatSpec& spec, std::vector<Shape> input_shapes,
                       const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype, shared_layout(options),
            shared_layout(options)),
      context_(&checked_context(options, "ConcatCuda", Precisions::F32OrBf16)) {}

void ConcatCuda::forward(const ForwardArgs& args) {
  const Rows rows = rows_of(output_shape(), layout());
  const std::int64_t row = output_shape().c() * rows.per_channel;
  with_element_type(dtype(), [&](auto element) {
    using T = decltype(element);
    T* y = args.output.as<T>();
    const std::int64_t y_pitch = row_pitch(args.output, row);
    for_each_input(input_shapes(), rows,
                   [&](std::size_t k, std::int64_t offset, std::int64_t block) {
                     const TensorView& input = args.inputs[k];
                     if (lies_in_place(input, block, args.output, row, offset)) return;
                     copy_rows(context_->compute_stream(), y + offset, y_pitch, input.as<T>(),
                               row_pitch(input, block), rows.count, block, /*accumulate=*/false);
                   });
  });
}

void ConcatCuda::backward(const BackwardArgs& args) {
  const Rows rows = rows_of(output_shape(), layout());
  const std::int64_t row = output_shape().c() * rows.per_channel;
  with_element_type(dtype(), [&](auto element) {
    using T = decltype(element);
    const T* dy = args.grad_output.as<T>();
    for_each_input(input_shapes(), rows,
                   [&](std::size_t k, std::int64_t offset, std::int64_t block) {
                     const GradTarget& target = args.grad_inputs[k];
                     if (target.tensor.empty()) return;
                     copy_rows(context_->compute_stream(), target.tensor.as<T>(), block,
                               dy + offset, row, rows.count, block, target.accumulate);
                   });
  });
}

}  // namespace vdnn::layers::cuda
