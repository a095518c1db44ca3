// bf16 on the CPU backend (emulated storage, Note [Precision]): 200 steps of ResNet-20 at batch 32
// track fp32's loss curve (0.950 against 0.927). Test accuracy after 200 steps is not within a
// point, and not yet understood: evaluations this early swing by 10 to 20 points with the learning
// rate in either precision (fp32 0.80 to 0.90, bf16 0.65 to 1.00), while 2000 steps on the GPU
// agree exactly (PrecisionCudaTest). Issue 24 stays open on it.
#include <gtest/gtest.h>

#include "models/train/PrecisionTrack.hpp"

namespace vdnn::models {
namespace {

TEST(PrecisionTraining, Bf16TracksFp32OnTheCpuFor200Steps) {
  testing::expect_bf16_tracks_fp32(graph::SessionOptions{}, 200, /*check_accuracy=*/false);
}

}  // namespace
}  // namespace vdnn::models
