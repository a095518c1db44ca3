// BatchNormCore: the batch norm BatchNorm2dCuda, BatchNormReluCuda and BatchNormActivationCuda
// share (saved statistics, reduction scratch, the statistics rules and every kernel launch), F32
// or BF16 feature maps, NCHW or NHWC. Internal to layers/cuda/.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string_view>

#include "layers/Layer.hpp"
#include "layers/cuda/BatchNormRanks.hpp"
#include "layers/cuda/RawBuffer.hpp"

namespace vdnn::layers::cuda {

/// The layout a batch-norm layer runs in for `options`: NHWC when both options.layout and
/// options.input_layout are NHWC, otherwise NCHW (and the registry then refuses a layer built for
/// any other pair than NCHW in and out, Note [Layout]).
Layout batch_norm_layout(const LayerOptions& options) noexcept;

/// What a batch-norm layer applies after the normalization (Note [Fusion]): nothing
/// (batchnorm2d), the ReLU (batchnorm2d_relu, batchnorm2d_add_relu) or a smooth activation
/// (batchnorm2d_silu, batchnorm2d_relu6, batchnorm2d_hardswish).
enum class Epilogue : std::uint8_t { None, Relu, Silu, Relu6, Hardswish };

/// The epilogue of the fused batchnorm2d -> `activation`; throws runtime::InvalidArgument for an
/// activation the CUDA batch norm does not fuse (gelu, sigmoid, hardsigmoid).
Epilogue fused_epilogue(Activation activation);

/// Batch normalization over N, H, W per channel of an input of one shape in one layout, optionally
/// followed by the fused chain's activation and residual add (Note [Fusion]). Params (args.params):
/// weight, bias, running_mean, running_var, all [C]. Training forward normalizes with the batch
/// statistics and updates the running buffers in place (PyTorch's momentum, unbiased variance);
/// inference forward uses the running buffers; a recompute (ForwardArgs::recompute) normalizes with
/// the statistics the last training forward saved and updates nothing. Every reduction has a fixed
/// order fixed at construction (no atomics): results are bitwise reproducible, and the fused chain
/// gets the bits of the unfused one. Work is enqueued on the given stream, nothing waits; views are
/// device memory in the core's layout. Feature maps (x, r, y and their gradients) are of the core's
/// dtype, F32 or BF16 (Note [Precision]); params, grad_params, the saved statistics and every sum
/// are F32 or wider whatever it is, and a BF16 element is read into float and rounded once when
/// stored (an accumulated target: read, added to in float, rounded once). The same reductions in
/// the same order for both: on the same values, BF16 gets F32's statistics, running buffers and
/// parameter gradients bit for bit, and its feature maps are F32's rounded to bf16. Views of
/// another dtype throw runtime::InvalidArgument. With a group of several ranks (synchronized batch
/// norm), a training forward's statistics and a training backward's input-gradient sums are every
/// rank's (BatchNormRanks: a collective on the stream, in plan order); a recompute reduces nothing.
/// x (args.inputs[0], forward and backward) may be row-strided (TensorView::row_stride, Note [Dense
/// block storage]) when its rows and stride are multiples of 8 elements and its data and every
/// other tensor 16-byte aligned (else runtime::InvalidArgument): the results are bitwise those of a
/// packed copy of x; every other view is packed. Not thread-safe.
class BatchNormCore {
 public:
  /// Allocates the saved statistics and the reduction scratch for inputs of `x_shape` (rank 4,
  /// NCHW-logical) stored in `layout` with elements of `dtype` (F32 or BF16, else
  /// runtime::InvalidArgument). `group` is LayerOptions::batch_norm_group (not owned, outlives
  /// the core): with several ranks, training passes take their sums over them (BatchNormRanks);
  /// null or one rank: this rank's alone, with no collective and no extra kernel. Throws
  /// runtime::CudaError when the allocation fails.
  BatchNormCore(const BatchNorm2dSpec& spec, const Shape& x_shape, Layout layout, DType dtype,
                runtime::Communicator* group);
  BatchNormCore(const BatchNormCore&) = delete;
  BatchNormCore& operator=(const BatchNormCore&) = delete;
  BatchNormCore(BatchNormCore&&) = delete;
  BatchNormCore& operator=(BatchNormCore&&) = delete;
  ~BatchNormCore();

