// ConvSearch and CudnnGraph: heuristic rankings repeat, stored choices restore to the same plans
// and a choice cuDNN does not run is refused with a reason, the eligibility rules hold (FMA only
// without TF32), and a plan refuses pointers below the alignment its graph declared.
#include "layers/cuda/ConvSearch.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "layers/LayerTestSupport.hpp"
#include "layers/cuda/CudaLayerTest.hpp"
#include "layers/cuda/RawBuffer.hpp"
#include "runtime/Error.hpp"

namespace vdnn::test {
namespace {

using ConvSearch = CudaLayerTest;
using layers::cuda::ConvDirection;
using runtime::Shape;

const layers::Conv2dSpec kSpec = conv(32, {3, 3}, {1, 1}, {1, 1});
const Shape kX{8, 16, 12, 12};
const Shape kW{32, 16, 3, 3};
const Shape kY{8, 32, 12, 12};

std::vector<layers::cuda::ConvProblem> problems(runtime::cuda::DeviceContext& context,
                                                runtime::Layout layout, runtime::DType dtype) {
  return layers::cuda::conv_problems(context.cudnn(), kSpec, kX, kW, kY, layout, dtype);
}

TEST(ConvAlignment, IsTheLargestPowerOfTwoUpTo16ThatDividesTheBytes) {
  EXPECT_EQ(layers::cuda::alignment_of(0), 16);
  EXPECT_EQ(layers::cuda::alignment_of(4096), 16);
  EXPECT_EQ(layers::cuda::alignment_of(24), 8);
  EXPECT_EQ(layers::cuda::alignment_of(12), 4);
  EXPECT_EQ(layers::cuda::alignment_of(6), 2);
  EXPECT_EQ(layers::cuda::alignment_of(3), 1);
}

TEST_F(ConvSearch, ProblemsAreTheBatchThenEachChunkingThatDividesIt) {
  const auto p = problems(context(), runtime::Layout::Nhwc, runtime::DType::F32);
  ASSERT_EQ(p.size(), 4u);  // 1, 2, 4, 8 (16 does not divide 8)
  EXPECT_EQ(p[0].chunks, 1);
  EXPECT_EQ(p[3].chunks, 8);
  EXPECT_EQ(p[3].x_bytes * 8, static_cast<std::size_t>(kX.bytes(runtime::DType::F32)));
  // The data gradient may add into its output; the F32 weight gradient only over chunks.
  const auto data = static_cast<std::size_t>(ConvDirection::BackwardData);
  const auto filter = static_cast<std::size_t>(ConvDirection::BackwardFilter);
  EXPECT_NE(p[0].accumulate[data], nullptr);
  EXPECT_EQ(p[0].accumulate[filter], nullptr);
  EXPECT_NE(p[1].accumulate[filter], nullptr);
  EXPECT_EQ(p[0].accumulate[static_cast<std::size_t>(ConvDirection::Forward)], nullptr);
}

TEST_F(ConvSearch, HeuristicRankingRepeatsAndRestoresToTheSamePlans) {
  const layers::cuda::SearchPolicy policy{false, true, true, false};
  for (const ConvDirection d :
       {ConvDirection::Forward, ConvDirection::BackwardData, ConvDirection::BackwardFilter}) {
    const auto p = problems(context(), runtime::Layout::Nhwc, runtime::DType::F32);
    const layers::cuda::ConvCandidates first = layers::cuda::search_candidates(
        context().cudnn(), context().compute_stream(), d, p, policy);
    const layers::cuda::ConvCandidates again = layers::cuda::search_candidates(
        context().cudnn(), context().compute_stream(), d, p, policy);
    ASSERT_FALSE(first.ranked.empty());
    EXPECT_EQ(layers::cuda::stored(first), layers::cuda::stored(again));
    for (const layers::cuda::ConvCandidate& c : first.ranked) EXPECT_LT(c.seconds, 0.0);
    std::string why;
    const auto restored =
        layers::cuda::restore_candidates(context().cudnn(), d, p, layers::cuda::stored(first), why);
    ASSERT_TRUE(restored.has_value()) << why;
    EXPECT_EQ(layers::cuda::stored(*restored), layers::cuda::stored(first));
  }
}

TEST_F(ConvSearch, AStoredChoiceCudnnDoesNotRunIsRefusedWithAReason) {
  const auto p = problems(context(), runtime::Layout::Nhwc, runtime::DType::F32);
  layers::StoredAlgo bogus;
  bogus.engine = 1'000'000;  // no such engine
  std::string why;
  EXPECT_FALSE(
      layers::cuda::restore_candidates(context().cudnn(), ConvDirection::Forward, p, {bogus}, why)
          .has_value());
  EXPECT_NE(why.find("engine 1000000"), std::string::npos) << why;
  const layers::cuda::SearchPolicy policy{false, true, true, false};
  layers::StoredAlgo wrong = layers::cuda::stored(layers::cuda::search_candidates(
      context().cudnn(), context().compute_stream(), ConvDirection::Forward, p, policy))[0];
  wrong.workspace += 1;
  EXPECT_FALSE(
      layers::cuda::restore_candidates(context().cudnn(), ConvDirection::Forward, p, {wrong}, why)
          .has_value());
  EXPECT_NE(why.find("workspace"), std::string::npos) << why;
}

TEST_F(ConvSearch, MeasuredCandidatesAreTimedAndFastestFirst) {
  const layers::cuda::SearchPolicy policy{true, false, true, false};
  const auto p = problems(context(), runtime::Layout::Nhwc, runtime::DType::BF16);
  const layers::cuda::ConvCandidates c = layers::cuda::search_candidates(
      context().cudnn(), context().compute_stream(), ConvDirection::Forward, p, policy);
  ASSERT_FALSE(c.ranked.empty());
  for (std::size_t i = 0; i < c.ranked.size(); ++i) {
    EXPECT_GE(c.ranked[i].seconds, 0.0);
    if (i > 0) EXPECT_LE(c.ranked[i - 1].seconds, c.ranked[i].seconds);
  }
}

TEST_F(ConvSearch, WithoutTf32NoTensorCoreEngineIsEligible) {
  const auto p = problems(context(), runtime::Layout::Nchw, runtime::DType::F32);
  const auto& graph = p[0].overwrite[static_cast<std::size_t>(ConvDirection::Forward)];
  const layers::cuda::SearchPolicy fma{false, true, false, false};
  const layers::cuda::ConvCandidates c = layers::cuda::search_candidates(
      context().cudnn(), context().compute_stream(), ConvDirection::Forward, p, fma);
  for (const layers::cuda::EngineOffer& offer : graph->offers()) {
    for (const layers::cuda::ConvCandidate& candidate : c.ranked) {
      if (candidate.choice == offer.choice) EXPECT_FALSE(offer.tensor_core);
    }
  }
}

TEST_F(ConvSearch, APlanRefusesPointersBelowItsAlignment) {
  const auto p = problems(context(), runtime::Layout::Nhwc, runtime::DType::F32);
  const layers::cuda::SearchPolicy policy{false, true, true, false};
  const layers::cuda::ConvCandidates c = layers::cuda::search_candidates(
      context().cudnn(), context().compute_stream(), ConvDirection::Forward, p, policy);
  const layers::cuda::ConvCandidate& whole = c.ranked.front();
  ASSERT_EQ(whole.chunks, 1);
  const layers::cuda::DeviceBuffer x(kX.bytes(runtime::DType::F32) + 16);
  const layers::cuda::DeviceBuffer w(kW.bytes(runtime::DType::F32));
  const layers::cuda::DeviceBuffer y(kY.bytes(runtime::DType::F32));
  const layers::cuda::DeviceBuffer ws(whole.workspace + 1);
  const layers::cuda::ConvPlan& plan = whole.plan(false);
  EXPECT_NO_THROW(
      plan.run(context().cudnn(), x.as<char>(), w.as<void>(), y.as<void>(), ws.as<void>()));
  EXPECT_THROW(
      plan.run(context().cudnn(), x.as<char>() + 4, w.as<void>(), y.as<void>(), ws.as<void>()),
      runtime::InvalidArgument);
  EXPECT_THROW(whole.plan(true), runtime::Error);  // the forward pass never adds
  ASSERT_EQ(cudaStreamSynchronize(context().compute_stream()), cudaSuccess);
}

}  // namespace
}  // namespace vdnn::test
