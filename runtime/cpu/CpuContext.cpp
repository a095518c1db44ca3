// The CPU backend's streams, events, memory and NaN fill.
#include "runtime/cpu/CpuContext.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "runtime/Error.hpp"
#include "runtime/cpu/CpuEvent.hpp"
#include "runtime/memory/PeerMemoryResource.hpp"

namespace vdnn::runtime::cpu {

CpuContext::CpuContext(StressOptions stress, std::uint64_t free_device_bytes, EmulatedPeer peer)
    : stress_(stress),
      compute_("compute", stress),
      offload_("offload", stress),
      prefetch_("prefetch", stress),
      free_device_bytes_(free_device_bytes),
      peer_(peer) {}

void CpuContext::check_peer(int peer) const {
  if (peer != peer_.device) {
    throw InvalidArgument("the CPU backend emulates GPU 0 and one peer, GPU " +
                          std::to_string(peer_.device) + "; there is no GPU " +
                          std::to_string(peer) + " to offload to");
  }
  if (!peer_.access) throw InvalidArgument(peer_access_refusal(0, peer));
}

MemoryResource& CpuContext::peer_upstream(int peer) {
  check_peer(peer);
  return peer_memory_;
}

std::uint64_t CpuContext::free_peer_bytes(int peer) {
  check_peer(peer);
  return peer_.free_bytes;
}

std::unique_ptr<Stream> CpuContext::make_stream(const std::string& name) {
  return std::make_unique<CpuStream>(name, stress_);
}

std::unique_ptr<Event> CpuContext::make_event(bool /*timing*/) {
  return std::make_unique<CpuEvent>();  // CPU events always keep their completion time
}

void CpuContext::fill_nan_async(Stream& stream, void* ptr, std::size_t bytes) {
  stream.enqueue([ptr, bytes] {
    // 0x7FFF per 2 bytes, as the CUDA fill: a NaN read as BF16, F32 or F64.
    auto* data = static_cast<std::uint16_t*>(ptr);
    std::fill(data, data + bytes / sizeof(std::uint16_t), std::uint16_t{0x7FFF});
  });
}

// Host memory is already where every "migration" would send it: the stream only keeps the order.
void CpuContext::migrate_async(Stream& stream, void* /*ptr*/, std::size_t /*bytes*/,
                               MigrateTo /*to*/) {
  stream.enqueue([] {});
}

void CpuContext::wait_for_caller(Stream& /*stream*/, void* /*caller*/) {
  throw InvalidArgument("the CPU backend has no caller streams to wait for");
}

std::unique_ptr<MigrationCounters> CpuContext::make_migration_counters(std::string& why_not) {
  why_not = "the CPU backend has no managed memory (migrations are counted from the plan)";
  return nullptr;
}

}  // namespace vdnn::runtime::cpu
