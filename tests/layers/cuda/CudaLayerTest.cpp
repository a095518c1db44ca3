// The CUDA layer test harness: random data, one CPU step on host vectors, one (or two) CUDA steps
// on device buffers, and the element-wise comparison of everything both steps produced.
#include "layers/cuda/CudaLayerTest.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "layers/Registry.hpp"
#include "runtime/BFloat16.hpp"
#include "runtime/Device.hpp"
#include "runtime/MemoryResource.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/CudaMemoryResource.hpp"

namespace vdnn::test {
namespace {

using layers::BackwardArgs;
using layers::ForwardArgs;
using layers::GradTarget;
using layers::Layer;
using runtime::DType;
using runtime::Shape;
using runtime::TensorView;
using Floats = std::vector<float>;

// Everything one step reads.
struct StepInputs {
  std::vector<Shape> param_shapes;
  std::size_t trainable = 0;  // param_shapes[0, trainable) get gradients
  std::vector<Floats> inputs;
  std::vector<Floats> params;
  Floats grad_output;
  std::vector<Floats> grad_inputs_before;  // accumulate only
  std::vector<std::int32_t> labels;        // loss layers only
};

// Everything one step writes (params: their values after the step).
struct StepResults {
  Floats output;
  std::vector<Floats> params;
  layers::LossStats loss;
  std::vector<Floats> grad_inputs;
  std::vector<Floats> grad_params;
};

bool is_loss(const Layer& layer) {
  return std::holds_alternative<layers::SoftmaxCrossEntropySpec>(layer.spec());
}

Floats random_floats(std::int64_t count, float low, float high, int levels, std::mt19937_64& rng) {
  Floats values(static_cast<std::size_t>(count));
  if (levels > 0) {
    std::uniform_int_distribution<int> level(0, levels - 1);
    const float step = levels > 1 ? (high - low) / static_cast<float>(levels - 1) : 0.0f;
    for (float& v : values) v = low + step * static_cast<float>(level(rng));
  } else {
    std::uniform_real_distribution<float> dist(low, high);
    for (float& v : values) v = dist(rng);
  }
  return values;
}

StepInputs make_inputs(const Layer& layer, const StepSettings& settings) {
  std::mt19937_64 rng(settings.seed);
  StepInputs in;
  for (const Shape& shape : layer.input_shapes()) {
    in.inputs.push_back(random_floats(shape.numel(), -1.0f, 1.0f, settings.input_levels, rng));
  }
  for (const layers::ParamSpec& param : layers::param_specs(layer.spec(), layer.input_shapes())) {
    const bool trainable = param.kind == layers::ParamKind::Trainable;
    in.param_shapes.push_back(param.shape);
    in.trainable += trainable ? 1 : 0;
    in.params.push_back(trainable ? random_floats(param.shape.numel(), -1.0f, 1.0f, 0, rng)
                                  : random_floats(param.shape.numel(), 0.5f, 1.5f, 0, rng));
  }
  in.grad_output = random_floats(layer.output_shape().numel(), -1.0f, 1.0f, 0, rng);
  if (settings.accumulate) {
    for (const Shape& shape : layer.input_shapes()) {
      in.grad_inputs_before.push_back(random_floats(shape.numel(), -1.0f, 1.0f, 0, rng));
    }
  }
  if (layer.dtype() == DType::BF16) {
    // The CPU reference reads exactly the values the bf16 layer is given.
    const auto round_all = [](Floats& values) {
      for (float& v : values) v = runtime::round_to_bfloat16(v);
    };
    for (Floats& input : in.inputs) round_all(input);
    for (std::size_t i = 0; settings.bf16_params && i < in.trainable; ++i) round_all(in.params[i]);
    for (Floats& before : in.grad_inputs_before) round_all(before);
    if (layers::output_dtype(layer.spec(), DType::BF16) == DType::BF16) round_all(in.grad_output);
  }
  if (is_loss(layer)) {
    const Shape& logits = layer.input_shapes()[0];
    std::uniform_int_distribution<std::int32_t> label(
        0, static_cast<std::int32_t>(logits.sample_numel() - 1));
    for (std::int64_t i = 0; i < logits.n(); ++i) in.labels.push_back(label(rng));
  }
  return in;
}

TensorView view(const void* data, const Shape& shape,
                runtime::Layout layout = runtime::Layout::Nchw, DType dtype = DType::F32) {
  return TensorView{const_cast<void*>(data), shape, dtype, layout};
}

// A workspace of `bytes` bytes as an F32 view (empty for 0 bytes).
TensorView workspace_view(void* data, std::size_t bytes) {
  return view(bytes == 0 ? nullptr : data,
              Shape{static_cast<std::int64_t>((bytes + sizeof(float) - 1) / sizeof(float))});
}

// The reference: every view is passed, whatever backward needs.
StepResults run_cpu(Layer& layer, StepInputs in, const StepSettings& settings) {
  StepResults r;
  Floats workspace((layer.workspace_bytes() + sizeof(float) - 1) / sizeof(float));
  r.output.resize(static_cast<std::size_t>(layer.output_shape().numel()));
  ForwardArgs f;
  for (std::size_t i = 0; i < in.inputs.size(); ++i) {
    f.inputs.push_back(view(in.inputs[i].data(), layer.input_shapes()[i]));
  }
  for (std::size_t i = 0; i < in.params.size(); ++i) {
    f.params.push_back(view(in.params[i].data(), in.param_shapes[i]));
  }
  f.output = view(r.output.data(), layer.output_shape());
  f.workspace = workspace_view(workspace.data(), layer.workspace_bytes());
  f.training = settings.training;
  f.step = settings.step;
  f.labels = in.labels.empty() ? nullptr : in.labels.data();
  f.loss_stats = is_loss(layer) ? &r.loss : nullptr;
  layer.forward(f);

  BackwardArgs b;
  b.inputs = f.inputs;
  b.output = f.output;
  b.grad_output = view(in.grad_output.data(), layer.output_shape());
  for (std::size_t i = 0; i < in.inputs.size(); ++i) {
    r.grad_inputs.push_back(settings.accumulate ? in.grad_inputs_before[i]
                                                : Floats(in.inputs[i].size(), 0.0f));
    b.grad_inputs.push_back(GradTarget{settings.input_grads
                                           ? view(r.grad_inputs[i].data(), layer.input_shapes()[i])
                                           : TensorView{},
                                       settings.accumulate});
  }
  b.params = f.params;
  for (std::size_t i = 0; i < in.trainable; ++i) {
    r.grad_params.emplace_back(static_cast<std::size_t>(in.param_shapes[i].numel()));
    b.grad_params.push_back(view(r.grad_params[i].data(), in.param_shapes[i]));
  }
  b.workspace = f.workspace;
  b.step = settings.step;
  b.labels = f.labels;
  layer.backward(b);
  if (!settings.input_grads) r.grad_inputs.clear();
  r.params = std::move(in.params);
  return r;
}

// Device copies of the step's tensors, made and read back on the compute stream.
class DeviceTensors {
 public:
  explicit DeviceTensors(cudaStream_t stream) : stream_(stream) {}

