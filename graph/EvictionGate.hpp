// EvictionGate: under a budget, managed pages really leave the device before the plan counts on
// the room they free (Note [Managed memory] in docs/ARCHITECTURE.md).
#pragma once

#include <cstdint>
#include <deque>

#include "runtime/ResidentTensor.hpp"
#include "runtime/Stream.hpp"

namespace vdnn::graph {

/// The plan counts an evicted map's bytes as gone at once, but its pages leave the device only
/// when the eviction on the offload stream completes. Before device bytes rise, the gate makes the
/// compute stream wait for the oldest evictions until those still in flight, added to the plan's
/// device bytes, fit the room the budget leaves. A dedicated pool does the same by construction:
/// an allocation that lands on released memory waits for the release (Note [Deferred frees]).
/// Used from the executor's host thread; the tensors must outlive the step.
class EvictionGate {
 public:
  /// `room`: the budget less the resident bytes; 0 means no budget, and the gate never waits.
  explicit EvictionGate(std::uint64_t room) : room_(room) {}

  /// `tensor`'s eviction of `bytes` was just enqueued on the offload stream.
  void evicted(const runtime::ResidentTensor& tensor, std::uint64_t bytes);
  /// `tensor` comes back (migrated or faulted in): whatever brings it back waits for its eviction.
  void returned(const runtime::ResidentTensor& tensor);
  /// Device bytes are about to rise to `planned` (the plan's figure after the action): `compute`
  /// waits for evictions, oldest first, until the ones still in flight fit beside it.
  void before_rise(runtime::Stream& compute, std::uint64_t planned);
  /// Forgets every eviction: at the end of a step, once the streams are synchronized.
  void clear() noexcept;

 private:
  struct InFlight {
    const runtime::ResidentTensor* tensor;
    std::uint64_t bytes;
  };
  std::uint64_t room_;
  std::deque<InFlight> in_flight_;  // in the offload stream's order
  std::uint64_t in_flight_bytes_ = 0;
};

}  // namespace vdnn::graph
