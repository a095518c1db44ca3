// StatisticsAdaptor: wraps a MemoryResource and counts bytes in use, the peak, and allocations.
#pragma once

#include <cstddef>
#include <mutex>

#include "runtime/MemoryResource.hpp"

namespace vdnn::runtime {

/// Counters of a StatisticsAdaptor. `allocations` counts successful upstream calls, ever.
struct MemoryStats {
  std::size_t current_bytes = 0;
  std::size_t peak_bytes = 0;
  std::size_t allocations = 0;
  std::size_t deallocations = 0;
};

/// Forwards to `upstream` (which must outlive it) and records statistics. A failed upstream
/// allocation leaves the statistics unchanged. deallocate_after() forwards to upstream's and counts
/// the bytes as freed at once (Note [Deferred frees]), so the statistics are the same on every
/// run. Thread-safe.
class StatisticsAdaptor final : public MemoryResource {
 public:
  explicit StatisticsAdaptor(MemoryResource& upstream) : upstream_(upstream) {}

  MemoryStats stats() const;
  /// Sets peak_bytes to current_bytes, so a new phase can be measured on its own.
  void reset_peak();

  bool host_accessible() const noexcept override { return upstream_.host_accessible(); }
  std::string name() const override { return "stats(" + upstream_.name() + ")"; }

 private:
  void* do_allocate(std::size_t bytes) override;
  void do_deallocate(void* ptr, std::size_t bytes) noexcept override;
  void do_deallocate_after(void* ptr, std::size_t bytes, const Event& event) override;
  void count_free(std::size_t bytes);

  MemoryResource& upstream_;
  mutable std::mutex mutex_;
  MemoryStats stats_;
};

}  // namespace vdnn::runtime
