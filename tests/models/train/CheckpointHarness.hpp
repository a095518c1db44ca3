// Helpers of the checkpoint tests: small sessions trained on synthetic batches, snapshots of their
// parameters and optimizer state, and the error a load throws.
#pragma once

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "graph/Session.hpp"
#include "graph/TestNetworks.hpp"
#include "models/data/Dataset.hpp"
#include "models/train/Checkpoint.hpp"

namespace vdnn::testing {

inline std::unique_ptr<graph::Session> make_session(std::uint64_t seed,
                                                    graph::NetworkDef def = small_residual_net(),
                                                    const layers::OptimizerConfig& optimizer = {}) {
  graph::SessionOptions options;
  options.executor.seed = seed;
  options.executor.optimizer = optimizer;
  return std::make_unique<graph::Session>(graph::Graph::build(def, 2), options);
}

/// Trains `steps` steps on synthetic data drawn from `seed`, starting `skip` batches in.
inline void train(graph::Session& session, int steps, std::uint64_t seed = 7, int skip = 0,
                  std::vector<double>* losses = nullptr) {
  const runtime::Shape& in = session.graph().input_shape();
  auto data = models::make_dataset("synthetic",
                                   {in.c(), in.h(), in.w(), session.graph().num_classes()}, seed);
  graph::Executor& executor = session.executor();
  std::vector<std::int32_t> labels(static_cast<std::size_t>(in.n()));
  for (int i = 0; i < skip + steps; ++i) {
    data->next_batch(in.n(), executor.input_staging(), labels.data());
    if (i < skip) continue;
    const double loss = executor.train_step(executor.input_staging(), labels.data(), 0.05).loss;
    if (losses != nullptr) losses->push_back(loss);
  }
}

/// Every value and every optimizer state tensor, read back on the compute stream.
struct Snapshot {
  std::vector<std::vector<float>> values;
  std::vector<std::vector<float>> states;
};

inline Snapshot snapshot(graph::Session& session) {
  Snapshot s;
  const auto& params = session.executor().parameters().all();
  runtime::Stream& compute = session.context().compute();
  for (const graph::Parameter& p : params) {
    std::vector<float>& value = s.values.emplace_back(p.value.bytes() / sizeof(float));
    compute.copy_async(value.data(), p.value.data(), p.value.bytes());
    for (const runtime::Buffer& b : p.state) {
      if (b.empty()) continue;
      std::vector<float>& state = s.states.emplace_back(b.bytes() / sizeof(float));
      compute.copy_async(state.data(), b.data(), b.bytes());
    }
  }
  compute.synchronize();
  return s;
}

inline bool bitwise_equal(const std::vector<std::vector<float>>& a,
                          const std::vector<std::vector<float>>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size() ||
        std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0) {
      return false;
    }
  }
  return true;
}

inline std::string load_error(const std::filesystem::path& path, graph::Session& session,
                              const models::LoadOptions& options = {}) {
  try {
    models::load_checkpoint(path, session, options);
  } catch (const models::CheckpointError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace vdnn::testing
