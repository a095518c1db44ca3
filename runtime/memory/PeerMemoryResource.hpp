// PeerMemoryResource: the upstream of the peer tier's pool, memory on a neighbour GPU, refusing a
// request larger than that GPU's free memory before asking for it (Note [Peer tier]).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "runtime/Error.hpp"
#include "runtime/MemoryResource.hpp"

namespace vdnn::runtime {

/// A peer-pool request larger than the peer GPU's free memory, refused. what() names the GPU and
/// both sizes; bytes_requested() and bytes_limit() (the free bytes) carry them.
class PeerMemoryRefused : public OutOfMemory {
 public:
  using OutOfMemory::OutOfMemory;
};

/// The message of a peer that `device` cannot reach directly: it names both GPUs.
std::string peer_access_refusal(int device, int peer);

/// Forwards to `upstream` (memory on GPU `peer`; it must outlive this). Before each allocation it
/// asks `free_peer_bytes` and throws PeerMemoryRefused, without calling upstream, when the request
/// is larger: another process's memory on that GPU is not ours to oversubscribe. Thread-safe when
/// `free_peer_bytes` is.
class PeerMemoryResource final : public MemoryResource {
 public:
  PeerMemoryResource(MemoryResource& upstream, int peer,
                     std::function<std::uint64_t()> free_peer_bytes);

  bool host_accessible() const noexcept override { return upstream_.host_accessible(); }
  std::string name() const override { return "peer" + std::to_string(peer_); }

 private:
  void* do_allocate(std::size_t bytes) override;
  void do_deallocate(void* ptr, std::size_t bytes) noexcept override {
    upstream_.deallocate(ptr, bytes);
  }

  MemoryResource& upstream_;
  int peer_;
  std::function<std::uint64_t()> free_peer_bytes_;
};

}  // namespace vdnn::runtime
