// The peer tier's upstream: the peer GPU's free memory is checked before each request.
#include "runtime/memory/PeerMemoryResource.hpp"

#include <utility>

#include "runtime/ByteSize.hpp"

namespace vdnn::runtime {

std::string peer_access_refusal(int device, int peer) {
  return "GPU " + std::to_string(device) + " cannot access GPU " + std::to_string(peer) +
         " directly (no peer access between them), so GPU " + std::to_string(peer) +
         " cannot be its offload peer; `vdnn inspect --devices` lists which GPUs can, or offload "
         "to the host alone (no --offload-peer)";
}

PeerMemoryResource::PeerMemoryResource(MemoryResource& upstream, int peer,
                                       std::function<std::uint64_t()> free_peer_bytes)
    : upstream_(upstream), peer_(peer), free_peer_bytes_(std::move(free_peer_bytes)) {}

void* PeerMemoryResource::do_allocate(std::size_t bytes) {
  const std::uint64_t free_bytes = free_peer_bytes_();
  if (bytes > free_bytes) {
    throw PeerMemoryRefused("the peer pool needs " + format_bytes(bytes) + " on GPU " +
                                std::to_string(peer_) + ", which has " + format_bytes(free_bytes) +
                                " free: lower --peer-budget or free memory there",
                            bytes, 0, free_bytes);
  }
  return upstream_.allocate(bytes);
}

}  // namespace vdnn::runtime
