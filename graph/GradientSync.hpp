// GradientSync: the data-parallel part of a training step: the flat gradient buffer cut into
// buckets in backward order, each averaged over the ranks as soon as the backward pass has
// written it, and the parameters broadcast from rank 0 at the start (Note [Data parallelism]).
#pragma once

#include <cstddef>
#include <exception>
#include <memory>
#include <vector>

#include "graph/Graph.hpp"
#include "graph/ParameterStore.hpp"
#include "graph/Plan.hpp"
#include "runtime/Communicator.hpp"
#include "runtime/ExecutionContext.hpp"
#include "runtime/Stream.hpp"

namespace vdnn::graph {

/// A byte range of the flat gradient buffer, all-reduced as one.
struct GradientBucket {
  std::size_t offset = 0;  // bytes from the buffer's start
  std::size_t bytes = 0;   // a multiple of 4: floats, padding between gradients included
  NodeId ready_after = 0;  // the node whose backward writes the bucket's last gradient
};

/// One trainable parameter's range of the flat gradient buffer: the node whose backward writes
/// it and its bytes, the padding to the next one included.
struct GradientSpan {
  NodeId node = 0;
  std::size_t bytes = 0;
};

/// The nodes in the order the plan runs their backward passes (Op::Backward).
std::vector<NodeId> backward_order(const Plan& plan);

/// The flat gradient buffer's ranges as a ParameterStore made with backward_order(plan) lays them
/// out (each trainable parameter's F32 bytes aligned up, in that order), without allocating one:
/// for planning a data-parallel step (Note [Data parallelism]).
std::vector<GradientSpan> gradient_spans(const Graph& graph, const Plan& plan);

/// Consecutive `spans` cut into buckets in their order, covering all of them: a bucket closes
/// once it holds at least its cap. Throws InvalidArgument for a zero cap.
std::vector<GradientBucket> cut_buckets(const std::vector<GradientSpan>& spans,
                                        const BucketCaps& caps);

/// The flat gradient buffer of `params` (made with a gradient order) cut into buckets in that
/// order, covering all of it. Throws InvalidArgument for a store without one, or a zero cap.
std::vector<GradientBucket> cut_buckets(const ParameterStore& params, const BucketCaps& caps);

/// One rank's gradient exchange over a communicator of more than one rank, on a stream of its
/// own beside the compute stream, ordered by events. Not thread-safe: the executor's thread
/// drives it.
class GradientSync {
 public:
  /// Makes its stream and events from `context`, which must outlive it, and checks that every
  /// rank has rank 0's gradient layout (the same parameters, in the same backward order, in the
  /// same buckets), since the all-reduces would otherwise add up unrelated gradients. Throws
  /// InvalidArgument as cut_buckets; CommunicatorError naming the first rank whose layout
  /// differs (that rank aborts the group).
  GradientSync(runtime::Communicator& communicator, const ParameterStore& params,
               const BucketCaps& caps, runtime::ExecutionContext& context);
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;
  GradientSync(GradientSync&&) = delete;
  GradientSync& operator=(GradientSync&&) = delete;
  /// Waits for its stream; never throws.
  ~GradientSync();

  /// Overwrites every parameter and buffer with rank 0's (on its stream, after `compute`'s work)
  /// and waits for it. Throws CommunicatorError.
  void broadcast_parameters(runtime::Stream& compute, const ParameterStore& params);
  /// A step starts: no bucket is reduced yet.
  void begin_step() noexcept { next_ = 0; }
  /// After `node`'s backward is enqueued on `compute`: every bucket it completes is averaged over
  /// the ranks on the communication stream once `compute` has written it, in bucket order (the
  /// same on every rank).
  void after_backward(runtime::Stream& compute, NodeId node);
  /// Before the update: `compute` waits for each bucket's all-reduce, between two timing events
  /// (exposed_seconds). Throws InvalidArgument unless every bucket was enqueued this step.
  void before_update(runtime::Stream& compute);
  /// Of the last completed step: how long compute waited for the all-reduces after its backward
  /// pass (the communication the backward pass did not hide).
  double exposed_seconds() const { return waited_->seconds_since(*backward_done_); }
  /// After the step's work completed: throws CommunicatorError when the group failed meanwhile
  /// (NCCL's watchdog aborts a collective that hangs, and the streams then complete).
  void check_completed() { communicator_.raise_if_failed(); }
  /// Ends the group after `error` ended this rank's step, so that no other rank waits for it.
  void abort(const std::exception_ptr& error) noexcept;
  /// Waits for the communication stream, dropping its error (the step is being abandoned).
  void drain() noexcept;
  /// Throws the group's CommunicatorError when another rank failed it: the cause of this rank's
  /// failed step, rather than what the failure did here (a stream that waited on it).
  void raise_other_ranks_failure();

  const std::vector<GradientBucket>& buckets() const noexcept { return buckets_; }

 private:
  void check_layout(const ParameterStore& params);

  runtime::Communicator& communicator_;
  float* flat_;
  std::vector<GradientBucket> buckets_;
  std::unique_ptr<runtime::Stream> stream_;  // the collectives'
  // Per bucket: its gradients written (compute) and its all-reduce done (stream_).
  std::vector<std::unique_ptr<runtime::Event>> written_;
  std::vector<std::unique_ptr<runtime::Event>> reduced_;
  std::unique_ptr<runtime::Event> backward_done_;  // compute, timing: before the waits...
  std::unique_ptr<runtime::Event> waited_;         // ...and after them
  std::size_t next_ = 0;
};

}  // namespace vdnn::graph
