// A byte budget in front of another memory resource.
#include "runtime/memory/LimitingAdaptor.hpp"

#include "runtime/Error.hpp"

namespace vdnn::runtime {
std::size_t LimitingAdaptor::bytes_in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_in_use_;
}

void* LimitingAdaptor::do_allocate(std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Comparing before aligning keeps align_up from overflowing on absurd requests.
  if (bytes > limit_ - bytes_in_use_ || MemoryResource::align_up(bytes) > limit_ - bytes_in_use_) {
    throw OutOfMemory(name() + ": cannot allocate " + std::to_string(bytes) +
                          " bytes: " + std::to_string(bytes_in_use_) + " of " +
                          std::to_string(limit_) + " bytes in use",
                      bytes, bytes_in_use_, limit_);
  }
  void* ptr = upstream_.allocate(bytes);  // throws before the count moves
  bytes_in_use_ += MemoryResource::align_up(bytes);
  return ptr;
}

void LimitingAdaptor::do_deallocate(void* ptr, std::size_t bytes) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  upstream_.deallocate(ptr, bytes);
  bytes_in_use_ -= MemoryResource::align_up(bytes);
}

void LimitingAdaptor::do_deallocate_after(void* ptr, std::size_t bytes, const Event& event) {
  std::lock_guard<std::mutex> lock(mutex_);
  upstream_.deallocate_after(ptr, bytes, event);
  bytes_in_use_ -= MemoryResource::align_up(bytes);
}

}  // namespace vdnn::runtime
