// ResidentTensor: the residency state machine, its round trip through pinned memory, accessor
// errors, and out-of-memory errors that name the tensor.
#include "runtime/ResidentTensor.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "runtime/cpu/CpuContext.hpp"
#include "runtime/memory/PoolMemoryResource.hpp"

namespace vdnn::runtime {
namespace {

TEST(ResidentTensor, RoundTripThroughPinnedMemoryKeepsTheData) {
  cpu::CpuContext context;
  PoolMemoryResource device(context.device_upstream(), 1 << 16);
  PoolMemoryResource pinned(context.pinned_upstream(), 1 << 16);
  ResidentTensor t("x", Shape{4, 8}, context);
  EXPECT_EQ(t.residency(), Residency::Absent);
  t.allocate(device);
  float* data = t.view().as<float>();
  context.compute().enqueue([data] {
    for (int i = 0; i < 32; ++i) data[i] = static_cast<float>(i);
  });
  t.offload(pinned);
  EXPECT_EQ(t.residency(), Residency::Offloading);
  EXPECT_NO_THROW(t.view());  // still readable while the copy runs
  t.release(/*poison=*/true);
  EXPECT_EQ(t.residency(), Residency::Host);
  EXPECT_THROW(t.view(), InvalidArgument);  // never a hidden copy
  t.prefetch(device);
  EXPECT_THROW(t.view(), InvalidArgument);  // not until the prefetch is awaited
  t.await_prefetch();
  const float* back = t.view().as<float>();
  float sum = 0.0f;
  context.compute().enqueue([back, &sum] {
    for (int i = 0; i < 32; ++i) sum += back[i];
  });
  context.compute().synchronize();
  EXPECT_EQ(sum, 496.0f);
  t.free(/*poison=*/false);
  EXPECT_EQ(t.residency(), Residency::Absent);
  context.offload().synchronize();
  context.prefetch().synchronize();
  // The pools hold the tensor's events until they retire them (Note [Deferred frees]).
  device.retire_completed();
  pinned.retire_completed();
}

// An aliased tensor is read (and offloaded) from the caller's memory, never written or poisoned;
// its own memory stays allocated until the release; it does not migrate.
TEST(ResidentTensor, AnAliasIsReadInPlaceAndNeverPoisoned) {
  cpu::CpuContext context;
  PoolMemoryResource device(context.device_upstream(), 1 << 16);
  PoolMemoryResource pinned(context.pinned_upstream(), 1 << 16);
  std::vector<float> caller(32, 2.0f);
  ResidentTensor t("input", Shape{4, 8}, context);
  EXPECT_THROW(t.alias(caller.data()), InvalidArgument);  // Absent
  t.allocate(device);
  EXPECT_THROW(t.alias(nullptr), InvalidArgument);
  t.alias(caller.data());
  EXPECT_EQ(t.view().as<float>(), caller.data());
  EXPECT_GE(device.bytes_in_use(), t.bytes());  // still allocated
  EXPECT_THROW(t.evict(), InvalidArgument);
  t.offload(pinned);
  t.release(/*poison=*/true);
  t.prefetch(device);
  t.await_prefetch();
  EXPECT_NE(t.view().as<float>(), caller.data());  // its own memory again, holding the copy
  const float* back = t.view().as<float>();
  float sum = 0.0f;
  context.compute().enqueue([back, &sum] {
    for (int i = 0; i < 32; ++i) sum += back[i];
  });
  t.free(/*poison=*/true);
  context.compute().synchronize();
  context.offload().synchronize();
  EXPECT_EQ(sum, 64.0f);
  EXPECT_TRUE(std::all_of(caller.begin(), caller.end(), [](float x) { return x == 2.0f; }));
  t.allocate(device);  // a new allocation forgets the alias
  EXPECT_NE(t.view().as<float>(), caller.data());
  t.free(/*poison=*/false);
  context.compute().synchronize();
  device.retire_completed();
  pinned.retire_completed();
}

// A prefetch issued while the offload copy is still queued must wait for it: the copy back reads
// the pinned buffer the offload writes (a map offloaded just before the loss and prefetched right
// after it once read stale data).
TEST(ResidentTensor, PrefetchWaitsForAnUnfinishedOffload) {
  cpu::CpuContext context;
  PoolMemoryResource device(context.device_upstream(), 1 << 16);
  PoolMemoryResource pinned(context.pinned_upstream(), 1 << 16);
  ResidentTensor t("x", Shape{32}, context);
  t.allocate(device);
  float* data = t.view().as<float>();
  context.compute().enqueue([data] {
    for (int i = 0; i < 32; ++i) data[i] = static_cast<float>(i);
  });
  // The offload stream is busy for a while, and the prefetch takes memory from another pool so
  // that the host does not wait for the released block (and with it for the offload).
  context.offload().enqueue([] { std::this_thread::sleep_for(std::chrono::milliseconds(100)); });
  t.offload(pinned);
  t.release(/*poison=*/false);
  PoolMemoryResource other_device(context.device_upstream(), 1 << 16);
  t.prefetch(other_device);
  t.await_prefetch();
  const float* back = t.view().as<float>();
  float sum = 0.0f;
  context.compute().enqueue([back, &sum] {
    for (int i = 0; i < 32; ++i) sum += back[i];
  });
  context.compute().synchronize();
  EXPECT_EQ(sum, 496.0f);
  t.free(/*poison=*/false);
  context.offload().synchronize();
  context.prefetch().synchronize();
  device.retire_completed();
  other_device.retire_completed();
  pinned.retire_completed();
}

TEST(ResidentTensor, PoisonedReleaseFillsTheDeviceCopyWithNaN) {
  cpu::CpuContext context;
  PoolMemoryResource device(context.device_upstream(), 1 << 12);
  PoolMemoryResource pinned(context.pinned_upstream(), 1 << 12);
  ResidentTensor t("y", Shape{8}, context);
  t.allocate(device);
  float* stale = t.view().as<float>();
  t.offload(pinned);
  t.release(/*poison=*/true);
  context.offload().synchronize();
  EXPECT_TRUE(std::isnan(stale[0]));  // a use after release would see NaN
  t.drop();
  device.retire_completed();
}

TEST(ResidentTensor, WrongTransitionsAndOutOfMemoryNameTheTensor) {
  cpu::CpuContext context;
  PoolMemoryResource device(context.device_upstream(), 1024);
  PoolMemoryResource pinned(context.pinned_upstream(), 1024);
  ResidentTensor big("layer1.0.conv1", Shape{1024}, context);
  try {
    big.allocate(device);
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("layer1.0.conv1"), std::string::npos) << e.what();
    EXPECT_EQ(e.bytes_requested(), 4096u);
    EXPECT_EQ(e.bytes_limit(), 1024u);
  }
  EXPECT_EQ(big.residency(), Residency::Absent);
  ResidentTensor small("small", Shape{16}, context);
  small.allocate(device);  // the pool stayed usable
  EXPECT_THROW(small.allocate(device), InvalidArgument);
  EXPECT_THROW(small.release(false), InvalidArgument);
  EXPECT_THROW(small.await_prefetch(), InvalidArgument);
  small.free(false);
}

}  // namespace
}  // namespace vdnn::runtime
