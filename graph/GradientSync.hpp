// GradientSync: the data-parallel part of a training step: the flat gradient buffer cut into
// buckets in backward order, each averaged over the ranks as soon as the backward pass has
// written it, and the parameters broadcast from rank 0 at the start (Note [Data parallelism]).
#pragma once

#include <cstddef>
#include <exception>
#include <vector>

#include "graph/Graph.hpp"
#include "graph/ParameterStore.hpp"
#include "graph/Plan.hpp"
#include "runtime/Communicator.hpp"
#include "runtime/Stream.hpp"

namespace vdnn::graph {

/// Bucket sizes, PyTorch DDP's defaults: a bucket closes once it holds at least `bytes` of
/// gradients (the first one at `first_bytes`, so that communication starts early).
struct BucketCaps {
  std::size_t first_bytes = std::size_t{1} << 20;
  std::size_t bytes = std::size_t{25} << 20;
};

/// A byte range of the flat gradient buffer, all-reduced as one.
struct GradientBucket {
  std::size_t offset = 0;  // bytes from the buffer's start
  std::size_t bytes = 0;   // a multiple of 4: floats, padding between gradients included
  NodeId ready_after = 0;  // the node whose backward writes the bucket's last gradient
};

/// The nodes in the order the plan runs their backward passes (Op::Backward).
std::vector<NodeId> backward_order(const Plan& plan);

/// The flat gradient buffer of `params` (made with a gradient order) cut into buckets in that
/// order, covering all of it. Throws InvalidArgument for a store without one, or a zero cap.
std::vector<GradientBucket> cut_buckets(const ParameterStore& params, const BucketCaps& caps);

/// One rank's gradient exchange over a communicator of more than one rank. Not thread-safe: the
/// executor's thread drives it.
class GradientSync {
 public:
  /// Throws InvalidArgument as cut_buckets.
  GradientSync(runtime::Communicator& communicator, const ParameterStore& params,
               const BucketCaps& caps);

  /// Overwrites every parameter and buffer with rank 0's on `stream`, and waits for it. Throws
  /// CommunicatorError.
  void broadcast_parameters(runtime::Stream& stream, const ParameterStore& params);
  /// A step starts: no bucket is reduced yet.
  void begin_step() noexcept { next_ = 0; }
  /// After `node`'s backward is enqueued on `stream`: enqueues the mean over the ranks of every
  /// bucket it completes, in bucket order (the same on every rank).
  void after_backward(runtime::Stream& stream, NodeId node);
  /// Throws InvalidArgument unless every bucket was enqueued this step.
  void check_all_reduced() const;
  /// After the step's work completed: throws CommunicatorError when the group failed meanwhile
  /// (NCCL's watchdog aborts a collective that hangs, and the stream then completes).
  void check_completed() { communicator_.raise_if_failed(); }
  /// Ends the group after `error` ended this rank's step, so that no other rank waits for it.
  void abort(const std::exception_ptr& error) noexcept;

  const std::vector<GradientBucket>& buckets() const noexcept { return buckets_; }

 private:
  runtime::Communicator& communicator_;
  float* flat_;
  std::vector<GradientBucket> buckets_;
  std::size_t next_ = 0;
};

}  // namespace vdnn::graph
