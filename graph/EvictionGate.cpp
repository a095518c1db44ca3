// Waiting for managed evictions before the budget's room is reused (Note [Managed memory]).
#include "graph/EvictionGate.hpp"

#include <algorithm>

namespace vdnn::graph {

void EvictionGate::evicted(const runtime::ResidentTensor& tensor, std::uint64_t bytes) {
  if (room_ == 0) return;
  in_flight_.push_back({&tensor, bytes});
  in_flight_bytes_ += bytes;
}

void EvictionGate::returned(const runtime::ResidentTensor& tensor) {
  const auto found = std::find_if(in_flight_.begin(), in_flight_.end(),
                                  [&](const InFlight& e) { return e.tensor == &tensor; });
  if (found == in_flight_.end()) return;
  in_flight_bytes_ -= found->bytes;
  in_flight_.erase(found);
}

void EvictionGate::before_rise(runtime::Stream& compute, std::uint64_t planned) {
  const std::uint64_t slack = room_ > planned ? room_ - planned : 0;
  const runtime::ResidentTensor* last = nullptr;
  while (!in_flight_.empty() && in_flight_bytes_ > slack) {
    last = in_flight_.front().tensor;
    in_flight_bytes_ -= in_flight_.front().bytes;
    in_flight_.pop_front();
  }
  // The offload stream runs evictions in order: waiting for the last one waits for all before it.
  if (last != nullptr) last->wait_for_eviction(compute);
}

void EvictionGate::clear() noexcept {
  in_flight_.clear();
  in_flight_bytes_ = 0;
}

}  // namespace vdnn::graph
