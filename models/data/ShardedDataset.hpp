// ShardedDataset: one rank's share of a data stream in a data-parallel run: the rank-th
// batch-sized slice of every global batch (Note [Data parallelism]).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/data/Dataset.hpp"

namespace vdnn::models {

/// Rank `rank` of `world_size` drawing batches of `batch` from `source`: its i-th batch is
/// samples [(i * world_size + rank) * batch, ... + batch) of the source's stream, the rank-th
/// slice of the i-th global batch of world_size * batch; so the ranks together see what one
/// process at world_size * batch would, epochs and shuffles included (every sample is a pure
/// function of its number). Sample numbers of next_batch/seek are this rank's own.
class ShardedDataset final : public Dataset {
 public:
  /// Throws runtime::InvalidArgument unless 0 <= rank < world_size and batch >= 1.
  ShardedDataset(std::shared_ptr<Dataset> source, int rank, int world_size, std::int64_t batch);

  /// Throws runtime::InvalidArgument for another batch than the constructor's; what the source
  /// throws.
  void next_batch(std::int64_t batch, void* images, std::int32_t* labels) override;
  /// This rank's sample `sample` (a multiple of the batch when resuming) is the next drawn.
  void seek(std::int64_t sample) override;
  std::vector<std::string> class_names() const override { return source_->class_names(); }
  std::vector<std::string> bad_images() const override { return source_->bad_images(); }
  bool image_bytes() const noexcept override { return source_->image_bytes(); }
  std::int64_t size() const noexcept override { return source_->size(); }
  std::string description() const override;

 private:
  std::shared_ptr<Dataset> source_;
  int rank_;
  int world_size_;
  std::int64_t batch_;
  std::int64_t next_ = 0;  // this rank's next sample
};

}  // namespace vdnn::models
