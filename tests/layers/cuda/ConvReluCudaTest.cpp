// Conv2dCuda with its ReLU epilogue (conv2d_relu, Note [Fusion]) in NCHW, NHWC and the stem's NCHW
// input to NHWC output, with and without bias, over shapes whose output channels and planes do and
// do not allow the float4 epilogue: against the CPU's fused layer, against the unfused CUDA chain
// Conv2dCuda -> ReluCuda bit for bit, the registry's layouts, and the workspace accounting.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "layers/LayerTestSupport.hpp"
#include "layers/Registry.hpp"
#include "layers/cuda/Conv2dCuda.hpp"
#include "layers/cuda/CudaLayerTest.hpp"
#include "layers/cuda/DeviceData.hpp"
#include "layers/cuda/RawBuffer.hpp"
#include "layers/cuda/ReluCuda.hpp"
#include "runtime/Error.hpp"
#include "runtime/MemoryResource.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::test {
namespace {

using layers::BackwardArgs;
using layers::Conv2dReluSpec;
using layers::Conv2dSpec;
using layers::ForwardArgs;
using layers::GradTarget;
using layers::LayerOptions;
using runtime::DType;
using runtime::Layout;
using runtime::Shape;
using runtime::TensorView;
using Floats = std::vector<float>;
using ConvReluCuda = CudaLayerTest;

// FP32 against Eigen's FP32: only the summation order differs (as in ConvLinearCudaTest).
constexpr double kConvTolerance = 1e-4;

// The memory orders of the input and of the output.
struct Layouts {
  Layout input;
  Layout output;
  const char* name;
};
constexpr Layouts kLayouts[] = {{Layout::Nchw, Layout::Nchw, "nchw"},
                                {Layout::Nhwc, Layout::Nhwc, "nhwc"},
                                {Layout::Nchw, Layout::Nhwc, "nchw input, nhwc output"}};

struct Case {
  std::string name;
  Shape input;
  Conv2dSpec spec;
};

// Named by the output's channels C and plane H * W: the epilogue runs float4 where C % 4 == 0
// (NHWC) or H * W % 4 == 0 (NCHW), and one element per thread elsewhere.
std::vector<Case> cases(bool bias) {
  return {
      {"C6_HW49", Shape{2, 3, 7, 7}, conv(6, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, bias)},
      {"C8_HW64", Shape{2, 4, 8, 8}, conv(8, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, bias)},
      {"C12_HW30", Shape{2, 5, 6, 5}, conv(12, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, bias)},
      {"C6_HW16_1x1", Shape{3, 8, 4, 4}, conv(6, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, bias)},
      {"C3_HW25_odd_count", Shape{1, 3, 5, 5}, conv(3, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, bias)},
      {"C4_HW25_stride2_groups2", Shape{2, 6, 9, 10},
       conv(4, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 2, bias)},
      {"C64_HW196", Shape{4, 32, 14, 14}, conv(64, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, bias)},
  };
}

LayerOptions laid_out(LayerOptions options, const Layouts& layouts) {
  options.input_layout = layouts.input;
  options.layout = layouts.output;
  return options;
}

// ---- One step's data, NCHW-ordered on the host --------------------------------------------------

struct StepData {
  Floats x, weight, bias, dy, dx_before;
};

struct StepResults {
  Floats y, dx, dweight, dbias;
};

Floats random_floats(std::int64_t count, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Floats values(static_cast<std::size_t>(count));
  for (float& v : values) v = dist(rng);
  return values;
}

StepData random_step(const Case& c, const Shape& out, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Conv2dSpec& s = c.spec;
  StepData d;
  d.x = random_floats(c.input.numel(), rng);
  d.weight =
      random_floats(s.out_channels * (c.input.c() / s.groups) * s.kernel[0] * s.kernel[1], rng);
  d.bias = random_floats(s.bias ? s.out_channels : 0, rng);
  d.dy = random_floats(out.numel(), rng);
  d.dx_before = random_floats(c.input.numel(), rng);
  return d;
}

// The views of one step on the device. The stem (an NCHW input converted to an NHWC output) takes
// no input gradient.
struct DeviceStep {
  DeviceStep(DeviceData& mem, const Case& c, const Shape& out, const Layouts& layouts,
             const StepData& d, bool accumulate_dx)
      : x(mem.upload(d.x, c.input, layouts.input)),
        y(mem.nan(out, layouts.output)),
        dy(mem.upload(d.dy, out, layouts.output)),
        dx(layouts.input != layouts.output ? TensorView{}
           : accumulate_dx                 ? mem.upload(d.dx_before, c.input, layouts.input)
                                           : mem.nan(c.input, layouts.input)),
        accumulate(accumulate_dx) {
    const std::vector<layers::ParamSpec> specs = layers::param_specs(c.spec, {c.input});
    params = {mem.upload(d.weight, specs[0].shape)};
    grad_params = {mem.nan(specs[0].shape)};
    if (c.spec.bias) {
      params.push_back(mem.upload(d.bias, specs[1].shape));
      grad_params.push_back(mem.nan(specs[1].shape));
    }
  }

