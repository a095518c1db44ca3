// The public API's TrainerConfig starts from the defaults of `vdnn train` (which keeps them in
// TrainOptions and RunOptions): one set of defaults, checked here rather than copied silently.
#include <gtest/gtest.h>

#include <vdnn/Trainer.hpp>

#include "tools/cli/TrainCommand.hpp"

namespace vdnn::tools {
namespace {

TEST(ApiDefaults, TrainerConfigMatchesTheCommandLine) {
  const vdnn::TrainerConfig api;
  const TrainOptions cli;
  EXPECT_EQ(api.batch, cli.batch);
  EXPECT_EQ(api.total_steps, cli.iters);
  EXPECT_EQ(api.policy, cli.policy);
  EXPECT_EQ(api.memory_budget, 0U);
  EXPECT_TRUE(cli.mem_budget.empty());
  EXPECT_EQ(api.check_gradients, cli.check_gradients);
  EXPECT_EQ(api.backend, vdnn::Backend::Auto);
  EXPECT_EQ(cli.run.device, "auto");
  EXPECT_EQ(api.data, cli.run.data);
  EXPECT_EQ(api.augment, cli.run.augment);
  EXPECT_EQ(api.decode, cli.run.decode);
  EXPECT_EQ(api.data_workers, static_cast<std::size_t>(cli.run.data_workers));
  EXPECT_FALSE(api.evaluation);
  EXPECT_EQ(api.seed, cli.run.seed);
  EXPECT_EQ(api.learning_rate, cli.run.lr);
  EXPECT_EQ(api.lr_schedule, cli.run.schedule);
  EXPECT_EQ(api.warmup_steps, cli.run.lr_warmup);
  EXPECT_EQ(api.momentum, cli.run.momentum);
  EXPECT_EQ(api.weight_decay, cli.run.weight_decay);
  EXPECT_EQ(api.decay_bn_bias, !cli.run.no_decay_bn_bias);
  EXPECT_EQ(api.deterministic, cli.run.deterministic);
  EXPECT_EQ(api.tf32, cli.run.math == "tf32");
  EXPECT_EQ(api.cost_cache, cli.run.cost_cache);
  EXPECT_EQ(api.cache, !cli.run.no_cache);
  EXPECT_EQ(api.measure_costs, cli.run.measure_costs);
  EXPECT_EQ(api.fuse, !cli.run.no_fuse);
  EXPECT_EQ(api.layout, cli.run.layout);
  EXPECT_EQ(api.precision, cli.run.precision);
}

}  // namespace
}  // namespace vdnn::tools
