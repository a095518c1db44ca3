// Channel concatenation on the CUDA backend. In NCHW input k fills, in every sample, one
// contiguous block of the output row, so each input is one strided row copy in either direction.
#include "layers/cuda/ConcatCuda.hpp"

#include <cstddef>
#include <utility>

#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/ElementwiseKernels.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {
namespace {

// Calls fn(k, output_offset, block) for every input k, where block = C_k * H * W is the size of
// its (contiguous) part of one sample and output_offset where that part starts in sample 0.
template <typename Fn>
void for_each_input(const std::vector<Shape>& inputs, Fn&& fn) {
  std::int64_t output_offset = 0;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const std::int64_t block = inputs[k].sample_numel();
    fn(k, output_offset, block);
    output_offset += block;
  }
}

}  // namespace

ConcatCuda::ConcatCuda(const ConcatSpec& spec, std::vector<Shape> input_shapes,
                       const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype),
      context_(&checked_context(options, "ConcatCuda")) {}

void ConcatCuda::forward(const ForwardArgs& args) {
  float* y = args.output.as<float>();
  const std::int64_t row = output_shape().sample_numel();
  const std::int64_t samples = output_shape().n();
  for_each_input(input_shapes(), [&](std::size_t k, std::int64_t offset, std::int64_t block) {
    copy_rows(context_->compute_stream(), y + offset, row, args.inputs[k].as<float>(), block,
              samples, block, /*accumulate=*/false);
  });
}

void ConcatCuda::backward(const BackwardArgs& args) {
  const float* dy = args.grad_output.as<float>();
  const std::int64_t row = output_shape().sample_numel();
  const std::int64_t samples = output_shape().n();
  for_each_input(input_shapes(), [&](std::size_t k, std::int64_t offset, std::int64_t block) {
    const GradTarget& target = args.grad_inputs[k];
    if (target.tensor.empty()) return;
    copy_rows(context_->compute_stream(), target.tensor.as<float>(), block, dy + offset, row,
              samples, block, target.accumulate);
  });
}

}  // namespace vdnn::layers::cuda
