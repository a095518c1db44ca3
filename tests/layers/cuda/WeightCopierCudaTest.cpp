// The bf16 weight copies on the CUDA backend (layers/WeightCopies.hpp) against the CPU's, bit for
// bit: masters of one element up to several chunks (WeightCopierCuda::kCopyChunk), ties included,
// refreshed again after the masters change.
#include "layers/cuda/WeightCopierCuda.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "layers/Registry.hpp"
#include "layers/WeightCopies.hpp"
#include "layers/cuda/LayerRun.hpp"
#include "runtime/BFloat16.hpp"

namespace vdnn::test {
namespace {

using runtime::BFloat16;
using runtime::DType;
using WeightCopierCuda = CudaTest;

TEST_F(WeightCopierCuda, CopiesAreTheCpusRoundingBitForBit) {
  constexpr std::int64_t kChunk = layers::cuda::WeightCopierCuda::kCopyChunk;
  const std::vector<Shape> shapes = {Shape{1}, Shape{64, 3, 3, 3}, Shape{3 * kChunk + 5},
                                     Shape{kChunk}};
  std::vector<std::unique_ptr<DeviceTensor>> masters;
  std::vector<std::unique_ptr<layers::cuda::DeviceBuffer>> copies;
  std::vector<layers::WeightCopy> pairs;
  std::vector<std::vector<float>> values;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    values.push_back(uniform(shapes[i].numel(), 40 + i, -3.0f, 3.0f));
    values.back()[0] = 1.0f + 0x1p-8f;  // a tie: to even
    masters.push_back(std::make_unique<DeviceTensor>(stream(), values.back(), shapes[i]));
    copies.push_back(std::make_unique<layers::cuda::DeviceBuffer>(
        static_cast<std::size_t>(shapes[i].numel()) * sizeof(BFloat16)));
    pairs.push_back({masters.back()->view(), {copies.back()->as<void>(), shapes[i], DType::BF16}});
  }
  const auto copier = layers::make_weight_copier(layers::Backend::Cuda, cuda_options(), pairs);
  for (int round = 0; round < 2; ++round) {
    copier->refresh();
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      SCOPED_TRACE(shapes[i].to_string() + " round " + std::to_string(round));
      std::vector<BFloat16> got(values[i].size());
      VDNN_CHECK_CUDA(cudaMemcpyAsync(got.data(), copies[i]->as<void>(),
                                      got.size() * sizeof(BFloat16), cudaMemcpyDeviceToHost,
                                      stream()));
      VDNN_CHECK_CUDA(cudaStreamSynchronize(stream()));
      std::int64_t wrong = 0;
      for (std::size_t k = 0; k < got.size(); ++k) {
        wrong += got[k].bits != runtime::to_bfloat16(values[i][k]).bits ? 1 : 0;
      }
      EXPECT_EQ(wrong, 0);
    }
    // The masters change in place (an update): the next refresh follows them.
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      for (float& v : values[i]) v *= -0.75f;
      VDNN_CHECK_CUDA(cudaMemcpyAsync(masters[i]->view().data, values[i].data(),
                                      values[i].size() * sizeof(float), cudaMemcpyHostToDevice,
                                      stream()));
    }
  }
}

}  // namespace
}  // namespace vdnn::test
