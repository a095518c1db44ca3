// Caller batches already on the device (the acceptance test of issue 26): the caller's own
// cudaMalloc buffers, written on the caller's own stream, train bitwise as the same batches from
// host memory under every policy; device and host memory marked wrongly are InvalidArguments.
// Compiled where the API tests link the CUDA runtime (CUDA builds); skips without a device.
#ifdef VDNN_API_TESTS_CUDA
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vdnn/Error.hpp>
#include <vdnn/Trainer.hpp>
#include <vector>

#include "api/CallerData.hpp"
#include "api/TinyNetwork.hpp"

namespace {

#define ASSERT_CUDA(call) ASSERT_EQ((call), cudaSuccess) << #call

// The caller's side: device buffers for one batch and a stream of its own.
struct CallerDevice {
  void* images = nullptr;
  std::int32_t* labels = nullptr;
  cudaStream_t stream = nullptr;
  std::size_t image_bytes = 0;

  explicit CallerDevice(std::size_t bytes, std::int64_t batch) : image_bytes(bytes) {
    EXPECT_EQ(cudaMalloc(&images, bytes), cudaSuccess);
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&labels), sizeof(std::int32_t) * batch),
              cudaSuccess);
    EXPECT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  }
  ~CallerDevice() {
    cudaStreamDestroy(stream);
    cudaFree(labels);
    cudaFree(images);
  }
  CallerDevice(const CallerDevice&) = delete;
  CallerDevice& operator=(const CallerDevice&) = delete;

  // Enqueues the upload of `host` on the caller's stream, unsynchronized: the step must wait.
  vdnn::Batch upload(const vdnn::Batch& host) const {
    EXPECT_EQ(cudaMemcpyAsync(images, host.images, image_bytes, cudaMemcpyHostToDevice, stream),
              cudaSuccess);
    EXPECT_EQ(cudaMemcpyAsync(labels, host.labels, sizeof(std::int32_t) * host.size,
                              cudaMemcpyHostToDevice, stream),
              cudaSuccess);
    vdnn::Batch device = host;
    device.images = images;
    device.labels = labels;
    device.on_device = true;
    device.stream = stream;
    return device;
  }
};

vdnn::TrainerConfig gpu_config(const std::string& policy) {
  vdnn::TrainerConfig config;
  config.batch = 4;
  config.backend = vdnn::Backend::Cuda;
  config.policy = policy;
  config.deterministic = true;
  config.seed = 11;
  return config;
}

constexpr vdnn::ElementType kF32 = vdnn::ElementType::F32;
constexpr vdnn::ImageLayout kNchw = vdnn::ImageLayout::NCHW;

TEST(DeviceBatchApiGpu, DeviceBatchesTrainBitwiseAsHostBatchesUnderEveryPolicy) {
  if (!vdnn::cuda_available()) GTEST_SKIP() << "no CUDA device";
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  const vdnn::testing::CallerBatches data(4, 3, 8, 8);
  const CallerDevice device(4 * 3 * 8 * 8 * sizeof(float), 4);
  for (const std::string& policy : vdnn::policy_names()) {
    vdnn::Trainer from_host(network, gpu_config(policy));
    vdnn::Trainer from_device(network, gpu_config(policy));
    for (int i = 0; i < 4; ++i) {
      const vdnn::Batch host = data.batch(i, kF32, kNchw);
      const double expected = from_host.step(host).loss;
      EXPECT_EQ(from_device.step(device.upload(host)).loss, expected) << policy << ", step " << i;
    }
  }
}

TEST(DeviceBatchApiGpu, MemoryMarkedWronglyIsAnInvalidArgument) {
  if (!vdnn::cuda_available()) GTEST_SKIP() << "no CUDA device";
  vdnn::Trainer trainer(vdnn::testing::tiny_resnet("tiny"), gpu_config("baseline"));
  const vdnn::testing::CallerBatches data(4, 3, 8, 8);
  const CallerDevice device(4 * 3 * 8 * 8 * sizeof(float), 4);
  const vdnn::Batch host = data.batch(0, kF32, kNchw);
  const vdnn::Batch on_device = device.upload(host);
  ASSERT_CUDA(cudaStreamSynchronize(device.stream));
  vdnn::Batch unmarked = on_device;
  unmarked.on_device = false;
  EXPECT_THROW(trainer.step(unmarked), vdnn::InvalidArgument);
  vdnn::Batch host_marked = host;
  host_marked.on_device = true;
  host_marked.stream = device.stream;
  EXPECT_THROW(trainer.step(host_marked), vdnn::InvalidArgument);
  vdnn::Batch no_stream = on_device;
  no_stream.stream = nullptr;
  EXPECT_THROW(trainer.step(no_stream), vdnn::InvalidArgument);
  vdnn::Batch channels_last = on_device;
  channels_last.layout = vdnn::ImageLayout::NHWC;
  EXPECT_THROW(trainer.step(channels_last), vdnn::InvalidArgument);
  vdnn::TrainerConfig cpu = gpu_config("baseline");
  cpu.backend = vdnn::Backend::Cpu;
  vdnn::Trainer on_cpu(vdnn::testing::tiny_resnet("tiny"), cpu);
  EXPECT_THROW(on_cpu.step(unmarked), vdnn::InvalidArgument);  // device memory on a CPU run
  EXPECT_EQ(trainer.iteration(), 0);
  EXPECT_TRUE(std::isfinite(trainer.step(on_device).loss));
}

}  // namespace
#endif  // VDNN_API_TESTS_CUDA
