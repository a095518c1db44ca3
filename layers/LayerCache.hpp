// LayerCache: results of expensive layer setup (measured convolution algorithms) shared by the
// layers of one run, keyed by the problem they solve, so identical layers measure once; and,
// optionally, the setup cache on disk that keeps them for later runs (runtime/DiskCache.hpp).
#pragma once

#include <any>
#include <map>
#include <string>
#include <utility>

namespace vdnn::runtime {
class DiskCache;
}  // namespace vdnn::runtime

namespace vdnn::layers {

/// A keyed store of setup results. Owned by whoever builds the layers (graph::LayerSet), one per
/// run: no global state. Not thread-safe (layers are built on one thread).
///
/// disk(): where layers look up, on a miss here, what earlier runs measured (e.g. kind "conv",
/// Conv2dCuda's measured algorithms) and store what they measure; null: nothing persists.
class LayerCache {
 public:
  /// The value stored under `key`, or null when there is none (or it has another type).
  template <typename T>
  const T* find(const std::string& key) const {
    const auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : std::any_cast<T>(&it->second);
  }
  /// Stores `value` under `key` (replacing what was there) and returns the stored copy.
  template <typename T>
  const T& put(const std::string& key, T value) {
    std::any& slot = entries_[key];
    slot = std::move(value);
    return *std::any_cast<T>(&slot);
  }
  std::size_t size() const noexcept { return entries_.size(); }

  /// The setup cache on disk, not owned (must outlive the construction of the layers); null: none.
  runtime::DiskCache* disk() const noexcept { return disk_; }
  void set_disk(runtime::DiskCache* disk) noexcept { disk_ = disk; }

 private:
  std::map<std::string, std::any> entries_;
  runtime::DiskCache* disk_ = nullptr;
};

}  // namespace vdnn::layers