  // A device copy of `host` (NCHW order) stored in `layout` as `dtype` (F32, or BF16 rounded).
  void* upload(const Floats& host, const Shape& shape = {},
               runtime::Layout layout = runtime::Layout::Nchw, DType dtype = DType::F32) {
    const Floats ordered = to_layout(host, shape, layout);
    const std::size_t bytes = host.size() * runtime::dtype_size(dtype);
    staged_.emplace_back(bytes);
    if (dtype == DType::BF16) {
      runtime::to_bfloat16(ordered.data(),
                           reinterpret_cast<runtime::BFloat16*>(staged_.back().data()),
                           ordered.size());
    } else {
      std::memcpy(staged_.back().data(), ordered.data(), bytes);
    }
    void* data = allocate(bytes);
    VDNN_CHECK_CUDA(
        cudaMemcpyAsync(data, staged_.back().data(), bytes, cudaMemcpyHostToDevice, stream_));
    return data;
  }
  // `bytes` of device memory, every float of it a NaN.
  void* poisoned(std::size_t bytes) {
    void* data = allocate(bytes);
    if (data != nullptr) VDNN_CHECK_CUDA(cudaMemsetAsync(data, 0xFF, bytes, stream_));
    return data;
  }
  // Synchronizes the stream; `host` gets the NCHW order of a tensor stored in `layout` as
  // `dtype`.
  void download(const void* data, Floats& host, const Shape& shape = {},
                runtime::Layout layout = runtime::Layout::Nchw, DType dtype = DType::F32) {
    if (dtype == DType::BF16) {
      std::vector<runtime::BFloat16> stored(host.size());
      VDNN_CHECK_CUDA(cudaMemcpyAsync(stored.data(), data, stored.size() * sizeof(stored[0]),
                                      cudaMemcpyDeviceToHost, stream_));
      VDNN_CHECK_CUDA(cudaStreamSynchronize(stream_));
      runtime::to_float(stored.data(), host.data(), host.size());
    } else {
      VDNN_CHECK_CUDA(cudaMemcpyAsync(host.data(), data, host.size() * sizeof(float),
                                      cudaMemcpyDeviceToHost, stream_));
      VDNN_CHECK_CUDA(cudaStreamSynchronize(stream_));
    }
    host = from_layout(host, shape, layout);
  }

