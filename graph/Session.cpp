// Builds a run in dependency order: the execution context, the search's choices (layers, costs,
// plan), the executor.
#include "graph/Session.hpp"

#include <cstdint>
#include <utility>

#include "graph/SharedPlan.hpp"
#include "runtime/ByteSize.hpp"
#include "runtime/cpu/CpuContext.hpp"
#ifdef VDNN_HAVE_CUDA
#include "runtime/cuda/CudaContext.hpp"
#endif

namespace vdnn::graph {

std::unique_ptr<runtime::ExecutionContext> make_context(const SessionOptions& options) {
  if (options.progress != nullptr) options.progress->begin("context", "starting the device");
  if (options.backend == layers::Backend::Cpu) {
    return std::make_unique<runtime::cpu::CpuContext>(options.stress, options.cpu_free_device_bytes,
                                                      options.cpu_peer);
  }
#ifdef VDNN_HAVE_CUDA
  return std::make_unique<runtime::cuda::CudaContext>(options.device);
#else
  throw runtime::InvalidArgument("this build has no CUDA backend");
#endif
}

namespace {

layers::LayerOptions layer_options(const SessionOptions& options,
                                   runtime::ExecutionContext& context, layers::LayerCache& cache) {
  layers::LayerOptions o;
  o.seed = options.executor.seed;
  o.deterministic = options.deterministic;
  o.allow_tf32 = options.allow_tf32;
  o.label_smoothing = options.label_smoothing;
  o.cache = &cache;
  o.disk_cache = options.disk_cache;
  o.batch_norm_group = options.executor.batch_norm_communicator;
#ifdef VDNN_HAVE_CUDA
  if (auto* cuda = dynamic_cast<runtime::cuda::CudaContext*>(&context)) o.cuda = &cuda->device();
#else
  static_cast<void>(context);
#endif
  return o;
}

// `options` with the communicator's own `bytes` of device memory taken out of its budget (none:
// the device's free memory, measured after the communicator's setup, leaves them out already).
SessionOptions inside_budget(const SessionOptions& options, std::uint64_t bytes) {
  SessionOptions planning = options;
  if (options.budget_bytes == 0 || bytes == 0) return planning;
  if (options.budget_bytes <= bytes) {
    throw DoesNotFit("the communicator's own " + runtime::format_bytes(bytes) +
                         " of device memory (NCCL's) take the whole budget of " +
                         runtime::format_bytes(options.budget_bytes),
                     bytes, 0, options.budget_bytes);
  }
  planning.budget_bytes -= bytes;
  return planning;
}

// The search's result; in a data-parallel run, NCCL's own memory inside the budget and rank 0's
// plan on every rank (Note [Data parallelism]): each rank searched with costs of its own, which
// may differ.
SearchResult searched(const Graph& graph, const SessionOptions& options,
                      runtime::ExecutionContext& context, layers::LayerCache& cache) {
  runtime::Communicator* communicator = options.executor.communicator;
  SessionOptions planning =
      inside_budget(options, communicator != nullptr ? communicator->device_bytes() : 0);
  if (communicator != nullptr) {
    planning.data_parallel.world_size = communicator->size();
    if (communicator->bus_bytes_per_second() > 0.0) {
      planning.data_parallel.bus_bytes_per_second = communicator->bus_bytes_per_second();
    }
    planning.data_parallel.buckets = options.executor.buckets;
  }
  SearchResult found = search_run(
      graph, planning, {&context, layer_options(options, context, cache), options.progress});
  if (communicator != nullptr) {
    found.plan.communicator_bytes = communicator->device_bytes();
    use_rank0_plan(*communicator, context, found.graph, *found.layers, found.plan);
  }
  return found;
}

std::unique_ptr<Executor> make_executor(const SearchResult& found,
                                        runtime::ExecutionContext& context,
                                        const SessionOptions& options) {
  if (options.progress != nullptr) options.progress->begin("executor", "allocating memory");
  auto executor =
      std::make_unique<Executor>(found.graph, *found.layers, found.plan, context, options.executor);
  if (options.progress != nullptr) options.progress->end();
  return executor;
}

}  // namespace

Session::Session(Graph graph, const SessionOptions& options)
    : context_(make_context(options)),
      found_(searched(graph, options, *context_, layer_cache_)),
      executor_(make_executor(found_, *context_, options)) {}

Session::~Session() = default;

}  // namespace vdnn::graph
