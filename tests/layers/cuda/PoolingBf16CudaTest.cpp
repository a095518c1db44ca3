// The CUDA pooling layers (max, average, global average) in BF16 against their CPU layers in F32 on
// the same bf16-rounded inputs, in NCHW and NHWC, overwriting and accumulating input gradients.
// Tolerances (relative to the largest |cpu| of each tensor, see cuda_matches_cpu):
// - max pooling: forward selects a bf16 input, exactly; backward sums a window's gradients (ties
//   included: inputs of three values, so that the first maximum must win as on the CPU) in float
//   and rounds once, also when accumulating: one bf16 rounding.
// - average and global average pooling: window sums in float in another order than the CPU's (up
//   to 1e-6), then one bf16 rounding, in forward and backward alike.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "layers/LayerTestSupport.hpp"
#include "tests/layers/cuda/Bf16LayerCases.hpp"

namespace vdnn::test {
namespace {

using runtime::Shape;

class PoolingBf16Cuda : public Bf16LayerCuda {};

constexpr double kFloatSums = 1e-6;
constexpr double kAverageTolerance = kBf16Rounding + kFloatSums;

std::vector<Bf16Case> pooling_cases() {
  const auto max_case = [](const std::string& name, const Shape& input,
                           const layers::MaxPool2dSpec& s) {
    return Bf16Case{"max_" + name, s, {input}, kBf16Rounding, kBf16Rounding, 3};
  };
  const auto avg_case = [](const std::string& name, const Shape& input,
                           const layers::AvgPool2dSpec& s) {
    return Bf16Case{"avg_" + name, s, {input}, kAverageTolerance, kAverageTolerance};
  };
  const auto global_case = [](const Shape& input) {
    return Bf16Case{"global " + input.to_string(),
                    layers::GlobalAvgPoolSpec{},
                    {input},
                    kAverageTolerance,
                    kAverageTolerance};
  };
  return {
      // 2 x 2 and 3 x 3 at stride 2: the per-cell backward, on even and odd extents.
      max_case("2x2_stride_default_odd", Shape{3, 2, 9, 7}, max_pool({2, 2}, {0, 0}, {0, 0})),
      max_case("2x2_stride2_pad1", Shape{2, 5, 6, 7}, max_pool({2, 2}, {2, 2}, {1, 1})),
      max_case("3x3_stride2_pad1_odd", Shape{1, 7, 11, 9}, max_pool({3, 3}, {2, 2}, {1, 1})),
      max_case("resnet_stem", Shape{2, 32, 28, 28}, max_pool({3, 3}, {2, 2}, {1, 1})),
      // C % 4 == 0: in NHWC four channels a thread (8-byte bf16 vectors), forward and backward.
      max_case("2x2_stride2_c8", Shape{3, 8, 6, 8}, max_pool({2, 2}, {2, 2}, {0, 0})),
      max_case("2x2_stride2_pad1_c12_odd", Shape{1, 12, 9, 11}, max_pool({2, 2}, {2, 2}, {1, 1})),
      max_case("3x3_stride2_pad1_c4_odd", Shape{2, 4, 7, 9}, max_pool({3, 3}, {2, 2}, {1, 1})),
      max_case("ceil_3x3_stride2_c8", Shape{2, 16, 9, 8}, max_pool({3, 3}, {2, 2}, {0, 0}, true)),
      max_case("3x3_stride1_pad1_c8", Shape{2, 8, 7, 6}, max_pool({3, 3}, {1, 1}, {1, 1})),
      // Ceil mode and other windows: the per-element kernels.
      max_case("ceil_3x3_stride2_pad1", Shape{2, 3, 10, 7}, max_pool({3, 3}, {2, 2}, {1, 1}, true)),
      max_case("3x3_stride1_pad1", Shape{1, 6, 7, 5}, max_pool({3, 3}, {1, 1}, {1, 1})),
      max_case("2x3_nonsquare", Shape{1, 4, 9, 7}, max_pool({2, 3}, {1, 2}, {1, 1})),
      max_case("1x1_plane", Shape{4, 8, 1, 1}, max_pool({1, 1}, {1, 1}, {0, 0})),
      avg_case("2x2_stride_default_odd", Shape{3, 4, 9, 7}, avg_pool({2, 2}, {0, 0}, {0, 0}, true)),
      avg_case("3x3_stride2_pad1_include_pad", Shape{1, 8, 9, 9},
               avg_pool({3, 3}, {2, 2}, {1, 1}, true)),
      avg_case("3x3_stride2_pad1_exclude_pad", Shape{2, 12, 6, 6},
               avg_pool({3, 3}, {2, 2}, {1, 1}, false)),
      avg_case("2x4_nonsquare", Shape{2, 5, 9, 6}, avg_pool({2, 4}, {1, 3}, {1, 2}, false)),
      avg_case("densenet_transition", Shape{2, 16, 8, 8}, avg_pool({2, 2}, {2, 2}, {0, 0}, true)),
      avg_case("1x1_plane", Shape{2, 9, 1, 1}, avg_pool({1, 1}, {1, 1}, {0, 0}, true)),
      global_case(Shape{2, 6, 6, 5}),
      global_case(Shape{3, 9, 1, 1}),
      global_case(Shape{2, 40, 7, 7}),
      global_case(Shape{2, 128, 7, 7}),
      global_case(Shape{2, 8, 28, 28}),
  };
}

TEST_F(PoolingBf16Cuda, PoolingLayersMatchCpuInBothLayouts) { expect_cases_match(pooling_cases()); }

}  // namespace
}  // namespace vdnn::test
