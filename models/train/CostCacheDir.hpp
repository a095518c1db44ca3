// CostCacheDir: measured cost models kept as JSON files in a directory, one per CostKey, so that a
// network is profiled once per batch and device (Note [Cost model]).
#pragma once

#include <filesystem>

#include "graph/CostModel.hpp"

namespace vdnn::models {

class CostCacheDir final : public graph::CostCache {
 public:
  /// Creates `dir` if needed. Throws runtime::Error when it cannot.
  explicit CostCacheDir(std::filesystem::path dir);

  /// The model stored for `key`, with source "cache <file>"; an empty model when there is none
  /// or the file is not one this version wrote for this key (it is then measured again).
  graph::CostModel load(const graph::CostKey& key) override;
  /// Writes the file for `key` (to a temporary name, then renamed). Throws runtime::Error.
  void store(const graph::CostKey& key, const graph::CostModel& costs) override;

 private:
  std::filesystem::path dir_;
};

/// A cost file of a CostCacheDir, for planning `graph` with it (`vdnn plan --costs`). Throws
/// runtime::InvalidArgument naming the file when it is not one, or not for this many layers.
graph::CostModel read_cost_file(const std::filesystem::path& path, const graph::Graph& graph);

}  // namespace vdnn::models