  StepResults download(DeviceData& mem) const {
    StepResults r;
    r.y = mem.download(y);
    if (!dx.empty()) r.dx = mem.download(dx);
    r.dweight = mem.download(grad_params[0]);
    if (grad_params.size() > 1) r.dbias = mem.download(grad_params[1]);
    return r;
  }

  TensorView x, y, dy, dx;
  bool accumulate;
  std::vector<TensorView> params, grad_params;
};

// One forward and backward of the fused CUDA layer, as an executor runs it.
StepResults run_fused(DeviceData& mem, layers::Layer& layer, const DeviceStep& v) {
  ForwardArgs f;
  f.inputs = {v.x};
  f.params = v.params;
  f.output = v.y;
  f.workspace = mem.workspace(layer.workspace().forward);
  layer.forward(f);
  BackwardArgs b;
  b.inputs = {v.x};
  b.output = v.y;
  b.grad_output = v.dy;
  b.grad_inputs = {GradTarget{v.dx, v.accumulate}};
  b.params = v.params;
  b.grad_params = v.grad_params;
  b.workspace = mem.workspace(layer.workspace().backward);
  layer.backward(b);
  return v.download(mem);
}

// Conv2dCuda -> ReluCuda, forward and backward, on the same views.
StepResults run_chain(DeviceData& mem, const LayerOptions& options, const Case& c, const Shape& out,
                      const Layouts& layouts, const DeviceStep& v) {
  layers::cuda::Conv2dCuda conv_layer(c.spec, {c.input}, options);
  LayerOptions relu_options = options;
  relu_options.input_layout = layouts.output;
  layers::cuda::ReluCuda relu(layers::ReluSpec{}, {out}, relu_options);
  const TensorView z = mem.nan(out, layouts.output);
  ForwardArgs f;
  f.inputs = {v.x};
  f.params = v.params;
  f.output = z;
  f.workspace = mem.workspace(conv_layer.workspace().forward);
  conv_layer.forward(f);
  ForwardArgs r;
  r.inputs = {z};
  r.output = v.y;
  relu.forward(r);

  const TensorView dz = mem.nan(out, layouts.output);
  BackwardArgs rb;
  rb.inputs = {TensorView{}};
  rb.output = v.y;
  rb.grad_output = v.dy;
  rb.grad_inputs = {GradTarget{dz, false}};
  relu.backward(rb);
  BackwardArgs cb;
  cb.inputs = {v.x};
  cb.grad_output = dz;
  cb.grad_inputs = {GradTarget{v.dx, v.accumulate}};
  cb.params = v.params;
  cb.grad_params = v.grad_params;
  cb.workspace = mem.workspace(conv_layer.workspace().backward);
  conv_layer.backward(cb);
  return v.download(mem);
}

// The CPU's fused layer on the same data. Its backward takes the ReLU's mask from `mask_output`
// (the CUDA output): an output within rounding of 0 may be clipped on one backend and not on the
// other, and the element of dz it flips would move the gradients by far more than rounding.
StepResults run_cpu(const Case& c, const StepData& d, bool dx_wanted, bool accumulate,
                    const Floats& mask_output) {
  LayerOptions options;
  options.dtype = DType::F32;
  const auto layer =
      layers::make_layer(layers::Backend::Cpu, Conv2dReluSpec{c.spec}, {c.input}, options);
  const Shape& out = layer->output_shape();
  const std::vector<layers::ParamSpec> specs = layers::param_specs(c.spec, {c.input});
  StepData in = d;
  StepResults r;
  r.y.assign(static_cast<std::size_t>(out.numel()), 0.0f);
  r.dx = accumulate ? d.dx_before : Floats(d.x.size(), 0.0f);
  r.dweight.assign(d.weight.size(), 0.0f);
  r.dbias.assign(d.bias.size(), 0.0f);
  Floats workspace((layer->workspace_bytes() + sizeof(float) - 1) / sizeof(float));
  const TensorView ws =
      workspace.empty() ? TensorView{}
                        : view_of(workspace, Shape{static_cast<std::int64_t>(workspace.size())});
  std::vector<TensorView> params = {view_of(in.weight, specs[0].shape)};
  std::vector<TensorView> grads = {view_of(r.dweight, specs[0].shape)};
  if (c.spec.bias) {
    params.push_back(view_of(in.bias, specs[1].shape));
    grads.push_back(view_of(r.dbias, specs[1].shape));
  }
  ForwardArgs f;
  f.inputs = {view_of(in.x, c.input)};
  f.params = params;
  f.output = view_of(r.y, out);
  f.workspace = ws;
  layer->forward(f);
  Floats mask = mask_output;
  BackwardArgs b;
  b.inputs = f.inputs;
  b.output = view_of(mask, out);
  b.grad_output = view_of(in.dy, out);
  b.grad_inputs = {GradTarget{dx_wanted ? view_of(r.dx, c.input) : TensorView{}, accumulate}};
  b.params = params;
  b.grad_params = grads;
  b.workspace = ws;
  layer->backward(b);
  if (!dx_wanted) r.dx.clear();
  return r;
}

// |actual - expected| <= tolerance * max(|expected| over the tensor, 1e-3), as cuda_matches_cpu
// compares; a NaN always fails.
::testing::AssertionResult near(const char* what, const Floats& actual, const Floats& expected,
                                double tolerance) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure()
           << what << ": " << actual.size() << " elements, expected " << expected.size();
  }
  double scale = 1e-3;
  for (const float e : expected) scale = std::max(scale, std::abs(static_cast<double>(e)));
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double error = std::abs(static_cast<double>(actual[i]) - expected[i]);
    if (!(error <= tolerance * scale)) {
      return ::testing::AssertionFailure()
             << what << ": element " << i << " is " << actual[i] << ", the CPU's " << expected[i]
             << " (scale " << scale << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult bitwise_equal(const char* what, const Floats& actual,
                                         const Floats& expected) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure()
           << what << ": " << actual.size() << " elements, expected " << expected.size();
  }
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (std::memcmp(&actual[i], &expected[i], sizeof(float)) != 0) {
      return ::testing::AssertionFailure() << what << ": element " << i << " is " << actual[i]
                                           << ", the unfused chain's " << expected[i];
    }
  }
  return ::testing::AssertionSuccess();
}

