// Session: everything one training run needs, built in order and torn down cleanly: the graph,
// its layers on a backend, the plan for a policy and budget, the execution context and the
// executor. Many sessions may live in one process (no global state).
#pragma once

#include <cstdint>
#include <memory>

#include "graph/CostModel.hpp"
#include "graph/Executor.hpp"
#include "graph/Fusion.hpp"
#include "graph/Graph.hpp"
#include "graph/LayerSet.hpp"
#include "graph/Layout.hpp"
#include "graph/Planner.hpp"
#include "runtime/ExecutionContext.hpp"
#include "runtime/cpu/CpuContext.hpp"
#include "runtime/cpu/StressOptions.hpp"

namespace vdnn::graph {

struct SessionOptions {
  layers::Backend backend = layers::Backend::Cpu;
  int device = 0;  // CUDA device ordinal
  Policy policy = Policy::Baseline;
  /// 0: no budget but what the device can give (CUDA: free memory less kCudaReserve).
  std::uint64_t budget_bytes = 0;
  bool deterministic = false;  // CUDA: deterministic algorithms only
  bool allow_tf32 = true;      // CUDA: TF32 tensor-core math in convolutions
  bool fuse = true;            // merge batchnorm2d -> [add ->] relu chains (Note [Fusion])
  LayoutChoice layout = LayoutChoice::Auto;  // memory order of feature maps (Note [Layout])
  ExecutorOptions executor;
  /// What layers and copies cost, for policies that choose by it (auto, vdnn-dyn) and for the
  /// plan's predicted step time. Unset: with `measure_costs` or such a policy, measured at setup
  /// (graph/CostProfiler) unless `cost_cache` holds them for this network, batch and device;
  /// otherwise estimated (estimate_costs).
  std::shared_ptr<const CostModel> costs;
  bool measure_costs = false;
  CostCache* cost_cache = nullptr;     // not owned; must outlive the session's construction
  int cost_steps = 3;                  // profiled steps when measuring (the last one counts)
  runtime::cpu::StressOptions stress;  // CPU backend: random delays on every stream operation
  /// CPU backend: the free device memory the managed-memory guard sees (tests of the guard).
  std::uint64_t cpu_free_device_bytes = runtime::cpu::kUnlimitedDeviceBytes;
  /// The setup cache on disk, where convolutions keep their measured algorithms
  /// (layers::LayerOptions::disk_cache); null: none. Not owned; must outlive the construction.
  runtime::DiskCache* disk_cache = nullptr;
};

/// Device memory left outside the default CUDA budget, for the CUDA context, cuDNN and cuBLAS.
inline constexpr std::uint64_t kCudaReserve = std::uint64_t{2} << 30;

/// Owns a run. Construction throws DoesNotFit (exit code 3 in the CLI) when the policy cannot fit
/// the budget, runtime::OversubscriptionRefused (also exit code 3) when a managed pool is larger
/// than the device's free memory and oversubscription is not allowed, InvalidArgument when the
/// backend is not available in this build.
class Session {
 public:
  Session(Graph graph, const SessionOptions& options);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  Session(Session&&) = delete;
  Session& operator=(Session&&) = delete;
  ~Session();

  /// The graph the session runs: the given one after fusion, with its layout set.
  const Graph& graph() const noexcept { return graph_; }
  /// The chains fusion merged (none without SessionOptions::fuse).
  const std::vector<FusedChain>& fusion() const noexcept { return fusion_; }
  /// The layout the feature maps use, and why.
  const LayoutDecision& layout() const noexcept { return layout_; }
  const Plan& plan() const noexcept { return planned_.plan; }
  const LayerSet& layers() const noexcept { return layers_; }
  /// The costs the plan was made with (estimated ones when nothing was measured or given).
  const CostModel& costs() const noexcept { return planned_.costs; }
  Executor& executor() noexcept { return *executor_; }
  runtime::ExecutionContext& context() noexcept { return *context_; }

 private:
  std::vector<FusedChain> fusion_;  // before graph_, which fills it
  Graph graph_;
  std::unique_ptr<runtime::ExecutionContext> context_;
  layers::LayerOptions layer_options_;
  LayoutDecision layout_;
  LayerSet layers_;
  struct Planned {
    CostModel costs;
    Plan plan;
  };
  static Planned plan_run(const Graph& graph, const SessionOptions& options, LayerSet& layers,
                          runtime::ExecutionContext& context);

  Planned planned_;
  std::unique_ptr<Executor> executor_;  // last: destroyed first
};

}  // namespace vdnn::graph
