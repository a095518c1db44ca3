// CostCacheDir: measured cost models kept in the setup cache on disk (runtime::DiskCache, kind
// "costs"), one entry per CostKey, so that a network is profiled once per batch and device
// (Note [Cost model]).
#pragma once

#include <filesystem>
#include <string>

#include "graph/CostModel.hpp"
#include "runtime/DiskCache.hpp"

namespace vdnn::models {

/// The setup cache's kind for cost models.
inline constexpr const char* kCostsKind = "costs";

class CostCacheDir final : public graph::CostCache {
 public:
  /// Keeps cost models in `cache` (not owned; must outlive this). Throws nothing.
  explicit CostCacheDir(runtime::DiskCache& cache) noexcept : cache_(&cache) {}

  /// The model stored for `key`, with source "cache <file>"; an empty model when there is none or
  /// the entry is not usable (the cache warns about damaged files; it is then measured again).
  graph::CostModel load(const graph::CostKey& key) override;
  /// Stores the model for `key` (atomically; a failure is a warning, never an exception).
  void store(const graph::CostKey& key, const graph::CostModel& costs) override;

 private:
  runtime::DiskCache* cache_;
};

/// The key of `key` in the setup cache: each field as text.
std::string cost_cache_key(const graph::CostKey& key);

/// A cost file, for planning `graph` with it (`vdnn plan --costs`): a file of the setup cache
/// (its "value" is read; checksum checked) or a bare cost model as that value holds it. Throws
/// runtime::InvalidArgument naming the file when it is neither, or not for this many layers.
graph::CostModel read_cost_file(const std::filesystem::path& path, const graph::Graph& graph);

}  // namespace vdnn::models
