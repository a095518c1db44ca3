// A rank's slice of each global batch, drawn by seeking the shared stream.
#include "models/data/ShardedDataset.hpp"

#include <utility>

#include "runtime/Error.hpp"

namespace vdnn::models {

ShardedDataset::ShardedDataset(std::shared_ptr<Dataset> source, int rank, int world_size,
                               std::int64_t batch)
    : source_(std::move(source)), rank_(rank), world_size_(world_size), batch_(batch) {
  VDNN_EXPECTS(source_ != nullptr, "a sharded dataset needs a source");
  VDNN_EXPECTS(rank >= 0 && rank < world_size,
               "rank " + std::to_string(rank) + " of a world of " + std::to_string(world_size));
  VDNN_EXPECTS(batch >= 1, "a batch has at least one sample, got " + std::to_string(batch));
}

void ShardedDataset::next_batch(std::int64_t batch, void* images, std::int32_t* labels) {
  VDNN_EXPECTS(batch == batch_, "rank " + std::to_string(rank_) + " draws batches of " +
                                    std::to_string(batch_) + ", asked for " +
                                    std::to_string(batch));
  const std::int64_t global_batch = next_ / batch_;
  const std::int64_t within = next_ % batch_;
  source_->seek((global_batch * world_size_ + rank_) * batch_ + within);
  source_->next_batch(batch, images, labels);
  next_ += batch;
}

void ShardedDataset::seek(std::int64_t sample) {
  VDNN_EXPECTS(sample >= 0, "a sample number is never negative, got " + std::to_string(sample));
  next_ = sample;
}

std::string ShardedDataset::description() const {
  return source_->description() + ", rank " + std::to_string(rank_) + " of " +
         std::to_string(world_size_);
}

}  // namespace vdnn::models
