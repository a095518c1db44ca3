// The CPU backend's streams, events, memory and NaN fill.
#include "runtime/cpu/CpuContext.hpp"

#include <algorithm>
#include <limits>

#include "runtime/cpu/CpuEvent.hpp"

namespace vdnn::runtime::cpu {

CpuContext::CpuContext(StressOptions stress)
    : compute_("compute", stress), offload_("offload", stress), prefetch_("prefetch", stress) {}

std::unique_ptr<Event> CpuContext::make_event(bool /*timing*/) {
  return std::make_unique<CpuEvent>();  // CPU events always keep their completion time
}

void CpuContext::fill_nan_async(Stream& stream, void* ptr, std::size_t bytes) {
  stream.enqueue([ptr, bytes] {
    float* data = static_cast<float*>(ptr);
    std::fill(data, data + bytes / sizeof(float), std::numeric_limits<float>::quiet_NaN());
  });
}

}  // namespace vdnn::runtime::cpu
