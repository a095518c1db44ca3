// Allocation statistics: the measured peak that plans are checked against.
#include "runtime/memory/StatisticsAdaptor.hpp"

#include <algorithm>

namespace vdnn::runtime {

MemoryStats StatisticsAdaptor::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void StatisticsAdaptor::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_bytes = stats_.current_bytes;
}

void* StatisticsAdaptor::do_allocate(std::size_t bytes) {
  void* ptr = upstream_.allocate(bytes);  // throws before any counter moves
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.current_bytes += bytes;
  stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.current_bytes);
  ++stats_.allocations;
  return ptr;
}

void StatisticsAdaptor::do_deallocate(void* ptr, std::size_t bytes) noexcept {
  upstream_.deallocate(ptr, bytes);
  count_free(bytes);
}

void StatisticsAdaptor::do_deallocate_after(void* ptr, std::size_t bytes, const Event& event) {
  upstream_.deallocate_after(ptr, bytes, event);  // throws before any counter moves
  count_free(bytes);
}

void StatisticsAdaptor::count_free(std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.current_bytes -= bytes;
  ++stats_.deallocations;
}

}  // namespace vdnn::runtime
