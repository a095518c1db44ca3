// LayerCache: results of expensive layer setup (measured convolution algorithms) shared by the
// layers of one run, keyed by the problem they solve, so identical layers measure once.
#pragma once

#include <any>
#include <map>
#include <string>
#include <utility>

namespace vdnn::layers {

/// A keyed store of setup results. Owned by whoever builds the layers (graph::LayerSet), one per
/// run: no global state. Not thread-safe (layers are built on one thread).
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

 private:
  std::map<std::string, std::any> entries_;
};

}  // namespace vdnn::layers
