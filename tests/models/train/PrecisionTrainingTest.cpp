// bf16 on the CPU backend (emulated storage, Note [Precision]): 200 steps of ResNet-20 at batch 32,
// two seeds per precision, track fp32's loss curve and test accuracy.
#include <gtest/gtest.h>

#include "models/train/PrecisionTrack.hpp"

namespace vdnn::models {
namespace {

TEST(PrecisionTraining, Bf16TracksFp32OnTheCpuFor200Steps) {
  testing::expect_bf16_tracks_fp32(graph::SessionOptions{}, 200, 2);
}

}  // namespace
}  // namespace vdnn::models
