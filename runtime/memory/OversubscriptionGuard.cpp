// The managed-memory guard: compare with the device's free memory before asking the driver.
#include "runtime/memory/OversubscriptionGuard.hpp"

#include "runtime/ByteSize.hpp"

namespace vdnn::runtime {

void* OversubscriptionGuard::do_allocate(std::size_t bytes) {
  if (!allow_) {
    const std::uint64_t free_bytes = free_device_bytes_();
    if (bytes > free_bytes) {
      throw OversubscriptionRefused(
          "refusing to allocate " + format_bytes(bytes) + " of managed memory: the device has " +
              format_bytes(free_bytes) +
              " free, and oversubscribed managed memory can hang a shared GPU (pass "
              "--allow-oversubscription to accept that risk, or use a smaller batch or a "
              "vdnn policy)",
          bytes, 0, free_bytes);
    }
  }
  return upstream_.allocate(bytes);
}

}  // namespace vdnn::runtime