 private:
  void* allocate(std::size_t bytes) {
    buffers_.emplace_back(resource_, bytes);
    return buffers_.back().data();
  }

  cudaStream_t stream_;
  runtime::cuda::DeviceMemoryResource resource_;
  std::vector<runtime::Buffer> buffers_;  // declared after resource_: freed before it goes
  // Host sources of queued uploads, alive until the stream ran them.
  std::vector<std::vector<unsigned char>> staged_;
};

StepResults run_cuda(runtime::cuda::DeviceContext& context, Layer& layer, const StepInputs& in,
                     const StepSettings& settings) {
  const cudaStream_t stream = context.compute_stream();
  DeviceTensors device(stream);
  // Feature maps in the layer's element type, the output in its own (the loss's is F32).
  const DType maps = layer.dtype();
  const DType out_type = layers::output_dtype(layer.spec(), maps);
  const std::size_t output_bytes = layer.output_shape().bytes(out_type);
  ForwardArgs f;
  const runtime::Layout in_layout = layer.input_layout();
  const runtime::Layout out_layout = layer.layout();
  for (std::size_t i = 0; i < in.inputs.size(); ++i) {
    const Shape& shape = layer.input_shapes()[i];
    f.inputs.push_back(
        view(device.upload(in.inputs[i], shape, in_layout, maps), shape, in_layout, maps));
  }
  for (std::size_t i = 0; i < in.params.size(); ++i) {
    f.params.push_back(view(device.upload(in.params[i]), in.param_shapes[i]));
  }
  f.output = view(device.poisoned(output_bytes), layer.output_shape(), out_layout, out_type);
  f.workspace = workspace_view(device.poisoned(layer.workspace_bytes()), layer.workspace_bytes());
  f.training = settings.training;
  f.step = settings.step;
  f.labels = in.labels.empty() ? nullptr : in.labels.data();
  StepResults r;
  f.loss_stats = is_loss(layer) ? &r.loss : nullptr;
  layer.forward(f);

  const layers::BackwardNeeds needs = layers::backward_needs(layer.spec());
  BackwardArgs b;
  for (std::size_t i = 0; i < f.inputs.size(); ++i) {
    b.inputs.push_back(needs.input(i) ? f.inputs[i] : TensorView{});
  }
  b.output = needs.output ? f.output : TensorView{};
  b.grad_output = view(device.upload(in.grad_output, layer.output_shape(), out_layout, out_type),
                       layer.output_shape(), out_layout, out_type);
  for (std::size_t i = 0; i < in.inputs.size() && settings.input_grads; ++i) {
    const Shape& shape = layer.input_shapes()[i];
    void* data = settings.accumulate
                     ? device.upload(in.grad_inputs_before[i], shape, in_layout, maps)
                     : device.poisoned(shape.bytes(maps));
    b.grad_inputs.push_back(GradTarget{view(data, shape, in_layout, maps), settings.accumulate});
  }
  b.grad_inputs.resize(in.inputs.size(), GradTarget{TensorView{}, settings.accumulate});
  b.params = f.params;
  for (std::size_t i = 0; i < in.trainable; ++i) {
    b.grad_params.push_back(
        view(device.poisoned(in.param_shapes[i].bytes(DType::F32)), in.param_shapes[i]));
  }
  b.workspace = f.workspace;
  b.step = settings.step;
  b.labels = f.labels;
  layer.backward(b);

  r.output.resize(static_cast<std::size_t>(layer.output_shape().numel()));
  device.download(f.output.data, r.output, layer.output_shape(), out_layout, out_type);
  for (std::size_t i = 0; i < in.params.size(); ++i) {
    r.params.emplace_back(in.params[i].size());
    device.download(f.params[i].data, r.params.back());
  }
  for (std::size_t i = 0; i < in.inputs.size() && settings.input_grads; ++i) {
    r.grad_inputs.emplace_back(in.inputs[i].size());
    device.download(b.grad_inputs[i].tensor.data, r.grad_inputs.back(), layer.input_shapes()[i],
                    in_layout, maps);
  }
  for (std::size_t i = 0; i < in.trainable; ++i) {
    r.grad_params.emplace_back(static_cast<std::size_t>(in.param_shapes[i].numel()));
    device.download(b.grad_params[i].data, r.grad_params.back());
  }
  VDNN_CHECK_CUDA(cudaStreamSynchronize(stream));
  return r;
}

// Appends to `failures` when some element of `actual` is further from `expected` than allowed (a
// NaN always is).
// Appends to `failures` when ||actual - expected|| > norm_tolerance * ||expected|| (2-norms; not
// checked for norm_tolerance 0, nor where ||expected|| is below 1e-6 * sqrt(n)).
void compare_norm(const std::string& what, const Floats& actual, const Floats& expected,
                  double norm_tolerance, std::string& failures) {
  if (norm_tolerance <= 0.0 || actual.size() != expected.size()) return;
  double error = 0.0;
  double norm = 0.0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double d = static_cast<double>(actual[i]) - expected[i];
    error += d * d;
    norm += static_cast<double>(expected[i]) * expected[i];
  }
  if (norm <= 1e-12 * static_cast<double>(expected.size())) return;
  const double relative = std::sqrt(error / norm);
  if (relative <= norm_tolerance) return;
  failures += what + ": relative 2-norm error " + std::to_string(relative) + " > " +
              std::to_string(norm_tolerance) + "\n";
}

void compare(const std::string& what, const Floats& actual, const Floats& expected,
             double tolerance, std::string& failures) {
  if (actual.size() != expected.size()) {
    failures += what + ": " + std::to_string(actual.size()) + " elements, expected " +
                std::to_string(expected.size()) + "\n";
    return;
  }
  double scale = 1e-3;
  for (float e : expected) scale = std::max(scale, std::abs(static_cast<double>(e)));
  double worst = 0.0;
  std::size_t worst_index = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double error = std::abs(static_cast<double>(actual[i]) - expected[i]);
    if (std::isnan(error) || error > worst) {
      worst = std::isnan(error) ? std::numeric_limits<double>::infinity() : error;
      worst_index = i;
      if (std::isnan(error)) break;
    }
  }
  if (worst <= tolerance * scale) return;
  std::ostringstream out;
  out << what << ": element " << worst_index << " is " << actual[worst_index] << ", expected "
      << expected[worst_index] << " (|error| " << worst << " > " << tolerance << " * " << scale
      << ")\n";
  failures += out.str();
}

