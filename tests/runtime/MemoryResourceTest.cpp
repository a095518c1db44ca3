// Memory resources and Buffer: zero bytes, alignment, statistics, and failures that leave the
// statistics unchanged.
#include <gtest/gtest.h>

#include <cstdint>

#include "runtime/Error.hpp"
#include "runtime/MemoryResource.hpp"
#include "runtime/memory/HostMemoryResource.hpp"
#include "runtime/memory/StatisticsAdaptor.hpp"

namespace vdnn::runtime {
namespace {

// Refuses every request above `limit` bytes.
class RefusingResource final : public MemoryResource {
 public:
  explicit RefusingResource(std::size_t limit) : limit_(limit) {}
  bool host_accessible() const noexcept override { return true; }
  std::string name() const override { return "refusing"; }

 private:
  void* do_allocate(std::size_t bytes) override {
    if (bytes > limit_) throw OutOfMemory("refused", bytes, 0, limit_);
    return host_.allocate(bytes);
  }
  void do_deallocate(void* ptr, std::size_t bytes) noexcept override {
    host_.deallocate(ptr, bytes);
  }
  HostMemoryResource host_;
  std::size_t limit_;
};

TEST(HostMemoryResource, ZeroBytesIsNullAndAllocationsAreAligned) {
  HostMemoryResource host;
  EXPECT_EQ(host.allocate(0), nullptr);
  host.deallocate(nullptr, 0);
  void* p = host.allocate(1000);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % MemoryResource::kAlignment, 0u);
  host.deallocate(p, 1000);
}

TEST(StatisticsAdaptor, TracksCurrentPeakAndCounts) {
  HostMemoryResource host;
  StatisticsAdaptor stats(host);
  void* a = stats.allocate(100);
  void* b = stats.allocate(300);
  stats.deallocate(a, 100);
  EXPECT_EQ(stats.stats().current_bytes, 300u);
  EXPECT_EQ(stats.stats().peak_bytes, 400u);
  EXPECT_EQ(stats.stats().allocations, 2u);
  EXPECT_EQ(stats.stats().deallocations, 1u);
  stats.reset_peak();
  EXPECT_EQ(stats.stats().peak_bytes, 300u);
  stats.deallocate(b, 300);
  EXPECT_EQ(stats.stats().current_bytes, 0u);
  EXPECT_EQ(stats.allocate(0), nullptr);
  EXPECT_EQ(stats.stats().allocations, 2u);
}

TEST(StatisticsAdaptor, FailedAllocationLeavesStatsUnchangedAndResourceUsable) {
  RefusingResource refusing(1024);
  StatisticsAdaptor stats(refusing);
  void* a = stats.allocate(512);
  const MemoryStats before = stats.stats();
  EXPECT_THROW(stats.allocate(4096), OutOfMemory);
  const MemoryStats after = stats.stats();
  EXPECT_EQ(after.current_bytes, before.current_bytes);
  EXPECT_EQ(after.peak_bytes, before.peak_bytes);
  EXPECT_EQ(after.allocations, before.allocations);
  void* b = stats.allocate(1024);
  EXPECT_NE(b, nullptr);
  stats.deallocate(a, 512);
  stats.deallocate(b, 1024);
}

TEST(Buffer, OwnsMovesAndFreesOnce) {
  HostMemoryResource host;
  StatisticsAdaptor stats(host);
  {
    Buffer a(stats, 64);
    EXPECT_FALSE(a.empty());
    Buffer b(std::move(a));
    EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from state is specified
    EXPECT_EQ(b.bytes(), 64u);
    Buffer c(stats, 32);
    c = std::move(b);  // frees c's old 32 bytes
    EXPECT_EQ(stats.stats().current_bytes, 64u);
    c.reset();
    EXPECT_EQ(stats.stats().current_bytes, 0u);
  }
  EXPECT_EQ(stats.stats().allocations, stats.stats().deallocations);
}

}  // namespace
}  // namespace vdnn::runtime
