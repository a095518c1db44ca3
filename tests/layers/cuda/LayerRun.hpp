// LayerRun: one forward (and optionally one backward) of a layer on host data, run on the CPU
// backend in place and on the CUDA backend through device copies, so that tests can compare the
// two backends field by field. Test-only; every test using it skips without a CUDA device.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "layers/Layer.hpp"
#include "layers/LayerSpec.hpp"
#include "layers/Registry.hpp"
#include "layers/cuda/RawBuffer.hpp"
#include "runtime/Device.hpp"
#include "runtime/Random.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::test {

using layers::Layer;
using runtime::Shape;
using runtime::TensorView;

inline constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

/// Fixture of the CUDA layer tests: skips without a device, otherwise owns a context on device 0.
class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (runtime::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    context_ = std::make_unique<runtime::cuda::DeviceContext>(0);
  }

  cudaStream_t stream() { return context_->compute_stream(); }
  /// Options of the CUDA layers under test: F32 on this context.
  layers::LayerOptions cuda_options(std::uint64_t seed = 0) {
    layers::LayerOptions options;
    options.seed = seed;
    options.cuda = context_.get();
    return options;
  }

 private:
  std::unique_ptr<runtime::cuda::DeviceContext> context_;
};

/// n values uniform in [lo, hi), a pure function of (seed, index).
inline std::vector<float> uniform(std::int64_t n, std::uint64_t seed, float lo = -1.0f,
                                  float hi = 1.0f) {
  std::vector<float> values(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = lo + (hi - lo) * static_cast<float>(runtime::uniform01(seed, 0, i));
  }
  return values;
}

/// A device copy of host floats, owned.
class DeviceTensor {
 public:
  /// Uploads `host` on `stream` and waits, so the caller may change `host` right away.
  DeviceTensor(cudaStream_t stream, const std::vector<float>& host, const Shape& shape)
      : buffer_(host.size() * sizeof(float)), shape_(shape) {
    VDNN_CHECK_CUDA(cudaMemcpyAsync(buffer_.as<float>(), host.data(), host.size() * sizeof(float),
                                    cudaMemcpyHostToDevice, stream));
    VDNN_CHECK_CUDA(cudaStreamSynchronize(stream));
  }
  TensorView view() const { return {buffer_.as<float>(), shape_, runtime::DType::F32}; }
  /// Enqueues the download into `host` (resized to fit) on `stream`; does not wait.
  void download(cudaStream_t stream, std::vector<float>& host) const {
    host.resize(static_cast<std::size_t>(shape_.numel()));
    VDNN_CHECK_CUDA(cudaMemcpyAsync(host.data(), buffer_.as<float>(), host.size() * sizeof(float),
                                    cudaMemcpyDeviceToHost, stream));
  }
  std::vector<float> download_now(cudaStream_t stream) const {
    std::vector<float> host;
    download(stream, host);
    VDNN_CHECK_CUDA(cudaStreamSynchronize(stream));
    return host;
  }

 private:
  layers::cuda::DeviceBuffer buffer_;
  Shape shape_;
};

/// What one forward/backward reads and what it produced. Backward runs when grad_output is set; it
/// gets only the views backward_needs() declares. Output and parameter gradients start as NaN, so
/// an element a layer leaves unwritten shows.
struct LayerRun {
  std::vector<std::vector<float>> inputs;
  std::vector<std::vector<float>> params{};  // param_specs() order; forward may update buffers
  bool training = true;
  bool recompute = false;  // ForwardArgs::recompute
  std::uint64_t step = 0;
  std::vector<std::int32_t> labels{};
  std::vector<float> grad_output{};
  /// One per input: nullopt for an empty GradTarget, else the target's starting contents.
  std::vector<std::optional<std::vector<float>>> grad_inputs{};
  bool accumulate = false;
  bool param_grads = true;  // false: empty grad_params views

  std::vector<float> output{};
  std::vector<std::vector<float>> grad_params{};  // one per trainable parameter
  layers::LossStats stats{};
};

namespace detail {

// Views of host vectors as they are: the CPU backend.
struct HostMemory {
  TensorView place(std::vector<float>& host, const Shape& shape) {
    return {host.data(), shape, runtime::DType::F32};
  }
  void fetch() {}
};

// Device copies of host vectors, copied back by fetch() once the stream is done.
struct DeviceMemory {
  cudaStream_t stream;
  std::vector<std::pair<std::vector<float>*, std::unique_ptr<DeviceTensor>>> copies{};

