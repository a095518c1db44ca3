// Default behaviour of MemoryResource hooks.
#include "runtime/MemoryResource.hpp"

#include "runtime/Stream.hpp"

namespace vdnn::runtime {

void MemoryResource::do_deallocate_after(void* ptr, std::size_t bytes, const Event& event) {
  event.synchronize();
  do_deallocate(ptr, bytes);
}

}  // namespace vdnn::runtime
