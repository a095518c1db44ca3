// MemoryCheck: before a run allocates anything, the host memory it needs at the least against
// what the machine has, so that an absurd network or batch fails with the numbers and the tensors
// to blame instead of std::bad_alloc halfway through setup.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/Graph.hpp"
#include "graph/Plan.hpp"
#include "layers/Layer.hpp"
#include "runtime/Error.hpp"
#include "runtime/HostMemory.hpp"

namespace vdnn::graph {

/// One item of host memory a run needs, named for messages ("the synthetic dataset").
struct HostNeed {
  std::string what;
  std::uint64_t bytes = 0;
};

/// A run needs more host memory than the machine has available (exit code 3 in the CLI, as a
/// budget that does not fit). bytes_requested() is the need, bytes_limit() what is available.
class HostMemoryExceeded : public runtime::OutOfMemory {
 public:
  using OutOfMemory::OutOfMemory;
};

/// The host memory a training step of `graph` on `backend` needs at the least, item by item, from
/// a plan of `policy` made without budget or workspace (fast; layers add their workspace later):
/// the pinned input and label batch; without a budget, the pinned pool of the offloads (managed
/// memory on CUDA: the host pages its evictions take); on the CPU backend, where device memory is
/// host memory, the device pool (at most `budget_bytes` when that is not 0, unless the pool is
/// managed). Runs no kernel and allocates no tensor. Throws as make_plan.
std::vector<HostNeed> host_needs(const Graph& graph, Policy policy, std::uint64_t budget_bytes,
                                 layers::Backend backend);

/// The bytes of `needs` together (saturating at UINT64_MAX).
std::uint64_t total_bytes(const std::vector<HostNeed>& needs);

/// What a run leaves the rest of the machine when it plans its pinned memory: an eighth of the
/// `available` host memory, at least 4 GiB.
std::uint64_t host_headroom(std::uint64_t available);

/// The pinned host memory the offloaded maps of a training step of `graph` may take (Note [Host
/// budget]): machine.available_bytes less host_headroom and less the host memory the run needs
/// besides (host_needs without the pinned pool, and `extra`); 0 when nothing is left, and
/// kNoHostBudget when the machine's memory is unknown.
std::uint64_t pinned_room(const Graph& graph, Policy policy, std::uint64_t budget_bytes,
                          layers::Backend backend, const std::vector<HostNeed>& extra,
                          const runtime::HostMemory& machine);

/// Throws HostMemoryExceeded when host_needs(graph, policy, budget_bytes, backend) and `extra`
/// together are more than machine.available_bytes. The message gives both totals, every item
/// largest first, and the largest feature maps of `graph` with their shapes.
void check_host_memory(const Graph& graph, Policy policy, std::uint64_t budget_bytes,
                       layers::Backend backend, const std::vector<HostNeed>& extra,
                       const runtime::HostMemory& machine);

}  // namespace vdnn::graph
