// DeviceContext and the CUDA owners under it, on a real device: stream properties, handle binding,
// an H2D -> D2D -> D2H round trip ordered by events alone, and CUDA failures as typed errors.
// Every test that needs a device skips when there is none.
#include "runtime/cuda/DeviceContext.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtime/Device.hpp"
#include "runtime/Error.hpp"
#include "runtime/UniqueHandle.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/CudaEvent.hpp"

namespace vdnn::runtime::cuda {
namespace {

static_assert(!std::is_copy_constructible_v<CudaStream> &&
              std::is_move_constructible_v<CudaStream>);
static_assert(!std::is_copy_constructible_v<CudaEvent> && std::is_move_constructible_v<CudaEvent>);
static_assert(!std::is_copy_constructible_v<CudnnHandle> &&
              std::is_move_constructible_v<CudnnHandle>);
static_assert(!std::is_copy_constructible_v<CublasHandle> &&
              std::is_move_constructible_v<CublasHandle>);
static_assert(!std::is_move_constructible_v<DeviceContext>);

// Test-local owners of raw allocations (the memory resources come later).
struct DeviceFree {
  static void destroy(void* ptr) noexcept { VDNN_CHECK_CUDA_NOTHROW(cudaFree(ptr)); }
};
struct PinnedFree {
  static void destroy(void* ptr) noexcept { VDNN_CHECK_CUDA_NOTHROW(cudaFreeHost(ptr)); }
};
using DeviceBytes = UniqueHandle<void*, DeviceFree>;
using PinnedBytes = UniqueHandle<void*, PinnedFree>;

DeviceBytes device_bytes(std::size_t bytes) {
  void* ptr = nullptr;
  VDNN_CHECK_CUDA(cudaMalloc(&ptr, bytes));
  return DeviceBytes(ptr);
}

PinnedBytes pinned_bytes(std::size_t bytes) {
  void* ptr = nullptr;
  VDNN_CHECK_CUDA(cudaMallocHost(&ptr, bytes));
  return PinnedBytes(ptr);
}

class DeviceContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

// Needs no device: the ordinal is checked before any CUDA call.
TEST(DeviceContextOrdinalTest, OrdinalOutOfRangeThrowsInvalidArgument) {
  EXPECT_THROW(DeviceContext{-1}, InvalidArgument);
  EXPECT_THROW(DeviceContext{cuda_device_count()}, InvalidArgument);
}

TEST_F(DeviceContextTest, StreamsAreDistinctAndNonBlocking) {
  const DeviceContext context(0);
  EXPECT_EQ(context.ordinal(), 0);
  int current = -1;
  VDNN_CHECK_CUDA(cudaGetDevice(&current));
  EXPECT_EQ(current, 0);

  const std::vector<cudaStream_t> streams = {context.compute_stream(), context.offload_stream(),
                                             context.prefetch_stream()};
  for (cudaStream_t stream : streams) {
    ASSERT_NE(stream, nullptr);
    unsigned int flags = 0;
    VDNN_CHECK_CUDA(cudaStreamGetFlags(stream, &flags));
    EXPECT_EQ(flags & cudaStreamNonBlocking, cudaStreamNonBlocking);
  }
  EXPECT_NE(streams[0], streams[1]);
  EXPECT_NE(streams[0], streams[2]);
  EXPECT_NE(streams[1], streams[2]);
}

TEST_F(DeviceContextTest, LibraryHandlesAreBoundToTheComputeStream) {
  const DeviceContext context(0);
  cudaStream_t cudnn_stream = nullptr;
  VDNN_CHECK_CUDNN(cudnnGetStream(context.cudnn(), &cudnn_stream));
  EXPECT_EQ(cudnn_stream, context.compute_stream());
  cudaStream_t cublas_stream = nullptr;
  VDNN_CHECK_CUBLAS(cublasGetStream(context.cublas(), &cublas_stream));
  EXPECT_EQ(cublas_stream, context.compute_stream());
}

// Prefetch (H2D) -> compute (D2D) -> offload (D2H), each stream waiting on the previous one's
// event; the host waits on the last event only, never on a stream or the device.
TEST_F(DeviceContextTest, CopyRoundTripIsOrderedByEventsAlone) {
  const DeviceContext context(0);
  constexpr std::size_t kBytes = std::size_t{1} << 22;
  const PinnedBytes source = pinned_bytes(kBytes);
  const PinnedBytes result = pinned_bytes(kBytes);
  const DeviceBytes staged = device_bytes(kBytes);
  const DeviceBytes computed = device_bytes(kBytes);
  auto* source_bytes = static_cast<unsigned char*>(source.get());
  for (std::size_t i = 0; i < kBytes; ++i) source_bytes[i] = static_cast<unsigned char>(i * 31 + 7);
  std::memset(result.get(), 0xAB, kBytes);

  CudaEvent prefetched;
  CudaEvent computed_event;
  CudaEvent offloaded;
  VDNN_CHECK_CUDA(cudaMemcpyAsync(staged.get(), source.get(), kBytes, cudaMemcpyHostToDevice,
                                  context.prefetch_stream()));
  prefetched.record(context.prefetch_stream());

  VDNN_CHECK_CUDA(cudaMemsetAsync(computed.get(), 0, kBytes, context.compute_stream()));
  wait_event(context.compute_stream(), prefetched);
  VDNN_CHECK_CUDA(cudaMemcpyAsync(computed.get(), staged.get(), kBytes, cudaMemcpyDeviceToDevice,
                                  context.compute_stream()));
  computed_event.record(context.compute_stream());

  wait_event(context.offload_stream(), computed_event);
  VDNN_CHECK_CUDA(cudaMemcpyAsync(result.get(), computed.get(), kBytes, cudaMemcpyDeviceToHost,
                                  context.offload_stream()));
  offloaded.record(context.offload_stream());

  offloaded.synchronize();
  EXPECT_TRUE(offloaded.ready());
  EXPECT_EQ(std::memcmp(result.get(), source.get(), kBytes), 0);
}

TEST_F(DeviceContextTest, OnlyTimingEventsMeasureElapsedTime) {
  const DeviceContext context(0);
  const DeviceBytes scratch = device_bytes(1 << 20);
  CudaEvent start(EventTiming::kEnabled);
  CudaEvent stop(EventTiming::kEnabled);
  start.record(context.compute_stream());
  VDNN_CHECK_CUDA(cudaMemsetAsync(scratch.get(), 0, 1 << 20, context.compute_stream()));
  stop.record(context.compute_stream());
  stop.synchronize();
  EXPECT_GE(elapsed_ms(start, stop), 0.0F);

  CudaEvent untimed_start;
  CudaEvent untimed_stop;
  untimed_start.record(context.compute_stream());
  untimed_stop.record(context.compute_stream());
  untimed_stop.synchronize();
  EXPECT_THROW(elapsed_ms(untimed_start, untimed_stop), CudaError);
}

TEST_F(DeviceContextTest, TheNullStreamIsRejected) {
  const DeviceContext context(0);
  CudaEvent event;
  EXPECT_THROW(event.record(nullptr), InvalidArgument);
  EXPECT_THROW(wait_event(nullptr, event), InvalidArgument);
  EXPECT_THROW(CudnnHandle{nullptr}, InvalidArgument);
  EXPECT_THROW(CublasHandle{nullptr}, InvalidArgument);
}

TEST_F(DeviceContextTest, MovingAnOwnerTransfersTheHandle) {
  const DeviceContext context(0);
  CudaStream source;
  cudaStream_t raw = source.get();
  CudaStream target(std::move(source));
  EXPECT_EQ(target.get(), raw);
  EXPECT_EQ(source.get(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty
}

TEST_F(DeviceContextTest, FailingCallThrowsCudaErrorAndLeavesTheContextUsable) {
  const DeviceContext context(0);
  constexpr std::size_t kAbsurdBytes = std::size_t{1} << 60;
  void* ptr = nullptr;
  std::string message;
  try {
    VDNN_CHECK_CUDA(cudaMalloc(&ptr, kAbsurdBytes));
  } catch (const CudaError& error) {
    message = error.what();
  }
  const DeviceBytes owner(ptr);  // frees it, should the allocation unexpectedly succeed
  EXPECT_NE(message.find("cudaMalloc(&ptr, kAbsurdBytes) failed at"), std::string::npos) << message;
  EXPECT_NE(message.find("DeviceContextTest.cpp:"), std::string::npos) << message;
  EXPECT_NE(message.find("cudaErrorMemoryAllocation"), std::string::npos) << message;

  // The failure was reported once: it must not resurface at the next launch check.
  EXPECT_NO_THROW(VDNN_CHECK_LAUNCH());
  CudaEvent event;
  event.record(context.compute_stream());
  EXPECT_NO_THROW(event.synchronize());
}

TEST_F(DeviceContextTest, ContextsCoexistWithoutSharingState) {
  const DeviceContext first(0);
  const DeviceContext second(0);
  EXPECT_NE(first.compute_stream(), second.compute_stream());
  EXPECT_NE(first.cudnn(), second.cudnn());
  EXPECT_NE(first.cublas(), second.cublas());
  if (cuda_device_count() < 2) return;

  const DeviceContext other(1);
  int current = -1;
  VDNN_CHECK_CUDA(cudaGetDevice(&current));
  EXPECT_EQ(current, 1);
  first.make_current();
  VDNN_CHECK_CUDA(cudaGetDevice(&current));
  EXPECT_EQ(current, 0);
}

}  // namespace
}  // namespace vdnn::runtime::cuda
