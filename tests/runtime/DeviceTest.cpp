// Device queries on any machine: with or without CUDA, a driver or a GPU, they answer without
// crashing, and bad ordinals are typed errors.
#include "runtime/Device.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "runtime/Error.hpp"
#include "runtime/cpu/CpuContext.hpp"

namespace vdnn::runtime {
namespace {

static_assert(noexcept(cuda_device_count()));

TEST(DeviceTest, CountIsNonNegativeAndStable) {
  const int count = cuda_device_count();
  EXPECT_GE(count, 0);
  EXPECT_EQ(cuda_device_count(), count);
}

TEST(DeviceTest, NameOfAnOrdinalOutOfRangeThrowsInvalidArgument) {
  EXPECT_THROW(cuda_device_name(-1), InvalidArgument);
  EXPECT_THROW(cuda_device_name(cuda_device_count()), InvalidArgument);
}

TEST(DeviceTest, EveryDeviceHasAName) {
  const int count = cuda_device_count();
  if (count == 0) GTEST_SKIP() << "no CUDA device";
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    EXPECT_FALSE(cuda_device_name(ordinal).empty()) << "device " << ordinal;
  }
}

TEST(DeviceTest, HostMemoryIsNoDevicesMemory) {
  static_assert(noexcept(cuda_device_of(nullptr)));
  const std::vector<float> host(16);
  EXPECT_EQ(cuda_device_of(host.data()), -1);
  EXPECT_EQ(cuda_device_of(nullptr), -1);
}

TEST(DeviceTest, TheCpuContextHasNoCallerStreamsToWaitFor) {
  cpu::CpuContext context;
  int not_a_stream = 0;
  EXPECT_THROW(context.wait_for_caller(context.compute(), &not_a_stream), InvalidArgument);
}

}  // namespace
}  // namespace vdnn::runtime
