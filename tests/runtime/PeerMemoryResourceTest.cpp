// The peer tier's memory (Note [Peer tier]): requests above the peer's free memory are refused
// before the upstream is asked; the CPU backend's emulated peer and its refusals.
#include "runtime/memory/PeerMemoryResource.hpp"

#include <gtest/gtest.h>

#include "runtime/cpu/CpuContext.hpp"
#include "runtime/memory/HostMemoryResource.hpp"
#include "runtime/memory/StatisticsAdaptor.hpp"

namespace vdnn::runtime {
namespace {

constexpr std::uint64_t kFree = std::uint64_t{3} << 20;  // 3 MiB "free on the peer"

TEST(PeerMemoryResource, RefusesMoreThanThePeersFreeBytesWithoutAskingUpstream) {
  HostMemoryResource host;
  StatisticsAdaptor upstream(host);
  PeerMemoryResource peer(upstream, 1, [] { return kFree; });
  try {
    static_cast<void>(peer.allocate(kFree + 1));
    FAIL() << "expected PeerMemoryRefused";
  } catch (const PeerMemoryRefused& e) {
    EXPECT_EQ(e.bytes_requested(), kFree + 1);
    EXPECT_EQ(e.bytes_limit(), kFree);
    const std::string what = e.what();
    EXPECT_NE(what.find("on GPU 1, which has 3.00 MiB free"), std::string::npos) << what;
    EXPECT_NE(what.find("--peer-budget"), std::string::npos) << what;
  }
  EXPECT_EQ(upstream.stats().allocations, 0U);
  Buffer fits(peer, kFree);
  EXPECT_FALSE(fits.empty());
  EXPECT_EQ(upstream.stats().allocations, 1U);
  EXPECT_EQ(peer.name(), "peer1");
}

TEST(PeerMemoryResource, EmulatedPeerGivesMemoryOfItsOwnAndItsFreeFigure) {
  cpu::CpuContext context({}, cpu::kUnlimitedDeviceBytes, {1, kFree, true});
  EXPECT_EQ(context.free_peer_bytes(1), kFree);
  MemoryResource& peer = context.peer_upstream(1);
  EXPECT_NE(&peer, &context.device_upstream());
  EXPECT_NE(&peer, &context.pinned_upstream());
  Buffer block(peer, 1024);
  context.offload().copy_async(block.data(), "peer", 5);
  context.offload().synchronize();
  EXPECT_STREQ(static_cast<const char*>(block.data()), "peer");
}

TEST(PeerMemoryResource, EmulatedPeerRefusesAnotherGpuAndOneWithoutPeerAccess) {
  cpu::CpuContext context;
  for (int gpu : {0, 2, -1}) {
    try {
      context.peer_upstream(gpu);
      FAIL() << "expected InvalidArgument for GPU " << gpu;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("no GPU " + std::to_string(gpu)), std::string::npos)
          << e.what();
    }
  }
  cpu::CpuContext unreachable({}, cpu::kUnlimitedDeviceBytes, {1, kFree, false});
  try {
    unreachable.free_peer_bytes(1);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("GPU 0 cannot access GPU 1 directly"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace vdnn::runtime
