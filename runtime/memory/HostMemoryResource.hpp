// HostMemoryResource: aligned heap memory from the C++ runtime; the CPU backend's upstream.
#pragma once

#include "runtime/MemoryResource.hpp"

namespace vdnn::runtime {

/// Aligned operator new/delete. Thread-safe. Throws OutOfMemory when the system refuses.
class HostMemoryResource final : public MemoryResource {
 public:
  bool host_accessible() const noexcept override { return true; }
  std::string name() const override { return "host"; }

 private:
  void* do_allocate(std::size_t bytes) override;
  void do_deallocate(void* ptr, std::size_t bytes) noexcept override;
};

}  // namespace vdnn::runtime