void compare_all(const std::string& run, const StepResults& actual, const StepResults& expected,
                 double tolerance, double norm_tolerance, std::string& failures) {
  const auto both = [&](const std::string& what, const Floats& a, const Floats& e) {
    compare(what, a, e, tolerance, failures);
    compare_norm(what, a, e, norm_tolerance, failures);
  };
  both(run + "output", actual.output, expected.output);
  const auto stat = [&](const char* name, double layers::LossStats::*member) {
    compare(run + name, {static_cast<float>(actual.loss.*member)},
            {static_cast<float>(expected.loss.*member)}, tolerance, failures);
  };
  stat("loss", &layers::LossStats::loss);
  stat("accuracy", &layers::LossStats::accuracy);
  stat("top5", &layers::LossStats::top5);
  const auto each = [&](const char* name, const std::vector<Floats>& a,
                        const std::vector<Floats>& e) {
    if (a.size() != e.size()) {
      failures += run + name + ": tensor counts differ\n";
      return;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
      both(run + name + "[" + std::to_string(i) + "]", a[i], e[i]);
    }
  };
  each("params", actual.params, expected.params);
  each("grad_inputs", actual.grad_inputs, expected.grad_inputs);
  each("grad_params", actual.grad_params, expected.grad_params);
}

bool bitwise_equal(const Floats& a, const Floats& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

bool bitwise_equal(const std::vector<Floats>& a, const std::vector<Floats>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const Floats& x, const Floats& y) { return bitwise_equal(x, y); });
}

}  // namespace

