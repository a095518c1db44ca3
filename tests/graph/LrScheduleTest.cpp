// Learning-rate schedules against their closed forms.
#include "graph/LrSchedule.hpp"

#include <gtest/gtest.h>

#include "runtime/Error.hpp"

namespace vdnn::graph {
namespace {

TEST(LrSchedule, ConstantStepCosine) {
  LrSchedule s;
  s.base_lr = 0.1;
  EXPECT_DOUBLE_EQ(s.at(1000), 0.1);
  s.policy = LrPolicy::Step;
  s.step_size = 10;
  s.gamma = 0.5;
  EXPECT_DOUBLE_EQ(s.at(9), 0.1);
  EXPECT_DOUBLE_EQ(s.at(10), 0.05);
  EXPECT_DOUBLE_EQ(s.at(25), 0.025);
  s.policy = LrPolicy::Cosine;
  s.total_steps = 100;
  s.min_lr = 0.0;
  EXPECT_DOUBLE_EQ(s.at(0), 0.1);
  EXPECT_NEAR(s.at(50), 0.05, 1e-12);
  EXPECT_NEAR(s.at(100), 0.0, 1e-12);
  EXPECT_NEAR(s.at(200), 0.0, 1e-12);
}

// torchvision's recipe: SequentialLR([LinearLR(start_factor=0.01, total_iters=w),
// CosineAnnealingLR(T_max=total - w)], milestones=[w]).
TEST(LrSchedule, LinearWarmupThenThePolicyFromItsFirstStep) {
  LrSchedule s;
  s.base_lr = 0.4;
  s.policy = LrPolicy::Cosine;
  s.total_steps = 110;
  s.warmup_steps = 10;
  EXPECT_DOUBLE_EQ(s.at(0), 0.004);
  EXPECT_DOUBLE_EQ(s.at(5), 0.4 * (0.01 + 0.99 * 0.5));
  EXPECT_DOUBLE_EQ(s.at(10), 0.4);  // the cosine's step 0
  EXPECT_NEAR(s.at(60), 0.2, 1e-12);
  EXPECT_NEAR(s.at(110), 0.0, 1e-12);
  s.policy = LrPolicy::Step;
  s.step_size = 20;
  s.gamma = 0.5;
  EXPECT_DOUBLE_EQ(s.at(29), 0.4);
  EXPECT_DOUBLE_EQ(s.at(30), 0.2);
}

TEST(LrSchedule, ParsesNamesAndRejectsOthers) {
  EXPECT_EQ(parse_lr_policy("cosine"), LrPolicy::Cosine);
  EXPECT_STREQ(lr_policy_name(parse_lr_policy("step")), "step");
  EXPECT_THROW(parse_lr_policy("linear"), runtime::InvalidArgument);
}

}  // namespace
}  // namespace vdnn::graph
