// TrainerConfig::distributed: a single process by default, the run's place read from torchrun's
// variables, bad values and several processes on the CPU backend refused by name;
// TrainerConfig::sync_batch_norm off by default and bit-neutral for one process.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>

#include <string>
#include <vdnn/Error.hpp>
#include <vdnn/Trainer.hpp>

#include "api/TinyNetwork.hpp"

namespace vdnn {
namespace {

// The message of the InvalidArgument the Trainer's constructor throws for `config`.
std::string refusal(const TrainerConfig& config) {
  try {
    Trainer trainer(testing::tiny_resnet("distributed"), config);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(DistributedApi, TheDefaultIsOneProcessThatTrains) {
  const TrainerConfig config = testing::tiny_cpu_config();
  EXPECT_EQ(config.distributed.world_size, 1);
  EXPECT_EQ(config.distributed.rank, 0);
  EXPECT_EQ(config.distributed.timeout_seconds, 300.0);
  Trainer trainer(testing::tiny_resnet("distributed"), config);
  EXPECT_TRUE(std::isfinite(trainer.step().loss));
}

TEST(DistributedApi, SyncBatchNormIsOffByDefaultAndChangesNoBitOfOneProcess) {
  TrainerConfig config = testing::tiny_cpu_config();
  EXPECT_FALSE(config.sync_batch_norm);
  Trainer local(testing::tiny_resnet("distributed"), config);
  config.sync_batch_norm = true;
  Trainer synced(testing::tiny_resnet("distributed"), config);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(synced.step().loss, local.step().loss) << i;
}

TEST(DistributedApi, BadValuesAndProcessesOnTheCpuAreRefusedByName) {
  TrainerConfig config = testing::tiny_cpu_config();
  config.distributed.world_size = 2;
  config.distributed.rank = 2;
  EXPECT_NE(refusal(config).find("rank 2 of a world of 2"), std::string::npos) << refusal(config);
  config.distributed.rank = 1;
  EXPECT_NE(refusal(config).find("needs the CUDA backend"), std::string::npos) << refusal(config);
  config.distributed.timeout_seconds = 0.0;
  EXPECT_NE(refusal(config).find("timeout_seconds"), std::string::npos) << refusal(config);
  config.distributed = {};
  config.distributed.master_port = 0;
  EXPECT_NE(refusal(config).find("master port"), std::string::npos) << refusal(config);
}

TEST(DistributedApi, ThePlaceInTheRunComesFromTorchrunsVariables) {
  EXPECT_EQ(distributed_from_environment().world_size, 1);
  ::setenv("RANK", "1", 1);
  ::setenv("WORLD_SIZE", "4", 1);
  ::setenv("LOCAL_RANK", "1", 1);
  ::setenv("MASTER_ADDR", "node7", 1);
  ::setenv("MASTER_PORT", "4321", 1);
  const DistributedConfig d = distributed_from_environment();
  ::setenv("WORLD_SIZE", "one", 1);
  EXPECT_THROW(distributed_from_environment(), InvalidArgument);
  for (const char* name : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"}) {
    ::unsetenv(name);
  }
  EXPECT_EQ(d.world_size, 4);
  EXPECT_EQ(d.rank, 1);
  EXPECT_EQ(d.local_rank, 1);
  EXPECT_EQ(d.master_addr, "node7");
  EXPECT_EQ(d.master_port, 4321);
}

}  // namespace
}  // namespace vdnn
