// Builds a run in dependency order: layers, plan, context, executor.
#include "graph/Session.hpp"

#include <utility>

#include "runtime/cpu/CpuContext.hpp"

namespace vdnn::graph {
namespace {

std::unique_ptr<runtime::ExecutionContext> make_context(const SessionOptions& options) {
  if (options.backend == layers::Backend::Cpu) {
    return std::make_unique<runtime::cpu::CpuContext>(options.stress);
  }
  throw runtime::InvalidArgument(std::string("no execution context for the ") +
                                 layers::backend_name(options.backend) +
                                 " backend in this build");
}

layers::LayerOptions layer_options(const SessionOptions& options) {
  layers::LayerOptions o;
  o.seed = options.executor.seed;
  return o;
}

PlanRequest request_for(const SessionOptions& options, const LayerSet& layers) {
  PlanRequest r;
  r.policy = options.policy;
  r.budget_bytes = options.budget_bytes;
  r.workspace_bytes = layers.workspace_bytes();
  return r;
}

}  // namespace

Session::Session(Graph graph, const SessionOptions& options)
    : graph_(std::move(graph)),
      layers_(graph_, options.backend, layer_options(options)),
      plan_(make_plan(graph_, request_for(options, layers_))),
      context_(make_context(options)),
      executor_(std::make_unique<Executor>(graph_, layers_, plan_, *context_, options.executor)) {}

Session::~Session() = default;

}  // namespace vdnn::graph
