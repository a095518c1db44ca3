// Aligned host allocations for the CPU backend.
#include "runtime/memory/HostMemoryResource.hpp"

#include <new>

#include "runtime/Error.hpp"

namespace vdnn::runtime {

void* HostMemoryResource::do_allocate(std::size_t bytes) {
  try {
    return ::operator new (bytes, std::align_val_t{kAlignment});
  } catch (const std::bad_alloc&) {
    throw OutOfMemory("host allocation of " + std::to_string(bytes) + " bytes failed", bytes, 0, 0);
  }
}

void HostMemoryResource::do_deallocate(void* ptr, std::size_t /*bytes*/) noexcept {
  ::operator delete (ptr, std::align_val_t{kAlignment});
}

}  // namespace vdnn::runtime