std::string describe(const Case& c, const Layouts& layouts, bool accumulate) {
  return c.name + (c.spec.bias ? " bias " : " ") + layouts.name + (accumulate ? " accumulate" : "");
}

// Calls check(c, layouts, accumulate, seed) for every case with and without bias, in every layout
// pair, overwriting and accumulating the input gradient, with seeds counting up from `seed`.
template <typename Check>
void for_each_step(std::uint64_t seed, const Check& check) {
  for (const bool bias : {false, true}) {
    for (const Case& c : cases(bias)) {
      for (const Layouts& layouts : kLayouts) {
        for (const bool accumulate : {false, true}) {
          SCOPED_TRACE(describe(c, layouts, accumulate));
          check(c, layouts, accumulate, seed++);
        }
      }
    }
  }
}

TEST_F(ConvReluCuda, FusedMatchesTheCpuFusedLayerInBothLayouts) {
  for_each_step(1, [&](const Case& c, const Layouts& layouts, bool accumulate, std::uint64_t seed) {
    const LayerOptions options = laid_out(this->options(), layouts);
    layers::cuda::Conv2dCuda layer(Conv2dReluSpec{c.spec}, {c.input}, options);
    ASSERT_EQ(layer.layout(), layouts.output);
    ASSERT_EQ(layer.input_layout(), layouts.input);
    const Shape& out = layer.output_shape();
    const StepData data = random_step(c, out, seed);
    DeviceData mem(context().compute_stream());
    const DeviceStep views(mem, c, out, layouts, data, accumulate);
    const StepResults cuda = run_fused(mem, layer, views);
    const StepResults cpu = run_cpu(c, data, !views.dx.empty(), accumulate, cuda.y);
    EXPECT_TRUE(near("output", cuda.y, cpu.y, kConvTolerance));
    EXPECT_TRUE(near("grad input", cuda.dx, cpu.dx, kConvTolerance));
    EXPECT_TRUE(near("grad weight", cuda.dweight, cpu.dweight, kConvTolerance));
    EXPECT_TRUE(near("grad bias", cuda.dbias, cpu.dbias, kConvTolerance));
    // The ReLU clipped some outputs and kept others.
    const auto zeros = std::count(cuda.y.begin(), cuda.y.end(), 0.0f);
    EXPECT_GT(zeros, 0);
    EXPECT_LT(zeros, static_cast<std::ptrdiff_t>(cuda.y.size()));
  });
}

