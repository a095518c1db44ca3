// Opening the setup cache of a run for its backend and device (models/train/SetupCache.hpp).
#include "models/train/SetupCache.hpp"

#include <iostream>
#include <string>
#include <utility>

#include "models/train/CostCacheDir.hpp"
#ifdef VDNN_HAVE_CUDA
#include "runtime/cuda/SetupFingerprint.hpp"
#endif

namespace vdnn::models {
namespace {

void warn(const std::string& message) { std::cerr << "vdnn: " << message << "\n"; }

// The cache for the session's backend and device; null, after a warning, when its directory
// cannot be made or the device not described (the session then reports the device).
std::unique_ptr<runtime::DiskCache> open_disk_cache(const std::filesystem::path& dir,
                                                    const graph::SessionOptions& s) {
  try {
    std::string fingerprint = runtime::cpu_fingerprint();
    if (s.backend == layers::Backend::Cuda) {
#ifdef VDNN_HAVE_CUDA
      fingerprint = runtime::cuda::setup_fingerprint(s.device);
#else
      return nullptr;  // the session refuses the backend
#endif
    }
    return std::make_unique<runtime::DiskCache>(dir, std::move(fingerprint), warn);
  } catch (const runtime::Error& e) {
    warn(std::string(e.what()) + "; running without the setup cache");
    return nullptr;
  }
}

}  // namespace

SetupCache open_setup_cache(const std::filesystem::path& dir, bool use,
                            graph::SessionOptions& session) {
  SetupCache cache;
  if (use && !dir.empty()) cache.disk = open_disk_cache(dir, session);
  if (cache.disk != nullptr) {
    cache.costs = std::make_unique<CostCacheDir>(*cache.disk);
    session.cost_cache = cache.costs.get();
    session.disk_cache = cache.disk.get();
  }
  return cache;
}

}  // namespace vdnn::models
