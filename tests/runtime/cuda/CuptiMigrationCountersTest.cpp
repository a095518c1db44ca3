// CUPTI's unified-memory counters on a real device: prefetches each way and demand faults land in
// the interval they happen in, and collectors are exclusive but can follow one another. Skips
// without a device, and where the driver does not support unified-memory profiling (loudly).
#include "runtime/cuda/CuptiMigrationCounters.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "runtime/Device.hpp"
#include "runtime/Error.hpp"
#include "runtime/UniqueHandle.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::runtime::cuda {
namespace {

constexpr std::size_t kBytes = std::size_t{64} << 20;
constexpr int kOrdinal = 0;

// Test-local owners of managed and device allocations (both released by cudaFree).
struct CudaFree {
  static void destroy(void* ptr) noexcept { VDNN_CHECK_CUDA_NOTHROW(cudaFree(ptr)); }
};
using ManagedBytes = UniqueHandle<void*, CudaFree>;
using DeviceBytes = UniqueHandle<void*, CudaFree>;

// Managed memory only well below what the device has free (never oversubscribe: see
// shared/GPU-MACHINE.md).
ManagedBytes managed_bytes(std::size_t bytes) {
  std::size_t free = 0;
  std::size_t total = 0;
  VDNN_CHECK_CUDA(cudaMemGetInfo(&free, &total));
  VDNN_EXPECTS(bytes < free / 4, "the test's managed allocation would not fit comfortably");
  void* ptr = nullptr;
  VDNN_CHECK_CUDA(cudaMallocManaged(&ptr, bytes, cudaMemAttachGlobal));
  return ManagedBytes(ptr);
}

DeviceBytes device_bytes(std::size_t bytes) {
  void* ptr = nullptr;
  VDNN_CHECK_CUDA(cudaMalloc(&ptr, bytes));
  return DeviceBytes(ptr);
}

constexpr cudaMemLocation kHost{cudaMemLocationTypeHost, 0};
constexpr cudaMemLocation kDevice{cudaMemLocationTypeDevice, kOrdinal};

// Moves all of `managed` to `where` and waits for it.
void prefetch(const ManagedBytes& managed, cudaMemLocation where, cudaStream_t stream) {
  VDNN_CHECK_CUDA(cudaMemPrefetchAsync(managed.get(), kBytes, where, 0, stream));
  VDNN_CHECK_CUDA(cudaStreamSynchronize(stream));
}

std::string describe(const MigrationTraffic& t) {
  std::ostringstream out;
  out << "to_device " << t.to_device_bytes << " B in " << t.to_device_seconds << " s, to_host "
      << t.to_host_bytes << " B in " << t.to_host_seconds << " s, gpu_page_faults "
      << t.gpu_page_faults;
  return out.str();
}

class CuptiMigrationCountersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }

  // The counters for device 0; null after recording a skip (the driver does not support
  // unified-memory profiling) or a failure (any other reason). The caller returns on null.
  static std::unique_ptr<MigrationCounters> counters_or_skip() {
    std::string why;
    auto counters = make_cupti_migration_counters(kOrdinal, &why);
    if (counters != nullptr) return counters;
    if (why.find("not supported") != std::string::npos) {
      std::fprintf(stderr, "\n*** CUPTI unified-memory counters UNAVAILABLE here: %s ***\n\n",
                   why.c_str());
      [&] { GTEST_SKIP() << why; }();
    } else {
      ADD_FAILURE() << "no CUPTI unified-memory counters: " << why;
    }
    return nullptr;
  }
};

TEST_F(CuptiMigrationCountersTest, CountsPrefetchesEachWayAndDemandFaultsPerInterval) {
  // The collector comes before the allocation (Note [Collector before allocations]).
  auto counters = counters_or_skip();
  if (counters == nullptr) return;
  DeviceContext context(kOrdinal);
  const cudaStream_t stream = context.compute_stream();
  ManagedBytes managed = managed_bytes(kBytes);
  VDNN_CHECK_CUDA(cudaMemsetAsync(managed.get(), 1, kBytes, stream));
  prefetch(managed, kDevice, stream);      // all pages on the device
  static_cast<void>(counters->collect());  // the setup's own traffic

  prefetch(managed, kHost, stream);
  const MigrationTraffic out = counters->collect();
  EXPECT_GE(out.to_host_bytes, kBytes) << describe(out);
  EXPECT_EQ(out.to_device_bytes, 0u) << describe(out);
  EXPECT_GT(out.to_host_seconds, 0.0) << describe(out);
  if (out.to_host_bytes < kBytes) {
    // Tells "records arrive late" apart from "records never arrive".
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    ADD_FAILURE() << "collected 500 ms later: " << describe(counters->collect());
  }

  prefetch(managed, kDevice, stream);
  const MigrationTraffic in = counters->collect();
  EXPECT_GE(in.to_device_bytes, kBytes) << describe(in);
  EXPECT_EQ(in.to_host_bytes, 0u) << describe(in);
  EXPECT_GT(in.to_device_seconds, 0.0) << describe(in);

  // Pages on the host, then a kernel (cuBLAS's copy) reads all of them: demand faults.
  prefetch(managed, kHost, stream);
  static_cast<void>(counters->collect());
  DeviceBytes target = device_bytes(kBytes);
  const int floats = static_cast<int>(kBytes / sizeof(float));
  VDNN_CHECK_CUBLAS(cublasScopy(context.cublas(), floats, static_cast<const float*>(managed.get()),
                                1, static_cast<float*>(target.get()), 1));
  VDNN_CHECK_CUDA(cudaStreamSynchronize(stream));
  const MigrationTraffic faults = counters->collect();
  EXPECT_GT(faults.gpu_page_faults, 0u) << describe(faults);
  EXPECT_GT(faults.to_device_bytes, 0u) << describe(faults);
  std::printf("[ info     ] kernel read of %zu B of host-resident managed memory: %s\n", kBytes,
              describe(faults).c_str());

  // Not a contract, a measurement: what a copy-engine read of host-resident managed memory moves.
  prefetch(managed, kHost, stream);
  static_cast<void>(counters->collect());
  VDNN_CHECK_CUDA(cudaMemcpyAsync(target.get(), managed.get(), kBytes, cudaMemcpyDefault, stream));
  VDNN_CHECK_CUDA(cudaStreamSynchronize(stream));
  std::printf("[ info     ] cudaMemcpyAsync of %zu B of host-resident managed memory: %s\n", kBytes,
              describe(counters->collect()).c_str());
}

TEST_F(CuptiMigrationCountersTest, OneCollectorAtATimeThenTheNextOneCounts) {
  auto first = counters_or_skip();
  if (first == nullptr) return;

  std::string why;
  EXPECT_EQ(make_cupti_migration_counters(kOrdinal, &why), nullptr);
  EXPECT_NE(why.find("another collector"), std::string::npos) << why;
  EXPECT_EQ(make_cupti_migration_counters(kOrdinal, nullptr), nullptr);
  EXPECT_THROW(make_cupti_migration_counters(cuda_device_count(), &why), InvalidArgument);
  first.reset();

  auto next = make_cupti_migration_counters(kOrdinal, &why);
  ASSERT_NE(next, nullptr) << why;
  DeviceContext context(kOrdinal);
  ManagedBytes managed = managed_bytes(kBytes);
  std::memset(managed.get(), 1, kBytes);  // pages on the host
  prefetch(managed, kDevice, context.prefetch_stream());
  const MigrationTraffic in = next->collect();
  EXPECT_GE(in.to_device_bytes, kBytes) << describe(in);
}

}  // namespace
}  // namespace vdnn::runtime::cuda
