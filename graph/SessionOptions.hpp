// SessionOptions: everything a run is set up from: backend, policy, budget, the switches of the
// search (fusion, layout, math) and of the executor. Every default lives here.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "graph/CostModel.hpp"
#include "graph/Executor.hpp"
#include "graph/Layout.hpp"
#include "graph/Plan.hpp"
#include "graph/SetupProgress.hpp"
#include "layers/Layer.hpp"
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
  /// Element type of feature maps and their gradients: F32, or BF16 with FP32 parameters, math
  /// and loss (Note [Precision]).
  runtime::DType precision = runtime::DType::F32;
  /// Training (a step: forward, backward, update), or inference alone: the plan, pools and
  /// parameters of a forward pass in eval mode, no gradients or optimizer state (Note [Inference
  /// plan]); the same budget and policy rules.
  Purpose purpose = Purpose::Training;
  /// The loss's label smoothing in [0, 1] (torch.nn.CrossEntropyLoss's label_smoothing).
  double label_smoothing = 0.0;
  ExecutorOptions executor;
  /// What layers and copies cost, for policies that choose by it (auto, vdnn-dyn) and for the
  /// plan's predicted step time. Unset: with `measure_costs` or such a policy, measured at setup
  /// (graph/CostProfiler) unless `cost_cache` holds them for this network, batch and device;
  /// otherwise estimated (estimate_costs).
  std::shared_ptr<const CostModel> costs;
  bool measure_costs = false;
  /// Only whether the run fits is asked (compare's largest-batch search): the search skips what
  /// only makes a fitting plan faster (auto's rebuild_where_faster).
  bool fit_only = false;
  CostCache* cost_cache = nullptr;  // not owned; must outlive the session's construction
  int cost_steps = 3;               // profiled steps when measuring (the last one counts)
  /// The peer tier (Note [Peer tier]): offloaded maps go first to a pool on GPU `peer_device`
  /// (CPU backend: its emulated peer, GPU 1), holding at most `peer_budget_bytes` of them at once;
  /// -1 or 0: none.
  int peer_device = -1;
  std::uint64_t peer_budget_bytes = 0;
  /// The most pinned host memory offloaded maps may take at once (Note [Host budget]); unset: no
  /// limit in a Session, and in models::Trainer what the machine has available less the run's
  /// other host memory and a headroom (graph::pinned_room).
  std::optional<std::uint64_t> host_budget_bytes;
  /// The ranks a training plan runs on (Note [Data parallelism]): a Session with a communicator
  /// takes its size and executor.buckets here; `vdnn plan --gpus N` sets it. A world of one: none.
  DataParallelPlan data_parallel;
  /// CPU backend: the emulated peer (its free memory and whether GPU 0 can reach it).
  runtime::cpu::EmulatedPeer cpu_peer;
  /// Told each part of setup as it starts and timed by it (not owned; null: nothing told).
  SetupProgress* progress = nullptr;
  runtime::cpu::StressOptions stress;  // CPU backend: random delays on every stream operation
  /// CPU backend: the free device memory the managed-memory guard sees (tests of the guard).
  std::uint64_t cpu_free_device_bytes = runtime::cpu::kUnlimitedDeviceBytes;
  /// The setup cache on disk, where convolutions keep their measured algorithms
  /// (layers::LayerOptions::disk_cache); null: none. Not owned; must outlive the construction.
  runtime::DiskCache* disk_cache = nullptr;
};

/// Device memory left outside the default CUDA budget, for the CUDA context, cuDNN and cuBLAS.
inline constexpr std::uint64_t kCudaReserve = std::uint64_t{2} << 30;

}  // namespace vdnn::graph
