// CompareResults: what `vdnn compare` measured, as data: the cells of the matrix, the results of a
// max-batch or depth search, and one cell's per-action memory timeline. results.csv,
// results.json and report.html are all written from it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vdnn::tools {

/// How a cell ended.
enum class CellStatus : std::uint8_t {
  Ok,          // trained: the measurements are valid
  DoesNotFit,  // the policy cannot run this batch under this budget (planner or device said so)
  Failed,      // any other error (message says which); the run went on
};
const char* cell_status_name(CellStatus status) noexcept;

/// One (policy, batch, budget[, depth]) run: warmup steps, then timed steps, medians.
struct CellResult {
  std::string policy;
  std::int64_t batch = 0;
  std::uint64_t budget_bytes = 0;  // 0: no budget
  int depth = 0;                   // depth sweep: the generated network's depth; else 0
  std::string network;             // the network the cell trained
  CellStatus status = CellStatus::Ok;
  std::string message;  // why it did not fit or failed; empty when Ok
  double images_per_s = 0.0;
  double ms_per_iter = 0.0;
  std::uint64_t measured_peak_bytes = 0;   // the executor's own allocator statistics
  std::uint64_t predicted_peak_bytes = 0;  // the plan's
  std::uint64_t offloaded_bytes = 0;       // per step
  std::uint64_t prefetched_bytes = 0;      // per step
  std::uint64_t migrated_bytes = 0;        // per step, managed memory: evicted + migrated back
  double offload_gbps = 0.0;
  double prefetch_gbps = 0.0;
  double offload_busy = 0.0;   // fraction of the step the offload stream was busy
  double prefetch_busy = 0.0;  // likewise for the prefetch stream
};

/// A search's answer for one policy: the largest batch (max-batch) or the deepest network
/// (depth sweep) that trained, 0 when none did.
struct SearchResult {
  std::string policy;
  std::int64_t value = 0;
  double images_per_s = 0.0;  // of the confirming run
};

/// Device bytes after one forward or backward action of one step (the plan's prediction, which
/// the executor's measured peak equals byte for byte), and the bytes living on the host then.
struct MemoryPoint {
  std::string layer;
  bool backward = false;
  std::uint64_t device_bytes = 0;
  std::uint64_t offloaded_bytes = 0;  // offloaded or evicted and not yet brought back
};

/// The per-layer memory timeline of one chosen cell.
struct MemoryTimeline {
  std::string policy;
  std::int64_t batch = 0;
  std::uint64_t budget_bytes = 0;
  std::vector<MemoryPoint> points;
};

enum class CompareMode : std::uint8_t { Matrix, MaxBatch, DepthSweep };
const char* compare_mode_name(CompareMode mode) noexcept;

struct CompareResults {
  std::string network;  // the config's network name (depth sweep: the family, e.g. "resnet")
  std::string device;   // "cpu" or "cuda" (and the GPU's name when known)
  CompareMode mode = CompareMode::Matrix;
  std::vector<CellResult> cells;       // in the order they ran
  std::vector<SearchResult> searches;  // max-batch or depth sweep only, one per policy
  std::optional<MemoryTimeline> timeline;
};

}  // namespace vdnn::tools
