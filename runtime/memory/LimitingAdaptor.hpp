// LimitingAdaptor: wraps a MemoryResource and refuses allocations that would take the bytes in
// use above a limit (a device budget enforced on an allocator that has no budget of its own).
#pragma once

#include <cstddef>
#include <mutex>

#include "runtime/MemoryResource.hpp"

namespace vdnn::runtime {

/// Forwards to `upstream` (which must outlive it) while the bytes in use, each allocation rounded
/// up to kAlignment, stay within `limit`; otherwise throws OutOfMemory without calling upstream.
/// A failed upstream allocation leaves the count unchanged. deallocate_after() forwards to
/// upstream's and stops counting the bytes at once (Note [Deferred frees]). Thread-safe: every
/// call holds one mutex, including the forwarded upstream call.
class LimitingAdaptor final : public MemoryResource {
 public:
  LimitingAdaptor(MemoryResource& upstream, std::size_t limit)
      : upstream_(upstream), limit_(limit) {}

  std::size_t limit() const noexcept { return limit_; }
  /// Sum of live allocations, each rounded up to kAlignment.
  std::size_t bytes_in_use() const;

  bool host_accessible() const noexcept override { return upstream_.host_accessible(); }
  std::string name() const override { return "limit(" + upstream_.name() + ")"; }

 private:
  void* do_allocate(std::size_t bytes) override;
  void do_deallocate(void* ptr, std::size_t bytes) noexcept override;
  void do_deallocate_after(void* ptr, std::size_t bytes, const Event& event) override;

  MemoryResource& upstream_;
  const std::size_t limit_;
  mutable std::mutex mutex_;
  std::size_t bytes_in_use_ = 0;
};

}  // namespace vdnn::runtime
