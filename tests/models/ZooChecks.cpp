// The zoo config tests' shared checks: state_dict keys and a short CPU training run.
#include "tests/models/ZooChecks.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <variant>

#include "models/ConfigLoader.hpp"
#include "models/train/Trainer.hpp"

namespace vdnn::test {

std::set<std::string> state_dict_keys(const graph::Graph& g) {
  std::set<std::string> keys;
  for (graph::NodeId id = 0; id < static_cast<graph::NodeId>(g.nodes().size()); ++id) {
    const graph::Node& n = g.node(id);
    for (const layers::ParamSpec& p : layers::param_specs(n.spec, g.input_shapes(id))) {
      keys.insert(n.name + "." + p.name);
    }
    if (std::holds_alternative<layers::BatchNorm2dSpec>(n.spec)) {
      keys.insert(n.name + ".num_batches_tracked");
    }
  }
  return keys;
}

void add_conv(std::set<std::string>& keys, const std::string& name) {
  keys.insert(name + ".weight");
}

void add_weight_and_bias(std::set<std::string>& keys, const std::string& name) {
  keys.insert(name + ".weight");
  keys.insert(name + ".bias");
}

void add_bn(std::set<std::string>& keys, const std::string& name) {
  for (const char* p : {"weight", "bias", "running_mean", "running_var", "num_batches_tracked"}) {
    keys.insert(name + "." + p);
  }
}

void expect_trains_on_the_cpu(const std::string& config, std::int64_t resolution,
                              std::int64_t batch, int steps) {
  graph::NetworkDef def =
      models::load_network((std::filesystem::path(VDNN_SOURCE_DIR) / "configs" / config).string());
  def.height = def.width = resolution;
  models::TrainerOptions options;
  options.data = "synthetic";
  options.session.executor.seed = 5;
  options.schedule.base_lr = 0.01;
  options.schedule.total_steps = steps;
  models::Trainer trainer(def, batch, options);
  for (int step = 0; step < steps; ++step) {
    const double loss = trainer.step().loss;
    EXPECT_TRUE(std::isfinite(loss)) << config << " step " << step;
  }
}

}  // namespace vdnn::test
