// WeightCopies: the bf16 copies of the F32 master weights that BF16 layers read
// (layers::param_read_in_precision, Note [Precision]), rounded from their masters once per step
// instead of on every use.
#pragma once

#include <memory>
#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers {

/// One weight: its F32 master and its BF16 copy, views of one shape and layout.
struct WeightCopy {
  TensorView master;
  TensorView copy;
};

/// Rounds each copy of a fixed list from its master, to nearest even as every bf16 store.
class WeightCopier {
 public:
  WeightCopier() = default;
  WeightCopier(const WeightCopier&) = delete;
  WeightCopier& operator=(const WeightCopier&) = delete;
  WeightCopier(WeightCopier&&) = delete;
  WeightCopier& operator=(WeightCopier&&) = delete;
  virtual ~WeightCopier() = default;
  /// Every copy from its master: run as a task of the compute stream (CUDA: enqueues one launch
  /// for every copy there and returns). Throws runtime::CudaError when the launch fails.
  virtual void refresh() = 0;
};

/// The copier of `copies` on `backend` (CUDA: on options.cuda's compute stream; it uploads a table
/// of the copies once, here). Throws runtime::InvalidArgument for a pair that is not an F32
/// master and a BF16 copy of one shape and layout, or a backend this build lacks;
/// runtime::CudaError.
std::unique_ptr<WeightCopier> make_weight_copier(Backend backend, const LayerOptions& options,
                                                 std::vector<WeightCopy> copies);

/// Throws runtime::InvalidArgument naming the first pair of `copies` that is not an F32 master
/// and a BF16 copy of one shape and layout.
void check_weight_copies(const std::vector<WeightCopy>& copies);

}  // namespace vdnn::layers
