// LocalCommunicatorGroup: N communicator endpoints in one process, one per thread, standing in
// for NCCL on the CPU backend (issue 27's CPU tests, Note [Data parallelism]).
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "runtime/Communicator.hpp"

namespace vdnn::runtime {

namespace detail {
struct LocalGroupState;
}  // namespace detail

/// Makes `size` endpoints that meet in memory. A collective runs when the stream's work reaches
/// it (CPU streams: on their worker threads) and waits there for the other ranks, each wait at
/// most `timeout`; a rank that does not come in time fails the group, naming that rank. Sums run
/// in rank order (rank 0 + rank 1 + ...), each element once, so a run repeats bitwise and every
/// rank gets the same bits. The group must outlive its endpoints' use.
class LocalCommunicatorGroup {
 public:
  /// Throws InvalidArgument unless 1 <= size <= 4096 and timeout > 0.
  LocalCommunicatorGroup(int size, std::chrono::milliseconds timeout);
  LocalCommunicatorGroup(const LocalCommunicatorGroup&) = delete;
  LocalCommunicatorGroup& operator=(const LocalCommunicatorGroup&) = delete;
  LocalCommunicatorGroup(LocalCommunicatorGroup&&) = delete;
  LocalCommunicatorGroup& operator=(LocalCommunicatorGroup&&) = delete;
  ~LocalCommunicatorGroup();

  /// Rank `rank`'s endpoint, for one thread to drive. Throws InvalidArgument out of range.
  Communicator& endpoint(int rank);

 private:
  std::shared_ptr<detail::LocalGroupState> state_;
  std::vector<std::unique_ptr<Communicator>> endpoints_;
};

}  // namespace vdnn::runtime
