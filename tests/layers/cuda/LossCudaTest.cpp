// CUDA softmax cross-entropy against the CPU layer over a table of shapes: loss, input gradient
// with and without accumulation, all within 1e-5 relative to 1 + |value|, and top-1 and top-5
// accuracy exactly (with tied and NaN logits); label checks; statistics delivered per forward;
// bitwise reproducibility.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "layers/cuda/SoftmaxCrossEntropyCuda.hpp"
#include "runtime/Error.hpp"
#include "tests/layers/cuda/LayerRun.hpp"

namespace vdnn::test {
namespace {

class LossCuda : public CudaTest {};

constexpr double kLossTolerance = 1e-5;

std::vector<std::int32_t> labels_for(std::int64_t samples, std::int64_t classes,
                                     std::uint64_t seed) {
  std::vector<std::int32_t> labels;
  for (const float u : uniform(samples, seed, 0.0f, static_cast<float>(classes))) {
    labels.push_back(static_cast<std::int32_t>(u));
  }
  return labels;
}

// Logits scaled by `spread`; with `ties` they are rounded to integers, so rows often have several
// maximal logits and logits equal to the label's, and the accuracies exercise the tie rule.
LayerRun loss_run(const Shape& logits, float spread, bool ties, bool accumulate) {
  LayerRun run{{uniform(logits.numel(), 200, -spread, spread)}};
  if (ties) {
    for (float& v : run.inputs[0]) v = std::round(v);
  }
  run.labels = labels_for(logits.n(), logits.sample_numel(), 201);
  run.grad_output = {0.7f};
  run.grad_inputs = {uniform(logits.numel(), 202)};
  run.accumulate = accumulate;
  return run;
}

TEST_F(LossCuda, SoftmaxCrossEntropyMatchesCpu) {
  const std::vector<Shape> shapes = {
      Shape{1, 10},    Shape{7, 3},     Shape{4, 10},      Shape{128, 10},
      Shape{32, 1000}, Shape{256, 100}, Shape{1, 2, 1, 1}, Shape::nchw(4, 5, 2, 3)};
  for (const Shape& shape : shapes) {
    for (const bool ties : {false, true}) {
      for (const bool accumulate : {false, true}) {
        SCOPED_TRACE(shape.to_string() + (ties ? " ties" : "") + (accumulate ? " accumulate" : ""));
        expect_cuda_matches_cpu<layers::cuda::SoftmaxCrossEntropyCuda>(
            layers::SoftmaxCrossEntropySpec{}, {shape}, loss_run(shape, 4.0f, ties, accumulate),
            cuda_options(), kLossTolerance);
      }
    }
  }
}

TEST_F(LossCuda, LabelSmoothingMatchesCpu) {
  for (const double eps : {0.1, 1.0}) {
    for (const Shape& shape : {Shape{7, 3}, Shape{32, 1000}}) {
      SCOPED_TRACE(shape.to_string() + " label_smoothing=" + std::to_string(eps));
      layers::LayerOptions options = cuda_options();
      options.label_smoothing = eps;
      expect_cuda_matches_cpu<layers::cuda::SoftmaxCrossEntropyCuda>(
          layers::SoftmaxCrossEntropySpec{}, {shape}, loss_run(shape, 4.0f, false, true), options,
          kLossTolerance);
    }
  }
}

// Three logit levels over 12 classes: a label's rank around 5 is mostly decided by the ties.
TEST_F(LossCuda, Top5RanksTiesAsTheCpuDoes) {
  const Shape shape{256, 12};
  const LayerRun cuda = expect_cuda_matches_cpu<layers::cuda::SoftmaxCrossEntropyCuda>(
      layers::SoftmaxCrossEntropySpec{}, {shape}, loss_run(shape, 1.0f, true, false),
      cuda_options(), kLossTolerance);
  EXPECT_GT(cuda.stats.top5, cuda.stats.accuracy);
  EXPECT_LT(cuda.stats.top5, 1.0);
}

// NaN logits make the loss NaN, so only the accuracies are compared: on both backends a NaN ranks
// above every number, and every other logit ranks above a label's NaN.
TEST_F(LossCuda, NanLogitsRankAsOnTheCpu) {
  const Shape shape{64, 10};
  LayerRun run = loss_run(shape, 4.0f, true, false);
  run.grad_output.clear();
  for (std::size_t i = 0; i < run.inputs[0].size(); i += 7) {
    run.inputs[0][i] = std::numeric_limits<float>::quiet_NaN();
  }
  const auto cpu = layers::make_layer(layers::Backend::Cpu, layers::SoftmaxCrossEntropySpec{},
                                      {shape}, layers::LayerOptions{});
  layers::cuda::SoftmaxCrossEntropyCuda layer(layers::SoftmaxCrossEntropySpec{}, {shape},
                                              cuda_options());
  const LayerRun want = run_on_cpu(*cpu, run);
  const LayerRun got = run_on_cuda(layer, stream(), run);
  EXPECT_EQ(got.stats.accuracy, want.stats.accuracy);
  EXPECT_EQ(got.stats.top5, want.stats.top5);
  EXPECT_LT(want.stats.top5, 1.0);
}

TEST_F(LossCuda, LargeLogitsStayFinite) {
  const Shape shape{16, 10};
  const LayerRun cuda = expect_cuda_matches_cpu<layers::cuda::SoftmaxCrossEntropyCuda>(
      layers::SoftmaxCrossEntropySpec{}, {shape}, loss_run(shape, 1000.0f, false, false),
      cuda_options(), kLossTolerance);
  EXPECT_TRUE(std::isfinite(cuda.output[0]));
}

TEST_F(LossCuda, EmptyTargetIsSkipped) {
  const Shape shape{8, 10};
  LayerRun run = loss_run(shape, 4.0f, false, false);
  run.grad_inputs = {std::nullopt};
  expect_cuda_matches_cpu<layers::cuda::SoftmaxCrossEntropyCuda>(
      layers::SoftmaxCrossEntropySpec{}, {shape}, run, cuda_options(), kLossTolerance);
}

TEST_F(LossCuda, BadLabelsThrowBeforeAnythingIsEnqueued) {
  const Shape logits{2, 3};
  layers::cuda::SoftmaxCrossEntropyCuda layer(layers::SoftmaxCrossEntropySpec{}, {logits},
                                              cuda_options());
  DeviceTensor x(stream(), uniform(6, 210), logits);
  DeviceTensor y(stream(), {42.0f}, Shape{1});
  DeviceTensor dy(stream(), {1.0f}, Shape{1});
  DeviceTensor dx(stream(), std::vector<float>(6, 42.0f), logits);
  layers::LossStats stats{-1.0, -1.0, -1.0};
  layers::ForwardArgs forward;
  forward.inputs = {x.view()};
  forward.output = y.view();
  forward.loss_stats = &stats;
  layers::BackwardArgs backward;
  backward.inputs = {x.view()};
  backward.grad_output = dy.view();
  backward.grad_inputs = {{dx.view(), false}};

  EXPECT_THROW(layer.forward(forward), runtime::InvalidArgument) << "missing labels";
  EXPECT_THROW(layer.backward(backward), runtime::InvalidArgument) << "missing labels";
  for (const std::vector<std::int32_t>& labels :
       std::vector<std::vector<std::int32_t>>{{0, 3}, {-1, 0}}) {
    forward.labels = labels.data();
    backward.labels = labels.data();
    EXPECT_THROW(layer.forward(forward), runtime::InvalidArgument);
    EXPECT_THROW(layer.backward(backward), runtime::InvalidArgument);
  }
  EXPECT_EQ(y.download_now(stream()), std::vector<float>{42.0f});
  EXPECT_EQ(dx.download_now(stream()), std::vector<float>(6, 42.0f));
  EXPECT_EQ(stats.loss, -1.0);
}

// Two forwards enqueued back to back, each with its own destination, before the host waits: each
// destination gets its own forward's statistics, by a host callback in pageable memory and by a
// copy in pinned memory.
TEST_F(LossCuda, StatisticsReachEachForwardsOwnDestination) {
  const Shape logits{64, 10};
  const layers::LayerOptions cpu_options;
  const auto cpu = layers::make_layer(layers::Backend::Cpu, layers::SoftmaxCrossEntropySpec{},
                                      {logits}, cpu_options);
  layers::cuda::SoftmaxCrossEntropyCuda layer(layers::SoftmaxCrossEntropySpec{}, {logits},
                                              cuda_options());
  std::vector<LayerRun> runs = {loss_run(logits, 1.0f, false, false),
                                loss_run(logits, 8.0f, true, false)};
  runs[1].labels = labels_for(logits.n(), logits.sample_numel(), 220);
  std::vector<layers::LossStats> pageable(runs.size());
  void* pinned_memory = nullptr;
  VDNN_CHECK_CUDA(cudaMallocHost(&pinned_memory, runs.size() * sizeof(layers::LossStats)));
  auto* pinned = static_cast<layers::LossStats*>(pinned_memory);
  for (layers::LossStats* stats : {pageable.data(), pinned}) {
    std::vector<std::unique_ptr<DeviceTensor>> keep;
    for (std::size_t r = 0; r < runs.size(); ++r) {
      stats[r] = {-1.0, -1.0, -1.0};
      keep.push_back(std::make_unique<DeviceTensor>(stream(), runs[r].inputs[0], logits));
      keep.push_back(std::make_unique<DeviceTensor>(stream(), std::vector<float>{0.0f}, Shape{1}));
      layers::ForwardArgs args;
      args.inputs = {keep[keep.size() - 2]->view()};
      args.output = keep.back()->view();
      args.labels = runs[r].labels.data();
      args.loss_stats = &stats[r];
      layer.forward(args);
    }
    VDNN_CHECK_CUDA(cudaStreamSynchronize(stream()));
    const std::string where = stats == pinned ? "pinned " : "pageable ";
    for (std::size_t r = 0; r < runs.size(); ++r) {
      LayerRun run = runs[r];
      run.grad_output.clear();
      const LayerRun want = run_on_cpu(*cpu, run);
      EXPECT_NEAR(stats[r].loss, want.stats.loss, kLossTolerance * (1.0 + want.stats.loss))
          << where << r;
      EXPECT_EQ(stats[r].accuracy, want.stats.accuracy) << where << r;
      EXPECT_EQ(stats[r].top5, want.stats.top5) << where << r;
      EXPECT_NEAR(keep[2 * r + 1]->download_now(stream())[0], want.output[0],
                  kLossTolerance * (1.0 + want.output[0]))
          << where << r;
    }
  }
  VDNN_CHECK_CUDA(cudaFreeHost(pinned_memory));
}

TEST_F(LossCuda, ForwardAndBackwardAreBitwiseReproducible) {
  const Shape logits{256, 1000};
  layers::cuda::SoftmaxCrossEntropyCuda layer(layers::SoftmaxCrossEntropySpec{}, {logits},
                                              cuda_options());
  const LayerRun run = loss_run(logits, 4.0f, false, false);
  const LayerRun first = run_on_cuda(layer, stream(), run);
  const LayerRun second = run_on_cuda(layer, stream(), run);
  EXPECT_EQ(first.output, second.output);
  EXPECT_EQ(first.stats.loss, second.stats.loss);
  EXPECT_EQ(first.stats.accuracy, second.stats.accuracy);
  EXPECT_EQ(first.stats.top5, second.stats.top5);
  EXPECT_EQ(first.grad_inputs, second.grad_inputs);
}

TEST_F(LossCuda, ConstructorRejectsF64) {
  layers::LayerOptions options = cuda_options();
  options.dtype = runtime::DType::F64;
  EXPECT_THROW(layers::cuda::SoftmaxCrossEntropyCuda(layers::SoftmaxCrossEntropySpec{},
                                                     {Shape{2, 3}}, options),
               runtime::InvalidArgument);
}

}  // namespace
}  // namespace vdnn::test
