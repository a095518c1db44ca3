// The image-input rewrite (Note [Image input]): where the normalize goes, the types and bytes of
// the input, its meeting with the bf16 rewrite, and that training on image bytes is bitwise
// training on the same images normalized on the host.
#include "graph/ImageInput.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <variant>
#include <vector>

#include "graph/Precision.hpp"
#include "graph/SessionHarness.hpp"
#include "runtime/Random.hpp"

namespace vdnn::graph {
namespace {

using runtime::DType;
using testing::load_config;

TEST(ImageInput, PutsOneNormalizeAfterTheInputWhichBecomesBytes) {
  const Graph plain = load_config("resnet20-cifar.json", 4);
  const Graph images = with_image_input(plain, kImageNetStatistics);
  ASSERT_EQ(images.nodes().size(), plain.nodes().size() + 1);
  const Node& normalize = images.node(0);
  EXPECT_EQ(normalize.name, kInputNormalizeName);
  ASSERT_TRUE(std::holds_alternative<layers::NormalizeSpec>(normalize.spec));
  EXPECT_EQ(images.input_consumers(), std::vector<NodeId>{0});
  EXPECT_TRUE(images.image_input());
  EXPECT_EQ(images.dtype(kNetworkInput), DType::U8);
  EXPECT_EQ(images.network_input_layout(), runtime::Layout::Nhwc);
  EXPECT_EQ(images.tensor_bytes(kNetworkInput), 4u * 3 * 32 * 32);
  EXPECT_EQ(images.dtype(0), DType::F32);
  EXPECT_EQ(images.input_layout(0), runtime::Layout::Nhwc);
  EXPECT_EQ(images.trainable_parameters(), plain.trainable_parameters());
  EXPECT_THROW(with_image_input(images, kImageNetStatistics), runtime::InvalidArgument);
  ImageStatistics zero_std = kImageNetStatistics;
  zero_std.std[1] = 0.0f;
  EXPECT_THROW(with_image_input(plain, zero_std), runtime::InvalidArgument);
}

TEST(ImageInput, Bf16IsWrittenByTheNormalizeInEitherOrderWithoutACast) {
  const Graph plain = load_config("resnet20-cifar.json", 2);
  for (const Graph& g :
       {with_precision(with_image_input(plain, kImageNetStatistics), DType::BF16),
        with_image_input(with_precision(plain, DType::BF16), kImageNetStatistics)}) {
    ASSERT_EQ(g.nodes().size(), plain.nodes().size() + 1);
    EXPECT_EQ(g.node(0).name, kInputNormalizeName);
    EXPECT_EQ(std::get<layers::NormalizeSpec>(g.node(0).spec).to, DType::BF16);
    EXPECT_EQ(precision_of(g), DType::BF16);
    for (const Node& n : g.nodes()) EXPECT_NE(n.name, kInputCastName);
  }
}

TEST(ImageInput, OnlyANormalizeMayReadImageBytes) {
  NetworkDef def = load_config("resnet20-cifar.json", 2).definition();
  def.image_input = true;  // no normalize: the first convolution would read bytes
  EXPECT_THROW(Graph::build(def, 2), GraphError);
}

// Training steps of `graph` on the same `steps` batches of image bytes: given as bytes when the
// graph takes them, else normalized on the host as NormalizeCpu does.
std::vector<double> losses(Graph graph, Policy policy, int steps) {
  SessionOptions options;
  options.policy = policy;
  options.executor.input_slots = 1;
  Session session(std::move(graph), options);
  Executor& executor = session.executor();
  const runtime::Shape in = session.graph().input_shape();
  const std::int64_t plane = in.h() * in.w();
  std::vector<std::int32_t> labels(static_cast<std::size_t>(in.n()));
  std::vector<double> result;
  for (int s = 0; s < steps; ++s) {
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(in.numel()));
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      bytes[i] = static_cast<std::uint8_t>(runtime::uniform01(7, s, i) * 256.0);
    }
    for (std::size_t i = 0; i < labels.size(); ++i) {
      labels[i] =
          static_cast<std::int32_t>(i) % static_cast<std::int32_t>(session.graph().num_classes());
    }
    if (session.graph().image_input()) {
      std::memcpy(executor.input_staging(), bytes.data(), bytes.size());
    } else {
      auto* x = static_cast<float*>(executor.input_staging());
      for (std::int64_t n = 0; n < in.n(); ++n) {
        for (std::int64_t c = 0; c < 3; ++c) {
          const float scale = 1.0f / (255.0f * kImageNetStatistics.std[c]);
          const float shift = kImageNetStatistics.mean[c] / kImageNetStatistics.std[c];
          for (std::int64_t i = 0; i < plane; ++i) {
            x[(n * 3 + c) * plane + i] =
                std::fma(static_cast<float>(bytes[(n * plane + i) * 3 + c]), scale, -shift);
          }
        }
      }
    }
    result.push_back(executor.train_step(executor.input_staging(), labels.data(), 0.05).loss);
  }
  return result;
}

TEST(ImageInput, TrainingOnBytesIsTrainingOnHostNormalizedImagesBitwise) {
  const Graph plain = load_config("resnet20-cifar.json", 4);
  const Graph images = with_image_input(plain, kImageNetStatistics);
  for (const Policy policy : {Policy::Baseline, Policy::VdnnAll}) {
    const std::vector<double> expected = losses(plain, policy, 3);
    EXPECT_EQ(losses(images, policy, 3), expected) << policy_name(policy);
  }
}

}  // namespace
}  // namespace vdnn::graph
