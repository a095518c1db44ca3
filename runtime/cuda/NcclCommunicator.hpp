// NcclCommunicator: the Communicator of a multi-GPU run, one process per GPU over NCCL, its
// unique id exchanged through the rendezvous, every wait bounded by a watchdog that aborts the
// communicator (issue 27, Note [Data parallelism]).
#pragma once

#include <chrono>
#include <memory>

#include "runtime/Communicator.hpp"
#include "runtime/Rendezvous.hpp"

namespace vdnn::runtime::cuda {

/// How an NCCL communicator is made and watched.
struct NcclOptions {
  /// The longest wait for the rendezvous, the communicator's setup and each collective
  /// (--nccl-timeout); past it the communicator is aborted and the error names the operation.
  std::chrono::milliseconds timeout{300000};
  /// Pins NCCL_ALGO=Ring and NCCL_PROTO=Simple (in this process's environment, before the
  /// communicator is made), so that a run repeats bitwise at a fixed world size.
  bool deterministic = false;
};

/// This process's endpoint of `launch`'s run: cudaSetDevice(launch.local_rank), the NCCL unique
/// id from rank 0 through the rendezvous on launch.master_addr:master_port (or, with NCCL_COMM_ID
/// set, NCCL's own bootstrap there), ncclCommInitRankConfig non-blocking. Collectives go on the
/// CUDA stream given (a CudaContext's); a watchdog thread aborts the communicator (ncclCommAbort)
/// when one does not complete within the timeout or NCCL reports an asynchronous error, and every
/// later call throws CommunicatorError. Throws RendezvousError, CommunicatorError (setup failed
/// or timed out), CudaError, InvalidArgument (a stream that is not CUDA's).
std::unique_ptr<Communicator> make_nccl_communicator(const LaunchConfig& launch,
                                                     const NcclOptions& options);

}  // namespace vdnn::runtime::cuda
