// BatchNorm2dCpu: batch normalization over N, H, W per channel on the CPU backend (Eigen), for F32
// and F64 tensors.
#pragma once

#include <cstdint>
#include <vector>

#include "layers/Layer.hpp"
#include "runtime/Communicator.hpp"

namespace vdnn::layers::cpu {

/// Params: weight, bias, running_mean, running_var (all [C]). Training forward normalizes with the
/// batch mean and biased variance and updates the running buffers in place, PyTorch style:
/// running = (1 - momentum) * running + momentum * batch, with the unbiased batch variance; it
/// throws runtime::InvalidArgument when a channel has a single value (N * H * W == 1). Inference
/// forward normalizes with the running buffers. A recompute (ForwardArgs::recompute) normalizes
/// with the statistics the last training forward saved and updates nothing. With
/// LayerOptions::batch_norm_group of several ranks (synchronized batch norm), training forward
/// sums its per-channel sums over the ranks first, so the statistics (and the running buffers,
/// unbiased with the global count) are the global batch's, and backward sums its two per-channel
/// sums for the input gradient likewise; every rank runs these layers in the same order. Backward
/// reads the input (backward_needs: inputs), differentiates the normalization the last forward
/// used, writes grad_params (weight, bias) where non-empty and the input gradient honouring
/// GradTarget::accumulate. x (args.inputs[0]) may be a row-strided NCHW view (a sample per row,
/// Note [Dense block storage]) in forward, backward and normalize_again: the results are bitwise a
/// packed copy's when its planes keep their alignment to Eigen's vectors (a row stride of a
/// multiple of 8 elements does); every other view is packed. Allocates only at construction. Not
/// thread-safe; see layers/Layer.hpp for the argument contract.
class BatchNorm2dCpu final : public Layer {
 public:
  BatchNorm2dCpu(const BatchNorm2dSpec& spec, std::vector<Shape> input_shapes,
                 const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;
  /// Whether the last forward normalized with batch statistics (training) rather than the running
  /// buffers: what a later forward must pass as ForwardArgs::training to normalize the same way.
  bool batch_stats() const noexcept { return batch_stats_; }
  /// y = bn(x) again, into `out` (of x's shape and this layer's dtype): the last forward's
  /// normalization bit for bit (a recompute after training, the running buffers again after
  /// inference), updating nothing. What the fused layers' backward renormalizes x with to find
  /// their activation's derivative without keeping bn(x). `params` as ForwardArgs::params.
  void normalize_again(const TensorView& x, const std::vector<TensorView>& params,
                       const TensorView& out);

 private:
  // x's samples are x_sample_pitch elements apart.
  template <typename T>
  void batch_statistics(const T* x, std::int64_t x_sample_pitch, T* running_mean, T* running_var);
  template <typename T>
  void forward_typed(const ForwardArgs& args);
  template <typename T>
  void backward_typed(const BackwardArgs& args);

  BatchNorm2dSpec spec_;
  // Per channel, saved by forward for backward.
  std::vector<double> mean_;
  std::vector<double> inv_std_;
  runtime::Communicator* group_;  // the ranks the statistics are taken over; null: this one
  bool batch_stats_ = true;       // whether the last forward normalized with batch statistics
};

}  // namespace vdnn::layers::cpu
