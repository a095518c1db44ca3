// What the NCCL tests share: ranks on threads of this process, each on its own GPU with its own
// NCCL communicator through the rendezvous, and what a trainer ends with (losses, tensors).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "models/train/Distributed.hpp"
#include "models/train/ParameterAccess.hpp"
#include "models/train/Trainer.hpp"
#include "runtime/Device.hpp"
#include "runtime/Rendezvous.hpp"

namespace vdnn::models::nccl_test {

/// One rank's (or one GPU's) run: its losses, every parameter and buffer by name, or its error.
struct RankRun {
  std::vector<double> losses;
  std::vector<std::string> names;
  std::vector<std::vector<float>> tensors;  // names' values, in order
  /// names' gradients after the first step (averaged over the ranks), in order; empty for buffers
  std::vector<std::vector<float>> first_gradients;
  std::string error;

  /// Every tensor's values, concatenated in order.
  std::vector<float> flat() const {
    std::vector<float> all;
    for (const std::vector<float>& t : tensors) all.insert(all.end(), t.begin(), t.end());
    return all;
  }
};

/// The two-GPU tests' runs: kRanks ranks at kRankBatch each against one GPU at their sum.
inline constexpr int kRanks = 2;
inline constexpr std::int64_t kRankBatch = 8;
inline constexpr int kSteps = 10;

/// A run on CUDA device `device` in FP32 (TF32 off, deterministic algorithms: the comparison with
/// one GPU is FP32's), `communicator`'s rank (null: alone), kSteps steps at rate `lr`.
inline TrainerOptions fp32_options(int device, runtime::Communicator* communicator,
                                   std::uint64_t seed, double lr) {
  TrainerOptions o;
  o.session.backend = layers::Backend::Cuda;
  o.session.device = device;
  o.session.deterministic = true;
  o.session.allow_tf32 = false;
  o.session.executor.seed = seed;
  o.session.executor.communicator = communicator;
  o.schedule.base_lr = lr;
  o.schedule.total_steps = kSteps;
  o.cache = false;
  return o;
}

/// Every parameter's and buffer's `part` (a buffer's gradient: empty), in named_tensors order.
inline std::vector<std::vector<float>> read_tensors(Trainer& trainer, ParameterPart part) {
  std::vector<std::vector<float>> all;
  for (const NamedTensor& t : named_tensors(trainer.session())) {
    std::size_t n = 1;
    for (const std::int64_t d : t.shape) n *= static_cast<std::size_t>(d);
    all.emplace_back(part == ParameterPart::Gradient && !t.trainable ? 0 : n);
    if (!all.back().empty()) read_parameter(trainer.session(), t.name, part, all.back().data(), n);
  }
  return all;
}

/// `steps` (>= 1) steps of `trainer` (`step` makes each one and returns its loss), the gradients
/// after the first, then every parameter's and buffer's value.
inline RankRun train_steps(Trainer& trainer, int steps, const std::function<double(int)>& step) {
  RankRun run;
  for (int i = 0; i < steps; ++i) {
    run.losses.push_back(step(i));
    if (i == 0) run.first_gradients = read_tensors(trainer, ParameterPart::Gradient);
  }
  for (const NamedTensor& t : named_tensors(trainer.session())) run.names.push_back(t.name);
  run.tensors = read_tensors(trainer, ParameterPart::Value);
  return run;
}

/// train_steps on the trainer's own data.
inline RankRun train_steps(Trainer& trainer, int steps) {
  return train_steps(trainer, steps, [&trainer](int) { return trainer.step().loss; });
}

/// `ranks` ranks, rank r on thread r and GPU r with its own NCCL communicator (--deterministic,
/// `timeout`); body(rank, communicator) gives its run, and an exception becomes its error.
inline std::vector<RankRun> on_gpus(
    int ranks, std::chrono::milliseconds timeout,
    const std::function<RankRun(int, runtime::Communicator&)>& body) {
  const int port = runtime::free_port();
  std::vector<RankRun> runs(static_cast<std::size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      try {
        DistributedOptions d;
        d.launch = {r, ranks, r, "127.0.0.1", port};
        d.timeout = timeout;
        d.deterministic = true;
        const auto communicator = make_communicator(d, layers::Backend::Cuda);
        runs[static_cast<std::size_t>(r)] = body(r, *communicator);
      } catch (const std::exception& e) {
        runs[static_cast<std::size_t>(r)].error = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return runs;
}

/// Tests of two ranks: they skip with fewer than two CUDA devices.
class TwoGpus : public ::testing::Test {
 protected:
  void SetUp() override {
    if (runtime::cuda_device_count() < 2) GTEST_SKIP() << "needs two CUDA devices";
  }
};

}  // namespace vdnn::models::nccl_test
