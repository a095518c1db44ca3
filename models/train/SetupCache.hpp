// SetupCache: a run's setup cache on disk (Note [Cost model]): measured convolution algorithms,
// layouts and cost models for its backend and device, opened the same way for a Trainer and a
// Predictor so that both set up alike.
#pragma once

#include <filesystem>
#include <memory>

#include "graph/CostModel.hpp"
#include "graph/SessionOptions.hpp"
#include "runtime/DiskCache.hpp"

namespace vdnn::models {

/// The open cache and the cost models kept in it; both null when there is none.
struct SetupCache {
  std::unique_ptr<runtime::DiskCache> disk;
  std::unique_ptr<graph::CostCache> costs;
};

/// With `use` and a non-empty `dir`, opens the cache in `dir` for session.backend and
/// session.device and points session.disk_cache and session.cost_cache at it (the result must
/// outlive the session's construction). A directory that cannot be made or a device that cannot
/// be described is a warning on stderr, and no cache. Throws nothing else.
SetupCache open_setup_cache(const std::filesystem::path& dir, bool use,
                            graph::SessionOptions& session);

}  // namespace vdnn::models
