// Session: everything one training run needs, built in order and torn down cleanly: the graph,
// its layers on a backend, the plan for a policy and budget, the execution context and the
// executor. Many sessions may live in one process (no global state).
#pragma once

#include <cstdint>
#include <memory>

#include "graph/Search.hpp"
#include "graph/SessionOptions.hpp"
#include "runtime/ExecutionContext.hpp"

namespace vdnn::graph {

/// The execution context of options.backend (CUDA: on options.device; the CPU context with
/// options.stress and options.cpu_free_device_bytes). Tells options.progress that the device
/// starts. Throws InvalidArgument when the backend is not in this build, runtime::CudaError when
/// the device cannot start.
std::unique_ptr<runtime::ExecutionContext> make_context(const SessionOptions& options);

/// Owns a run. Construction throws DoesNotFit (exit code 3 in the CLI) when the policy cannot fit
/// the budget, runtime::OversubscriptionRefused (also exit code 3) when a managed pool is larger
/// than the device's free memory and oversubscription is not allowed, InvalidArgument when the
/// backend is not available in this build. With options.executor.communicator of several ranks,
/// every rank runs rank 0's plan (use_rank0_plan; every rank constructs its session at the same
/// time), and construction throws runtime::CommunicatorError as that does.
class Session {
 public:
  Session(Graph graph, const SessionOptions& options);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  Session(Session&&) = delete;
  Session& operator=(Session&&) = delete;
  ~Session();

  /// The graph the session runs: the given one after the fusion the search chose, with its layout
  /// set.
  const Graph& graph() const noexcept { return found_.graph; }
  /// The chains fused (none without SessionOptions::fuse), and those the search left unfused.
  const std::vector<FusedChain>& fusion() const noexcept { return found_.fusion; }
  const std::vector<FusedChain>& declined_fusion() const noexcept { return found_.declined; }
  /// The layout the feature maps use, and why.
  const LayoutDecision& layout() const noexcept { return found_.layout; }
  const Plan& plan() const noexcept { return found_.plan; }
  const LayerSet& layers() const noexcept { return *found_.layers; }
  /// The costs the plan was made with (estimated ones when nothing was measured or given).
  const CostModel& costs() const noexcept { return found_.costs; }
  /// Why each choice other than the fastest default was taken (Note [Search]).
  const std::vector<std::string>& reasons() const noexcept { return found_.reasons; }
  Executor& executor() noexcept { return *executor_; }
  runtime::ExecutionContext& context() noexcept { return *context_; }

 private:
  std::unique_ptr<runtime::ExecutionContext> context_;
  layers::LayerCache layer_cache_;  // setup results shared by the layer sets the search builds
  SearchResult found_;
  std::unique_ptr<Executor> executor_;  // last: destroyed first
};

}  // namespace vdnn::graph
