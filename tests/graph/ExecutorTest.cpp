// Executor: training reduces the loss, runs are bitwise reproducible, and feature maps are freed
// by their reference counts (measured with the statistics adaptor).
#include "graph/Executor.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "graph/TestNetworks.hpp"
#include "models/ConfigLoader.hpp"
#include "models/data/Dataset.hpp"
#include "runtime/memory/HostMemoryResource.hpp"
#include "runtime/memory/StatisticsAdaptor.hpp"

namespace vdnn::graph {
namespace {

std::vector<double> train(const Graph& g, int steps, std::uint64_t seed, double lr,
                          runtime::MemoryResource& memory) {
  Executor exec(g, memory, {layers::Backend::Cpu, seed, 0.9, 5e-4});
  const runtime::Shape& in = g.input_shape();
  auto data = models::make_dataset("synthetic", {in.c(), in.h(), in.w(), g.num_classes()}, seed);
  std::vector<float> images(static_cast<std::size_t>(in.numel()));
  std::vector<std::int32_t> labels(static_cast<std::size_t>(g.batch()));
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) {
    data->next_batch(g.batch(), images.data(), labels.data());
    losses.push_back(exec.train_step(images.data(), labels.data(), lr).loss);
  }
  return losses;
}

double mean(const std::vector<double>& v, std::size_t from, std::size_t to) {
  double s = 0.0;
  for (std::size_t i = from; i < to; ++i) s += v[i];
  return s / static_cast<double>(to - from);
}

TEST(Executor, SmallResidualNetLearnsAndIsReproducible) {
  const Graph g = Graph::build(testing::small_residual_net(), 8);
  runtime::HostMemoryResource host;
  const auto a = train(g, 80, 7, 0.05, host);
  const auto b = train(g, 80, 7, 0.05, host);
  EXPECT_EQ(a, b);  // bitwise
  EXPECT_LT(mean(a, 70, 80), 0.5 * mean(a, 0, 5));
}

TEST(Executor, FreesFeatureMapsByReferenceCount) {
  const Graph g = Graph::build(testing::small_residual_net(), 4);
  runtime::HostMemoryResource host;
  runtime::StatisticsAdaptor stats(host);
  Executor exec(g, stats, {});
  const std::size_t resident = stats.stats().current_bytes;  // parameters, input, workspace
  std::size_t all_outputs = 0;
  for (const Node& n : g.nodes()) all_outputs += n.output_shape.bytes(runtime::DType::F32);

  std::vector<float> images(static_cast<std::size_t>(g.input_shape().numel()), 0.5f);
  std::vector<std::int32_t> labels = {0, 1, 2, 3};
  exec.train_step(images.data(), labels.data(), 0.01);
  const runtime::MemoryStats after = stats.stats();
  EXPECT_EQ(after.current_bytes, resident);  // every feature map and gradient was freed
  EXPECT_GT(after.peak_bytes, resident);
  // Tensors that backward never reads (b.conv2's output, the loss) were freed in forward, so the
  // peak stays below "everything resident" plus the gradients.
  EXPECT_LT(after.peak_bytes - resident, 2 * all_outputs);
  EXPECT_EQ(exec.steps(), 1);
}

TEST(Executor, ResNet20LossFallsOver50Steps) {
  const Graph g = Graph::build(
      models::load_network(std::string(VDNN_SOURCE_DIR) + "/configs/resnet20-cifar.json"), 16);
  runtime::HostMemoryResource host;
  const auto losses = train(g, 50, 1, 0.05, host);
  EXPECT_LT(mean(losses, 45, 50), 0.7 * mean(losses, 0, 5));
}

TEST(Executor, ResNet20RunsAreBitwiseIdentical) {
  const Graph g = Graph::build(
      models::load_network(std::string(VDNN_SOURCE_DIR) + "/configs/resnet20-cifar.json"), 4);
  runtime::HostMemoryResource host;
  EXPECT_EQ(train(g, 5, 3, 0.05, host), train(g, 5, 3, 0.05, host));
}

TEST(Executor, RejectsLabelsOutOfRange) {
  const Graph g = Graph::build(testing::small_residual_net(), 2);
  runtime::HostMemoryResource host;
  Executor exec(g, host, {});
  std::vector<float> images(static_cast<std::size_t>(g.input_shape().numel()), 0.0f);
  std::vector<std::int32_t> labels = {0, 9};
  EXPECT_THROW(exec.train_step(images.data(), labels.data(), 0.01), runtime::InvalidArgument);
  labels = {0, 1};  // the executor stays usable after the error
  EXPECT_NO_THROW(exec.train_step(images.data(), labels.data(), 0.01));
}

}  // namespace
}  // namespace vdnn::graph