// Note [Fusion]: the epilogue rounds conv + bias to float and then selects, as cudnnAddTensor and
// ReluCuda do, and the backward runs the convolution's from the same dz: the chain's bits.
TEST_F(ConvReluCuda, FusedIsBitwiseTheUnfusedChain) {
  for_each_step(
      100, [&](const Case& c, const Layouts& layouts, bool accumulate, std::uint64_t seed) {
        const LayerOptions options = laid_out(this->options(), layouts);
        layers::cuda::Conv2dCuda layer(Conv2dReluSpec{c.spec}, {c.input}, options);
        const Shape& out = layer.output_shape();
        const StepData data = random_step(c, out, seed);
        DeviceData mem(context().compute_stream());
        const StepResults fused =
            run_fused(mem, layer, DeviceStep(mem, c, out, layouts, data, accumulate));
        const StepResults chain = run_chain(mem, options, c, out, layouts,
                                            DeviceStep(mem, c, out, layouts, data, accumulate));
        EXPECT_TRUE(bitwise_equal("output", fused.y, chain.y));
        EXPECT_TRUE(bitwise_equal("grad input", fused.dx, chain.dx));
        EXPECT_TRUE(bitwise_equal("grad weight", fused.dweight, chain.dweight));
        EXPECT_TRUE(bitwise_equal("grad bias", fused.dbias, chain.dbias));
      });
}

TEST_F(ConvReluCuda, RegistryBuildsTheConvolutionsLayouts) {
  const Shape input{2, 4, 6, 6};
  const Conv2dReluSpec spec{conv(8, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true)};
  for (const Layouts& layouts : kLayouts) {
    SCOPED_TRACE(layouts.name);
    const auto layer =
        layers::make_layer(layers::Backend::Cuda, spec, {input}, laid_out(options(), layouts));
    EXPECT_EQ(layers::type_name(layer->spec()), "conv2d_relu");
    EXPECT_EQ(layer->layout(), layouts.output);
    EXPECT_EQ(layer->input_layout(), layouts.input);
  }
  const Layouts nhwc_to_nchw{Layout::Nhwc, Layout::Nchw, "nhwc input, nchw output"};
  EXPECT_THROW(
      layers::make_layer(layers::Backend::Cuda, spec, {input}, laid_out(options(), nhwc_to_nchw)),
      runtime::InvalidArgument);
}

// The fused layer masks its output gradient in place: its workspace is the convolution's for every
// algorithm a limit can pick, and workspace(), workspace_options() and limit_workspace() agree.
TEST_F(ConvReluCuda, WorkspaceIsTheConvolutions) {
  const Shape input{16, 64, 56, 56};
  const Conv2dSpec spec = conv(64, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true);
  for (const Layouts& layouts : kLayouts) {
    SCOPED_TRACE(layouts.name);
    const LayerOptions options = laid_out(this->options(), layouts);
    layers::cuda::Conv2dCuda plain(spec, {input}, options);
    layers::cuda::Conv2dCuda fused(Conv2dReluSpec{spec}, {input}, options);
    EXPECT_EQ(fused.workspace(), plain.workspace());
    for (const bool backward : {false, true}) {
      const auto plain_options = plain.workspace_options(backward);
      const auto fused_options = fused.workspace_options(backward);
      ASSERT_EQ(fused_options.size(), plain_options.size());
      for (std::size_t i = 0; i < plain_options.size(); ++i) {
        EXPECT_EQ(fused_options[i].workspace, plain_options[i].workspace);
      }
    }
    const auto backward_options = plain.workspace_options(true);
    for (std::size_t i = 0; i < backward_options.size(); ++i) {
      plain.limit_workspace({layers::kUnlimitedWorkspace, backward_options[i].workspace});
      fused.limit_workspace({layers::kUnlimitedWorkspace, backward_options[i].workspace});
      EXPECT_EQ(fused.algorithms(), plain.algorithms()) << "option " << i;
      EXPECT_EQ(fused.workspace(), plain.workspace()) << "option " << i;
    }
  }
}

}  // namespace
}  // namespace vdnn::test