  TensorView place(std::vector<float>& host, const Shape& shape) {
    copies.emplace_back(&host, std::make_unique<DeviceTensor>(stream, host, shape));
    return copies.back().second->view();
  }
  void fetch() {
    for (auto& [host, device] : copies) device->download(stream, *host);
    VDNN_CHECK_CUDA(cudaStreamSynchronize(stream));
  }
};

template <typename Memory>
void execute(Layer& layer, LayerRun& run, Memory& memory) {
  const auto specs = layers::param_specs(layer.spec(), layer.input_shapes());
  layers::ForwardArgs forward;
  for (std::size_t k = 0; k < run.inputs.size(); ++k) {
    forward.inputs.push_back(memory.place(run.inputs[k], layer.input_shapes()[k]));
  }
  for (std::size_t j = 0; j < run.params.size(); ++j) {
    forward.params.push_back(memory.place(run.params[j], specs[j].shape));
  }
  run.output.assign(static_cast<std::size_t>(layer.output_shape().numel()), kNan);
  forward.output = memory.place(run.output, layer.output_shape());
  forward.training = run.training;
  forward.recompute = run.recompute;
  forward.step = run.step;
  forward.labels = run.labels.empty() ? nullptr : run.labels.data();
  forward.loss_stats = &run.stats;
  layer.forward(forward);

  if (!run.grad_output.empty()) {
    const layers::BackwardNeeds needs = layers::backward_needs(layer.spec());
    layers::BackwardArgs backward;
    backward.inputs.resize(run.inputs.size());
    for (std::size_t k = 0; k < run.inputs.size(); ++k) {
      if (needs.input(k)) backward.inputs[k] = forward.inputs[k];
    }
    if (needs.output) backward.output = forward.output;
    backward.grad_output = memory.place(run.grad_output, layer.output_shape());
    for (std::size_t k = 0; k < run.grad_inputs.size(); ++k) {
      auto& target = run.grad_inputs[k];
      backward.grad_inputs.push_back(
          {target ? memory.place(*target, layer.input_shapes()[k]) : TensorView{}, run.accumulate});
    }
    backward.params = forward.params;
    run.grad_params.clear();
    for (const layers::ParamSpec& spec : specs) {
      if (spec.kind != layers::ParamKind::Trainable) continue;
      run.grad_params.emplace_back(run.param_grads ? spec.shape.numel() : 0, kNan);
    }
    for (std::size_t j = 0; j < run.grad_params.size(); ++j) {
      backward.grad_params.push_back(
          run.param_grads ? memory.place(run.grad_params[j], specs[j].shape) : TensorView{});
    }
    backward.step = run.step;
    backward.labels = forward.labels;
    layer.backward(backward);
  }
  memory.fetch();
}

}  // namespace detail

/// Runs `run` on a CPU layer (host memory as it is) and returns the results.
inline LayerRun run_on_cpu(Layer& layer, LayerRun run) {
  detail::HostMemory memory;
  detail::execute(layer, run, memory);
  return run;
}

/// Runs `run` on a CUDA layer through device copies on `stream`, waits, and returns the results.
inline LayerRun run_on_cuda(Layer& layer, cudaStream_t stream, LayerRun run) {
  detail::DeviceMemory memory{stream};
  detail::execute(layer, run, memory);
  return run;
}

/// Success when every got[i] is within tolerance * (1 + |want[i]|) of want[i] (tolerance 0: equal;
/// NaN matches only NaN). The failure counts the mismatches and names the worst.
inline ::testing::AssertionResult all_near(const std::vector<float>& got,
                                           const std::vector<float>& want, double tolerance) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "sizes differ: " << got.size() << " vs " << want.size();
  }
  std::size_t mismatches = 0;
  std::size_t worst = 0;
  double worst_excess = -1.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got[i];
    const double w = want[i];
    const bool both_nan = std::isnan(g) && std::isnan(w);
    const double excess = both_nan ? 0.0 : std::abs(g - w) / (1.0 + std::abs(w));
    if (both_nan || excess <= tolerance) continue;
    ++mismatches;
    if (std::isnan(excess) || excess > worst_excess) {
      worst = i;
      worst_excess = std::isnan(excess) ? std::numeric_limits<double>::infinity() : excess;
    }
  }
  if (mismatches == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << mismatches << " of " << got.size() << " elements off by more than " << tolerance
         << " (relative to 1 + |want|); worst: element " << worst << ": got " << got[worst]
         << ", want " << want[worst];
}

/// Expects the CUDA run to reproduce the CPU run: output, parameters after forward, input and
/// parameter gradients, loss statistics; all within `tolerance` (see all_near).
inline void expect_same_results(const LayerRun& cuda, const LayerRun& cpu, double tolerance) {
  EXPECT_TRUE(all_near(cuda.output, cpu.output, tolerance)) << "output";
  for (std::size_t j = 0; j < cpu.params.size(); ++j) {
    EXPECT_TRUE(all_near(cuda.params[j], cpu.params[j], tolerance)) << "param " << j;
  }
  for (std::size_t k = 0; k < cpu.grad_inputs.size(); ++k) {
    ASSERT_EQ(cuda.grad_inputs[k].has_value(), cpu.grad_inputs[k].has_value());
    if (!cpu.grad_inputs[k]) continue;
    EXPECT_TRUE(all_near(*cuda.grad_inputs[k], *cpu.grad_inputs[k], tolerance))
        << "grad of input " << k;
  }
  for (std::size_t j = 0; j < cpu.grad_params.size(); ++j) {
    EXPECT_TRUE(all_near(cuda.grad_params[j], cpu.grad_params[j], tolerance))
        << "grad of param " << j;
  }
  EXPECT_NEAR(cuda.stats.loss, cpu.stats.loss, tolerance * (1.0 + std::abs(cpu.stats.loss)));
  EXPECT_EQ(cuda.stats.accuracy, cpu.stats.accuracy);
  EXPECT_EQ(cuda.stats.top5, cpu.stats.top5);
}

/// Builds `spec` on both backends (CUDA: CudaLayer on `options`), runs `run` on each and expects
/// the same results within `tolerance`. Returns the CUDA run for further checks.
template <typename CudaLayer, typename Spec>
LayerRun expect_cuda_matches_cpu(const Spec& spec, const std::vector<Shape>& shapes,
                                 const LayerRun& run, const layers::LayerOptions& options,
                                 double tolerance) {
  layers::LayerOptions cpu_options;
  cpu_options.seed = options.seed;
  cpu_options.label_smoothing = options.label_smoothing;
  const auto cpu_layer = layers::make_layer(layers::Backend::Cpu, spec, shapes, cpu_options);
  CudaLayer cuda_layer(spec, shapes, options);
  const LayerRun cpu = run_on_cpu(*cpu_layer, run);
  LayerRun cuda = run_on_cuda(cuda_layer, options.cuda->compute_stream(), run);
  expect_same_results(cuda, cpu, tolerance);
  return cuda;
}

}  // namespace vdnn::test
