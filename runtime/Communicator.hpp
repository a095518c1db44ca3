// Communicator: the collectives data parallelism needs (all-reduce, broadcast, barrier, abort),
// behind one interface: NCCL on CUDA, an in-process group of threads on the CPU (issue 27,
// Note [Data parallelism]).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/Error.hpp"
#include "runtime/Stream.hpp"

namespace vdnn::runtime {

/// A collective that failed: a rank aborted (its step threw), did not come within the timeout,
/// or called another collective than the rest. failed_rank() is that rank, the message names it;
/// -1 where the transport cannot tell (NCCL's timeouts: some other rank died or hung).
class CommunicatorError : public Error {
 public:
  CommunicatorError(const std::string& what, int failed_rank)
      : Error(what), failed_rank_(failed_rank) {}
  int failed_rank() const noexcept { return failed_rank_; }

 private:
  int failed_rank_;
};

/// How all_reduce combines the ranks' values: their sum, or their mean (the sum times 1/size()).
enum class Reduction : std::uint8_t { Sum, Mean };

/// One rank's endpoint of a group of size() ranks. Collectives are enqueued on the stream given
/// (its first parameter) and must be called by every rank in the same order with the same sizes;
/// they complete when that stream's work does, and their errors (CommunicatorError) come out of
/// the stream's synchronize(). One host thread drives an endpoint; abort() may come from any.
class Communicator {
 public:
  Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  Communicator(Communicator&&) = delete;
  Communicator& operator=(Communicator&&) = delete;
  virtual ~Communicator() = default;

  virtual int rank() const noexcept = 0;
  virtual int size() const noexcept = 0;
  /// Replaces `count` floats at `data` (the stream's memory) by their reduction over the ranks,
  /// the same bits on every rank. Throws InvalidArgument for a null `data` with a count.
  virtual void all_reduce(Stream& stream, float* data, std::size_t count, Reduction op) = 0;
  /// Copies rank 0's `bytes` at `data` into every other rank's `data`.
  virtual void broadcast(Stream& stream, void* data, std::size_t bytes) = 0;
  /// Returns once every rank has called it. Throws CommunicatorError (a rank aborted or is late
  /// past the timeout).
  virtual void barrier() = 0;
  /// Every rank's `value`, in rank order, on every rank (host to host: per-step numbers such as
  /// step times); blocks as barrier() does and throws as it.
  virtual std::vector<double> all_gather(double value) = 0;
  /// Device memory the transport itself took when the group was set up, which no memory pool of
  /// this process sees (NCCL's buffers: the device's free memory before its setup less after it
  /// and a first collective; the planner keeps it inside the budget); 0 where it takes none.
  virtual std::uint64_t device_bytes() const noexcept { return 0; }
  /// The all-reduce bus bandwidth the transport measured at setup, in bytes per second: a large
  /// all-reduce's bytes x 2 (size() - 1) / size() over its time (NCCL's "bus bandwidth", what the
  /// planner's step-time model divides by); 0 where it measures none (in-process ranks), and the
  /// planner assumes graph::kAllReduceBusBytesPerSecond.
  virtual double bus_bytes_per_second() const noexcept { return 0.0; }
  /// Throws CommunicatorError once the group has failed (an abort, a timeout, an error of a
  /// collective that completed on the device without saying so).
  virtual void raise_if_failed() = 0;
  /// Ends the group: every rank's pending and later collectives throw CommunicatorError naming
  /// this rank and `reason`. The first abort of a group is the one reported. Never throws.
  virtual void abort(const std::string& reason) noexcept = 0;
};

}  // namespace vdnn::runtime
