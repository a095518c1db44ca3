// The public API's TrainerConfig starts from the defaults of `vdnn train` (which keeps them in
// TrainOptions and RunOptions): one set of defaults, checked here rather than copied silently.
#include <gtest/gtest.h>

#include <vdnn/Trainer.hpp>
#include <vector>

#include "layers/Optimizer.hpp"
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
  EXPECT_EQ(api.offload_peer, -1);  // no peer tier
  EXPECT_EQ(api.peer_budget, 0U);
  EXPECT_TRUE(cli.run.tiers.gpus.empty());
  EXPECT_TRUE(cli.run.tiers.budget.empty());
  EXPECT_EQ(api.host_budget, 0U);  // what the machine leaves
  EXPECT_TRUE(cli.run.tiers.host_budget.empty());
  EXPECT_EQ(api.check_gradients, cli.check_gradients);
  EXPECT_EQ(api.distributed.world_size, cli.gpus);
  EXPECT_EQ(api.distributed.timeout_seconds, cli.nccl_timeout);
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
  EXPECT_EQ(api.optimizer, cli.run.optimizer);
  EXPECT_EQ(api.dampening, cli.run.dampening);
  EXPECT_EQ(api.nesterov, cli.run.nesterov);
  EXPECT_EQ(std::vector<double>({api.adam_beta1, api.adam_beta2}), cli.run.betas);
  EXPECT_EQ(api.adam_eps, cli.run.adam_eps);
  EXPECT_EQ(api.lars_trust, cli.run.lars_trust);
  EXPECT_EQ(api.clip_grad_norm, cli.run.clip_grad_norm);
  EXPECT_EQ(api.label_smoothing, cli.run.label_smoothing);
  const layers::OptimizerConfig optimizer;  // the library's own defaults
  EXPECT_EQ(layers::optimizer_name(optimizer.kind), cli.run.optimizer);
  EXPECT_EQ(optimizer.momentum, cli.run.momentum);
  EXPECT_EQ(optimizer.dampening, cli.run.dampening);
  EXPECT_EQ(optimizer.weight_decay, cli.run.weight_decay);
  EXPECT_EQ(std::vector<double>({optimizer.adam_beta1, optimizer.adam_beta2}), cli.run.betas);
  EXPECT_EQ(optimizer.adam_eps, cli.run.adam_eps);
  EXPECT_EQ(optimizer.lars_trust, cli.run.lars_trust);
  EXPECT_EQ(optimizer.clip_grad_norm, cli.run.clip_grad_norm);
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
