// The errors the vdnn library throws. Every call of the public API documents which of these it
// throws; none throws anything else on purpose (std::bad_alloc aside).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <vdnn/Export.hpp>

namespace vdnn {

/// Base of every error the library throws. what() is a complete sentence for a user: it names the
/// file, layer or value at fault.
class VDNN_EXPORT Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A caller broke a documented precondition: an unknown policy name, a batch of 0, a layer name
/// used twice, a call in the wrong state.
class VDNN_EXPORT InvalidArgument : public Error {
 public:
  using Error::Error;
};

/// The network is not valid: an unreadable or malformed config, an unknown layer type, a shape a
/// layer cannot take. what() starts with the file (or the network's name) and where in it.
class VDNN_EXPORT NetworkError : public Error {
 public:
  using Error::Error;
};

/// Memory ran out: the device pool, pinned host memory or the device itself.
class VDNN_EXPORT OutOfMemory : public Error {
 public:
  OutOfMemory(const std::string& what, std::uint64_t bytes_requested, std::uint64_t bytes_limit)
      : Error(what), bytes_requested_(bytes_requested), bytes_limit_(bytes_limit) {}
  std::uint64_t bytes_requested() const noexcept { return bytes_requested_; }
  std::uint64_t bytes_limit() const noexcept { return bytes_limit_; }

 private:
  std::uint64_t bytes_requested_;
  std::uint64_t bytes_limit_;
};

/// The run cannot fit before it starts: the policy's plan exceeds the memory budget, the host
/// cannot hold the pinned pool and the data, or a managed pool would oversubscribe the device.
class VDNN_EXPORT DoesNotFit : public OutOfMemory {
 public:
  using OutOfMemory::OutOfMemory;
};

/// Input data is malformed or unreadable (a dataset file; what() names the file and record).
class VDNN_EXPORT DataError : public Error {
 public:
  using Error::Error;
};

/// A checkpoint is unreadable, damaged (checksum), or does not match the network; what() lists
/// every difference.
class VDNN_EXPORT CheckpointError : public DataError {
 public:
  using DataError::DataError;
};

/// Training diverged: the loss (or, when checked, a gradient) is not finite at iteration().
class VDNN_EXPORT Diverged : public Error {
 public:
  Diverged(const std::string& what, std::int64_t iteration) : Error(what), iteration_(iteration) {}
  std::int64_t iteration() const noexcept { return iteration_; }

 private:
  std::int64_t iteration_;
};

/// A CUDA, cuDNN or cuBLAS call failed (what() carries the call and the error string).
class VDNN_EXPORT DeviceError : public Error {
 public:
  using Error::Error;
};

/// A data-parallel run failed between processes: a rank aborted (its step threw), died or hung
/// past the timeout, or the rendezvous failed. failed_rank() is the rank named, -1 where it is
/// not known (NCCL cannot tell which rank hung).
class VDNN_EXPORT DistributedError : public Error {
 public:
  DistributedError(const std::string& what, int failed_rank)
      : Error(what), failed_rank_(failed_rank) {}
  int failed_rank() const noexcept { return failed_rank_; }

 private:
  int failed_rank_;
};

}  // namespace vdnn
