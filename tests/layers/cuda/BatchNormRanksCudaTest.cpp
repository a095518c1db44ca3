// The synchronized CUDA batch norm's math, layer by layer (BatchNormRanks): BatchNorm2dCuda and
// the fused BatchNormReluCuda (with and without the residual add), in both layouts, as two ranks
// on two threads of ONE GPU (the host-staged test communicator) on the halves of a batch against
// the same layer on the whole batch, one training forward and backward: the output, the running
// statistics and the input gradients (each rank's half) and the parameters' gradients (the sum of
// the ranks': the gradient exchange averages them over ranks whose losses are batch means).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "layers/cuda/BatchNorm2dCuda.hpp"
#include "layers/cuda/BatchNormReluCuda.hpp"
#include "layers/cuda/LayerRun.hpp"
#include "models/train/cuda/HostStagedCommunicator.hpp"

namespace vdnn::test {
namespace {

using layers::LayerOptions;
using runtime::Layout;
using Floats = std::vector<float>;

constexpr int kRanks = 2;
// Both sides sum in double in different orders and round the statistics to float once.
constexpr double kTolerance = 1e-5;
// Inputs take this many values, so that no bn(x) + r lies within rounding of 0 (a ReLU mask
// flipped by one ulp would move a whole element of the gradient).
constexpr int kInputLevels = 9;

enum class Kind { Plain, Relu, AddRelu };

struct Case {
  runtime::Shape shape;  // the whole batch, NCHW-logical
  Layout layout;
  Kind kind;
  bool input_grads;  // false: parameter gradients only (no cross-rank backward sums)
};

std::string describe(const Case& c) {
  static const char* const kKinds[] = {"batchnorm2d", "batchnorm2d_relu", "batchnorm2d_add_relu"};
  return c.shape.to_string() + " " + runtime::layout_name(c.layout) + " " +
         kKinds[static_cast<int>(c.kind)] + (c.input_grads ? "" : " (no input gradients)");
}

// The layer of `c` for inputs of `shape` on `options`' context, its batch norm synchronized over
// `group` (null: alone).
std::unique_ptr<layers::Layer> make_layer(const Case& c, const runtime::Shape& shape,
                                          LayerOptions options, runtime::Communicator* group) {
  options.deterministic = true;
  options.layout = c.layout;
  options.input_layout = c.layout;
  options.batch_norm_group = group;
  layers::BatchNormReluSpec spec;
  spec.bn.eps = 1e-5;
  spec.bn.momentum = 0.1;
  spec.residual = c.kind == Kind::AddRelu;
  if (c.kind == Kind::Plain) {
    return std::make_unique<layers::cuda::BatchNorm2dCuda>(spec.bn, std::vector{shape}, options);
  }
  std::vector<runtime::Shape> shapes(spec.residual ? 2 : 1, shape);
  return std::make_unique<layers::cuda::BatchNormReluCuda>(spec, shapes, options);
}

Floats levels(std::int64_t n, std::uint64_t seed) {
  Floats v = uniform(n, seed, 0.0f, static_cast<float>(kInputLevels));
  for (float& x : v) x = static_cast<float>(static_cast<int>(x)) / (kInputLevels - 1) * 2 - 1;
  return v;
}

// The whole batch's step: inputs (x, and r for the residual), parameters, output gradient.
LayerRun whole_run(const Case& c) {
  const std::int64_t n = c.shape.numel();
  const std::int64_t channels = c.shape.c();
  LayerRun run;
  run.inputs.push_back(levels(n, 1));
  if (c.kind == Kind::AddRelu) run.inputs.push_back(levels(n, 2));
  run.params = {uniform(channels, 3, 0.5f, 1.5f), uniform(channels, 4, -0.5f, 0.5f),
                uniform(channels, 5, -0.2f, 0.2f), uniform(channels, 6, 0.5f, 1.5f)};
  run.grad_output = uniform(n, 7);
  for (std::size_t k = 0; k < run.inputs.size(); ++k) {
    run.grad_inputs.push_back(c.input_grads ? std::optional<Floats>(Floats(n, 0.0f))
                                            : std::nullopt);
  }
  return run;
}

Floats half(const Floats& whole, int rank) {
  const std::size_t size = whole.size() / kRanks;
  return {whole.begin() + static_cast<std::ptrdiff_t>(rank * size),
          whole.begin() + static_cast<std::ptrdiff_t>((rank + 1) * size)};
}

// Rank `rank`'s step: its half of every per-sample tensor (N is outermost in both layouts).
LayerRun rank_run(const LayerRun& whole, int rank) {
  LayerRun run = whole;
  for (Floats& x : run.inputs) x = half(x, rank);
  run.grad_output = half(run.grad_output, rank);
  for (std::optional<Floats>& g : run.grad_inputs) {
    if (g) g = half(*g, rank);
  }
  return run;
}

Floats joined(const Floats& a, const Floats& b) {
  Floats all = a;
  all.insert(all.end(), b.begin(), b.end());
  return all;
}

Floats added(const Floats& a, const Floats& b) {
  Floats sum(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) sum[i] = a[i] + b[i];
  return sum;
}

// Each rank's step on its own context of device 0, on its own thread, the ranks' batch norms
// synchronized through one host-staged group. A rank's error fails the test (and the group), and
// then no runs come back.
std::vector<LayerRun> run_ranks(
    const Case& c, const LayerRun& whole,
    std::vector<std::unique_ptr<runtime::cuda::DeviceContext>>& contexts) {
  const runtime::Shape part =
      runtime::Shape::nchw(c.shape.n() / kRanks, c.shape.c(), c.shape.h(), c.shape.w());
  std::vector<LayerRun> ranks(kRanks);
  const std::vector<std::string> errors =
      on_staged_ranks(kRanks, [&](int r, HostStagedCommunicator& staged) {
        const auto at = static_cast<std::size_t>(r);
        LayerOptions options;
        options.cuda = contexts[at].get();
        const auto layer = make_layer(c, part, options, &staged);
        ranks[at] = run_on_cuda(*layer, contexts[at]->compute_stream(), rank_run(whole, r));
      });
  for (const std::string& error : errors) {
    if (error.empty()) continue;
    ADD_FAILURE() << error;
    return {};
  }
  return ranks;
}

// The ranks' halves joined (output, input gradients), their parameters' gradients added and
// their running statistics, against the whole batch's.
void expect_ranks_are_whole(const std::vector<LayerRun>& ranks, const LayerRun& whole) {
  EXPECT_TRUE(all_near(joined(ranks[0].output, ranks[1].output), whole.output, kTolerance))
      << "output";
  for (std::size_t j = 0; j < whole.params.size(); ++j) {
    EXPECT_TRUE(all_near(ranks[0].params[j], whole.params[j], kTolerance)) << "param " << j;
    EXPECT_EQ(ranks[1].params[j], ranks[0].params[j]) << "param " << j;
  }
  for (std::size_t k = 0; k < whole.grad_inputs.size(); ++k) {
    if (!whole.grad_inputs[k]) continue;
    EXPECT_TRUE(all_near(joined(*ranks[0].grad_inputs[k], *ranks[1].grad_inputs[k]),
                         *whole.grad_inputs[k], kTolerance))
        << "grad of input " << k;
  }
  for (std::size_t j = 0; j < whole.grad_params.size(); ++j) {
    EXPECT_TRUE(all_near(added(ranks[0].grad_params[j], ranks[1].grad_params[j]),
                         whole.grad_params[j], kTolerance))
        << "grad of param " << j;
  }
}

class BatchNormRanksCuda : public CudaTest {};

TEST_F(BatchNormRanksCuda, TwoRanksOnHalvesAreTheLayerOnTheWholeBatch) {
  std::vector<std::unique_ptr<runtime::cuda::DeviceContext>> contexts;
  for (int r = 0; r < kRanks; ++r)
    contexts.push_back(std::make_unique<runtime::cuda::DeviceContext>(0));
  const runtime::Shape shapes[] = {runtime::Shape::nchw(8, 16, 5, 5),
                                   runtime::Shape::nchw(8, 96, 2, 2),
                                   runtime::Shape::nchw(16, 32, 14, 14)};
  for (const runtime::Shape& shape : shapes) {
    for (const Layout layout : {Layout::Nchw, Layout::Nhwc}) {
      for (const Kind kind : {Kind::Plain, Kind::Relu, Kind::AddRelu}) {
        for (const bool input_grads : {true, false}) {
          const Case c{shape, layout, kind, input_grads};
          SCOPED_TRACE(describe(c));
          const LayerRun in = whole_run(c);
          const auto layer = make_layer(c, shape, cuda_options(), nullptr);
          const std::vector<LayerRun> ranks = run_ranks(c, in, contexts);
          if (ranks.empty()) return;
          expect_ranks_are_whole(ranks, run_on_cuda(*layer, stream(), in));
        }
      }
    }
  }
}

}  // namespace
}  // namespace vdnn::test
