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

/// The precision of results written before compare had one (results.json without the field).
inline constexpr const char* kDefaultPrecision = "fp32";

/// One (policy, precision, batch, budget[, depth]) run: warmup steps, then timed steps, medians.
struct CellResult {
  std::string policy;
  std::string precision = kDefaultPrecision;  // feature maps: "fp32" or "bf16"
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
  /// The peer tier (Note [Peer tier]): the part of offloaded_bytes that went to the peer GPU, and
  /// the fraction of the step each stream copied over the peer link (the rest of offload_busy and
  /// prefetch_busy is the host link's).
  std::uint64_t peer_offloaded_bytes = 0;
  double peer_offload_busy = 0.0;
  double peer_prefetch_busy = 0.0;
};

/// A search's answer for one policy: the largest batch (max-batch) or the deepest network
/// (depth sweep) that trained, 0 when none did.
struct SearchResult {
  std::string policy;
  std::int64_t value = 0;
  double images_per_s = 0.0;  // of the confirming run
  std::string precision = kDefaultPrecision;
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
  std::string precision = kDefaultPrecision;
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

/// Every precision of `results` (cells, then searches), in first-seen order.
std::vector<std::string> precisions_of(const CompareResults& results);

/// How the report names a policy's runs: the policy alone when `results` has one precision,
/// else "<policy> <precision>" (e.g. "vdnn-all bf16").
std::string series_label(const std::string& policy, const std::string& precision,
                         bool several_precisions);

}  // namespace vdnn::tools