Floats to_layout(const Floats& nchw, const Shape& shape, runtime::Layout layout) {
  return runtime::relayout(nchw, shape, runtime::Layout::Nchw, layout);
}

Floats from_layout(const Floats& stored, const Shape& shape, runtime::Layout layout) {
  return runtime::relayout(stored, shape, layout, runtime::Layout::Nchw);
}

void CudaLayerTest::SetUp() {
  if (runtime::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  context_ = std::make_unique<runtime::cuda::DeviceContext>(0);
}

layers::LayerOptions CudaLayerTest::bf16_options() {
  layers::LayerOptions o = options();
  o.dtype = DType::BF16;
  return o;
}

layers::LayerOptions CudaLayerTest::options(bool allow_tf32) {
  layers::LayerOptions o;
  o.dtype = DType::F32;
  o.cuda = context_.get();
  o.deterministic = true;
  o.allow_tf32 = allow_tf32;
  return o;
}

::testing::AssertionResult cuda_matches_cpu(runtime::cuda::DeviceContext& context, Layer& layer,
                                            double tolerance, const StepSettings& settings) {
  layers::LayerOptions cpu_options;
  cpu_options.dtype = DType::F32;
  cpu_options.seed = settings.layer_seed;
  cpu_options.label_smoothing = settings.label_smoothing;
  const auto cpu_layer =
      layers::make_layer(layers::Backend::Cpu, layer.spec(), layer.input_shapes(), cpu_options);
  if (cpu_layer->output_shape() != layer.output_shape()) {
    return ::testing::AssertionFailure()
           << "output shape " << layer.output_shape().to_string() << ", the CPU layer's is "
           << cpu_layer->output_shape().to_string();
  }
  const StepInputs in = make_inputs(layer, settings);
  const StepResults expected = run_cpu(*cpu_layer, in, settings);
  const StepResults actual = run_cuda(context, layer, in, settings);
  std::string failures;
  compare_all("", actual, expected, tolerance, settings.norm_tolerance, failures);
  if (settings.bitwise_repeatable) {
    const StepResults again = run_cuda(context, layer, in, settings);
    if (!bitwise_equal(again.output, actual.output) ||
        !bitwise_equal(again.params, actual.params) ||
        !bitwise_equal(again.grad_inputs, actual.grad_inputs) ||
        !bitwise_equal(again.grad_params, actual.grad_params) ||
        again.loss.loss != actual.loss.loss || again.loss.accuracy != actual.loss.accuracy ||
        again.loss.top5 != actual.loss.top5) {
      failures += "a second CUDA step on the same data gave different bits\n";
    }
  }
  if (failures.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << failures;
}

}  // namespace vdnn::test
