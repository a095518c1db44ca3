// Distributed: the communicator of a data-parallel run of several processes, made from where
// the process stands in it (issue 27, Note [Data parallelism]).
#pragma once

#include <chrono>
#include <memory>

#include "layers/Layer.hpp"
#include "runtime/Communicator.hpp"
#include "runtime/Rendezvous.hpp"

namespace vdnn::models {

/// Default of --nccl-timeout: the longest wait for a rank or a collective.
inline constexpr std::chrono::seconds kDefaultDistributedTimeout{300};

/// What a process needs to join a data-parallel run.
struct DistributedOptions {
  runtime::LaunchConfig launch;  // world_size 1: a single process
  std::chrono::milliseconds timeout = kDefaultDistributedTimeout;
  bool deterministic = false;  // NCCL's algorithm and protocol pinned (NcclOptions)
};

/// Throws runtime::InvalidArgument naming the value unless 1 <= world_size, 0 <= rank <
/// world_size, 0 <= local_rank, 1 <= master_port <= 65535 and the timeout is positive.
void validate(const DistributedOptions& options);

/// This process's endpoint of the run on `backend`: null for a world of one; NCCL on CUDA
/// (runtime::cuda::make_nccl_communicator, on device launch.local_rank). Throws
/// runtime::InvalidArgument as validate, and for several processes on the CPU backend or in a
/// build without CUDA (the CPU has ranks as threads of one process only:
/// runtime::LocalCommunicatorGroup); what make_nccl_communicator throws.
std::unique_ptr<runtime::Communicator> make_communicator(const DistributedOptions& options,
                                                         layers::Backend backend);

}  // namespace vdnn::models
