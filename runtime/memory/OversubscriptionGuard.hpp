// OversubscriptionGuard: refuses a managed-memory allocation larger than the device's free memory
// unless oversubscription was explicitly allowed (Note [Managed memory]).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "runtime/Error.hpp"
#include "runtime/MemoryResource.hpp"

namespace vdnn::runtime {

/// A managed-memory request larger than the device's free memory, refused. what() names both
/// sizes; bytes_requested() and bytes_limit() (the free bytes) carry them.
class OversubscriptionRefused : public OutOfMemory {
 public:
  using OutOfMemory::OutOfMemory;
};

/// Forwards to `upstream` (managed memory; it must outlive the guard). Before each allocation it
/// asks `free_device_bytes` and throws OversubscriptionRefused, without calling upstream, when the
/// request is larger, unless `allow_oversubscription`. Oversubscribed managed memory makes the
/// driver evict pages under the running kernels, which can stall a shared GPU for everyone, so
/// the guard is on unless a user asks. Thread-safe when `free_device_bytes` is.
class OversubscriptionGuard final : public MemoryResource {
 public:
  OversubscriptionGuard(MemoryResource& upstream, std::function<std::uint64_t()> free_device_bytes,
                        bool allow_oversubscription)
      : upstream_(upstream),
        free_device_bytes_(std::move(free_device_bytes)),
        allow_(allow_oversubscription) {}

  bool host_accessible() const noexcept override { return upstream_.host_accessible(); }
  std::string name() const override { return "guard(" + upstream_.name() + ")"; }

 private:
  void* do_allocate(std::size_t bytes) override;
  void do_deallocate(void* ptr, std::size_t bytes) noexcept override {
    upstream_.deallocate(ptr, bytes);
  }

  MemoryResource& upstream_;
  std::function<std::uint64_t()> free_device_bytes_;
  bool allow_;
};

}  // namespace vdnn::runtime
