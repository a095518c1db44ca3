// Runs a few training steps of a Session on synthetic data and returns what tests compare.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "graph/Session.hpp"
#include "models/ConfigLoader.hpp"
#include "models/data/Dataset.hpp"
#include "runtime/Shape.hpp"

namespace vdnn::testing {

struct RunResult {
  std::vector<double> losses;
  std::vector<float> weights;  // every parameter and buffer, concatenated
  graph::MemoryReport memory;
  std::uint64_t predicted_peak = 0;
  std::uint64_t predicted_pool_peak = 0;
  runtime::BlockChoice device_blocks = runtime::BlockChoice::BestFit;  // the plan's
  std::vector<std::uint64_t> staged_input_bytes;  // per step: the next batch uploaded during it
};

inline graph::Graph load_config(const std::string& name, std::int64_t batch) {
  return graph::Graph::build(
      models::load_network(std::string(VDNN_SOURCE_DIR) + "/configs/" + name), batch);
}

/// `steps` steps on the synthetic stream. Each batch is drawn into one of two staging slots and,
/// with `stage`, named to the executor a step ahead, as the trainer does (Note [Input staging]).
/// CPU options of the fused-against-unfused runs (Note [Fusion], Note [Dense block storage]):
/// `fuse` and `policy`, seed 5, freed memory poisoned with NaN.
inline graph::SessionOptions poisoned_options(bool fuse, graph::Policy policy) {
  graph::SessionOptions o;
  o.fuse = fuse;
  o.policy = policy;
  o.executor.seed = 5;
  o.executor.poison_freed = true;
  return o;
}

inline RunResult run_steps(graph::Graph graph, graph::SessionOptions options, int steps,
                           double lr = 0.05, bool stage = true) {
  options.executor.input_slots = std::max<std::size_t>(options.executor.input_slots, 2);
  graph::Session session(std::move(graph), options);
  graph::Executor& executor = session.executor();
  const runtime::Shape& in = session.graph().input_shape();
  auto data = models::make_dataset(
      "synthetic", {in.c(), in.h(), in.w(), session.graph().num_classes()}, options.executor.seed);
  std::vector<std::int32_t> labels[2];
  for (auto& l : labels) l.resize(static_cast<std::size_t>(in.n()));
  RunResult result;
  data->next_batch(in.n(), executor.input_staging(0), labels[0].data());
  for (int i = 0; i < steps; ++i) {
    const auto slot = static_cast<std::size_t>(i % 2);
    const std::size_t next = 1 - slot;  // its batch went up in the previous step: free
    if (i + 1 < steps) {
      data->next_batch(in.n(), executor.input_staging(next), labels[next].data());
      if (stage) executor.stage_next(executor.input_staging(next));
    }
    result.losses.push_back(
        executor.train_step(executor.input_staging(slot), labels[slot].data(), lr).loss);
    result.staged_input_bytes.push_back(executor.transfers().staged_input_bytes);
  }
  // Sized first: the copies are asynchronous, so the vector must not move under them.
  const auto& params = session.executor().parameters().all();
  std::size_t total = 0;
  for (const graph::Parameter& p : params) total += static_cast<std::size_t>(p.spec.shape.numel());
  result.weights.resize(total);
  std::size_t at = 0;
  for (const graph::Parameter& p : params) {
    session.context().compute().copy_async(result.weights.data() + at, p.value.data(),
                                           p.value.bytes());
    at += static_cast<std::size_t>(p.spec.shape.numel());
  }
  session.context().compute().synchronize();
  // In PyTorch's order whatever the session stores (a KRSC convolution weight in NHWC).
  at = 0;
  for (const graph::Parameter& p : params) {
    const auto n = static_cast<std::size_t>(p.spec.shape.numel());
    const auto first = result.weights.begin() + static_cast<std::ptrdiff_t>(at);
    const std::vector<float> stored(first, first + static_cast<std::ptrdiff_t>(n));
    const std::vector<float> nchw =
        runtime::relayout(stored, p.spec.shape, p.spec.layout, runtime::Layout::Nchw);
    std::copy(nchw.begin(), nchw.end(), first);
    at += n;
  }
  result.memory = session.executor().memory();
  result.predicted_peak = session.plan().predicted_peak;
  result.predicted_pool_peak = session.plan().predicted_pool_peak;
  result.device_blocks = session.plan().device_blocks;
  return result;
}

}  // namespace vdnn::testing
