// The communicator a process of a data-parallel run talks to the others through.
#include "models/train/Distributed.hpp"

#include <string>

#ifdef VDNN_HAVE_CUDA
#include "runtime/cuda/NcclCommunicator.hpp"
#endif

namespace vdnn::models {

void validate(const DistributedOptions& options) {
  const runtime::LaunchConfig& l = options.launch;
  VDNN_EXPECTS(l.world_size >= 1,
               "a world has at least one rank, got " + std::to_string(l.world_size));
  VDNN_EXPECTS(l.rank >= 0 && l.rank < l.world_size,
               "rank " + std::to_string(l.rank) + " of a world of " + std::to_string(l.world_size));
  VDNN_EXPECTS(l.local_rank >= 0,
               "a local rank is never negative, got " + std::to_string(l.local_rank));
  VDNN_EXPECTS(l.master_port >= 1 && l.master_port <= 65535,
               "the master port is 1-65535, got " + std::to_string(l.master_port));
  VDNN_EXPECTS(options.timeout.count() > 0, "the distributed timeout is positive, got " +
                                                std::to_string(options.timeout.count()) + " ms");
}

std::unique_ptr<runtime::Communicator> make_communicator(const DistributedOptions& options,
                                                         layers::Backend backend) {
  validate(options);
  if (options.launch.world_size == 1) return nullptr;
  VDNN_EXPECTS(backend == layers::Backend::Cuda,
               "a run of " + std::to_string(options.launch.world_size) +
                   " processes needs the CUDA backend (NCCL); the CPU backend has no transport "
                   "between processes");
#ifdef VDNN_HAVE_CUDA
  return runtime::cuda::make_nccl_communicator(options.launch,
                                               {options.timeout, options.deterministic});
#else
  throw runtime::InvalidArgument("this build has no CUDA backend, which runs several processes");
#endif
}

}  // namespace vdnn::models