  /// y = bn(x) (args.inputs[0] -> args.output); with Epilogue::Relu, y = relu(bn(x) [+ r]) in one
  /// pass, r = args.inputs[1] when given: the unfused chain's operations and roundings, a NaN
  /// stays NaN; with a smooth epilogue y = act(bn(x)), ActivationMath's formula on the float
  /// bn(x), rounded once (F32: the unfused chain's value; BF16: not bitwise the unfused chain,
  /// which rounds bn(x) to bf16 before the activation reads it). Throws runtime::InvalidArgument
  /// when training with a single value per channel, or for a residual without Epilogue::Relu.
  void forward(cudaStream_t stream, const ForwardArgs& args, Epilogue epilogue);

  /// The gradient of the last forward. g = args.grad_output, or with Epilogue::Relu the ReLU's:
  /// y > 0 ? grad_output : 0 with the residual (args.output: that forward's y), without it the
  /// same mask renormalized from args.inputs[0] with the forward's statistics (args.output is not
  /// read). Writes grad_params (weight, bias) where non-empty, grad_inputs[0] from args.inputs[0]
  /// and, when there is a non-empty grad_inputs[1] (the residual's), grad_inputs[1] (+)= g, each
  /// honouring its own GradTarget::accumulate. When the residual's gradient is overwritten, the
  /// reduction writes g there and the input-gradient pass reads it back instead of dy and y; else
  /// all input gradients come from one element-wise pass. Never reads args.inputs[1]. Returns at
  /// once when no gradient is asked for. With a smooth epilogue g = act'(z) * grad_output in float,
  /// z = args.inputs[0] renormalized so (never stored: the passes over x each derive it).
  void backward(cudaStream_t stream, const BackwardArgs& args, Epilogue epilogue);

 private:
  // forward and backward with feature maps of T (float or __nv_bfloat16), defined in the .cu.
  template <typename T>
  void forward_as(cudaStream_t stream, const ForwardArgs& args, Epilogue epilogue);
  template <typename T>
  void backward_as(cudaStream_t stream, const BackwardArgs& args, Epilogue epilogue);

  // The elements from one row of x to the next: a row's when x is packed, else its row stride
  // (Note [Dense block storage]). Throws runtime::InvalidArgument for a row-strided x of another
  // layout, or whose rows, stride or data the kernels cannot read in whole 16-byte vectors.
  std::int64_t x_pitch(const TensorView& x) const;

  float* mean() const { return per_channel_.as<float>(); }
  float* inv_std() const { return per_channel_.as<float>() + channels_; }
  float* scale() const { return per_channel_.as<float>() + 2 * channels_; }  // weight * inv_std
  float* coeff_a() const { return per_channel_.as<float>() + 3 * channels_; }
  float* coeff_b() const { return per_channel_.as<float>() + 4 * channels_; }
  float* coeff_k() const { return per_channel_.as<float>() + 5 * channels_; }
  RankPartials local_partials() const {
    return {partials_.as<double>(), static_cast<int>(parts_),
            static_cast<double>(shape_.n() * shape_.h() * shape_.w())};
  }

  BatchNorm2dSpec spec_;
  Shape shape_;
  Layout layout_;
  DType dtype_;
  std::int64_t channels_;
  std::int64_t parts_;  // first-level reduction blocks per channel (NCHW) or row chunks
  DeviceBuffer
      per_channel_;        // [6C]: mean, inv_std, scale of the last forward; coefficients a, b, k
  DeviceBuffer partials_;  // [2 * C * parts] doubles: the first-level sums
  std::unique_ptr<BatchNormRanks> ranks_;  // synchronized batch norm's; null: this rank alone
  bool batch_stats_ = true;  // whether the last forward normalized with batch statistics
};

}  // namespace vdnn::layers::cuda
