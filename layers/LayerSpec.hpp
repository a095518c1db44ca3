// LayerSpec: what a layer is (type and attributes), independent of any backend. Every attribute
// default lives here; the JSON loader (models/) only overrides what a config sets.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "runtime/Shape.hpp"

namespace vdnn::layers {

using runtime::Shape;
using Pair = std::array<std::int64_t, 2>;  // (height, width)

struct Conv2dSpec {
  std::int64_t out_channels = 0;  // required
  Pair kernel{0, 0};              // required
  Pair stride{1, 1};
  Pair padding{0, 0};
  Pair dilation{1, 1};
  std::int64_t groups = 1;
  bool bias = false;
};
struct BatchNorm2dSpec {
  double eps = 1e-5;
  double momentum = 0.1;  // PyTorch convention: running = (1 - m) * running + m * batch
};
struct ReluSpec {};
struct MaxPool2dSpec {
  Pair kernel{0, 0};  // required
  Pair stride{0, 0};  // 0 means "same as kernel"
  Pair padding{0, 0};
  // PyTorch's ceil_mode: a last window that starts inside the input (or the left padding) but
  // runs past its end counts too, clipped (torchvision's GoogLeNet pools so).
  bool ceil_mode = false;
};
struct AvgPool2dSpec {
  Pair kernel{0, 0};  // required
  Pair stride{0, 0};  // 0 means "same as kernel"
  Pair padding{0, 0};
  bool count_include_pad = true;  // PyTorch's default
};
struct GlobalAvgPoolSpec {};
struct LinearSpec {
  std::int64_t out_features = 0;  // required
  bool bias = true;
};
struct AddSpec {};
/// Along channels. first_in_place: the first input, a concatenation, lies in place in the output as
/// its channel prefix, so forward copies only the other inputs: a dense block's storage, which
/// graph::fuse sets up, never a config (Note [Dense block storage]).
struct ConcatSpec {
  bool first_in_place = false;
};
struct DropoutSpec {
  double p = 0.5;
};
struct FlattenSpec {};
/// Mean softmax cross-entropy over the batch; its output is the scalar loss, shape [1].
struct SoftmaxCrossEntropySpec {};
/// The smooth element-wise activations, as PyTorch defines them (layers/ActivationMath.hpp):
/// silu x * sigmoid(x), gelu x * Phi(x) (the exact erf form, PyTorch's default), sigmoid,
/// hardswish x * relu6(x + 3) / 6, relu6 min(max(x, 0), 6) (MobileNetV2's) and hardsigmoid
/// relu6(x + 3) / 6 (MobileNetV3's squeeze-excitation gate).
enum class Activation : std::uint8_t { Silu, Gelu, Sigmoid, Hardswish, Relu6, Hardsigmoid };
template <Activation A>
struct ActivationSpec {
  static constexpr Activation kActivation = A;
};
using SiluSpec = ActivationSpec<Activation::Silu>;
using GeluSpec = ActivationSpec<Activation::Gelu>;
using SigmoidSpec = ActivationSpec<Activation::Sigmoid>;
using HardswishSpec = ActivationSpec<Activation::Hardswish>;
using Relu6Spec = ActivationSpec<Activation::Relu6>;
using HardsigmoidSpec = ActivationSpec<Activation::Hardsigmoid>;
/// y = x * s of two inputs: s of x's shape, or [N, C, 1, 1] broadcast over H and W (squeeze-
/// excitation's scale). Backward gives dx = dy * s and ds = dy * x, summed over H and W where s
/// is broadcast.
struct MulSpec {};
/// ConvNeXt's LayerNorm2d: each pixel's C values normalized over the channels with their mean and
/// biased variance, then y = xhat * weight[c] + bias[c] (weight and bias [C], FP32 in every
/// precision). eps as in torch.nn.LayerNorm (ConvNeXt sets 1e-6).
struct LayerNorm2dSpec {
  double eps = 1e-5;
};
/// ConvNeXt's learnable per-channel scale: y = x * layer_scale[c], the parameter [C, 1, 1] named
/// "layer_scale" as torchvision's CNBlock names it, every element starting at `init`.
struct LayerScaleSpec {
  double init = 1e-6;  // torchvision's CNBlock layer_scale
};
/// Drop path (torchvision's StochasticDepth, mode "row"): in training each sample is kept with
/// probability 1 - p and scaled by 1 / (1 - p), or zeroed; in inference y = x. Sample n's draw is
/// dropout's for element n of (seed, step) (layers/DropoutMask.hpp), so backward and a recompute
/// regenerate the same mask.
struct StochasticDepthSpec {
  double p = 0.0;  // required
};
/// A fused chain (Note [Fusion]): batchnorm2d -> relu, or with `residual` batchnorm2d -> add ->
/// relu, the add's other operand as a second input: y = relu(bn(x) [+ r]). Only graph::fuse makes
/// it, never a config; the node keeps the batch norm's name and parameters.
struct BatchNormReluSpec {
  BatchNorm2dSpec bn;
  bool residual = false;
};
/// A fused chain (Note [Fusion]): batchnorm2d -> one of the smooth activations, y = act(bn(x)).
/// Only graph::fuse makes it (for silu, relu6 and hardswish), never a config; the node keeps the
/// batch norm's name and parameters.
struct BatchNormActivationSpec {
  BatchNorm2dSpec bn;
  Activation activation = Activation::Silu;
};
/// A fused chain (Note [Fusion]): conv2d -> relu, y = relu(conv(x) [+ bias]). Only graph::fuse
/// makes it, never a config; the node keeps the convolution's name and parameters.
struct Conv2dReluSpec {
  Conv2dSpec conv;
};

/// The network input converted to the feature maps' element type (Note [Precision]): y = x
/// rounded to `to`; backward, where asked, dx (+)= dy in the input's type. Only the precision
/// pass (graph::with_precision) makes it, never a config.
struct CastSpec {
  runtime::DType to = runtime::DType::BF16;
};

/// The network input as image bytes made the feature maps' input (Note [Image input]): from a
/// u8 NHWC batch of three-channel images, y = (x / 255 - mean[c]) / std[c] in `to` (F32 or BF16),
/// NCHW. No backward (the input takes no gradient). Only graph::with_image_input makes it, never
/// a config.
struct NormalizeSpec {
  std::array<float, 3> mean{};
  std::array<float, 3> std{};
  runtime::DType to = runtime::DType::F32;
};

using LayerSpec =
    std::variant<Conv2dSpec, BatchNorm2dSpec, ReluSpec, MaxPool2dSpec, AvgPool2dSpec,
                 GlobalAvgPoolSpec, LinearSpec, AddSpec, ConcatSpec, DropoutSpec, FlattenSpec,
                 SoftmaxCrossEntropySpec, SiluSpec, GeluSpec, SigmoidSpec, HardswishSpec, Relu6Spec,
                 HardsigmoidSpec, MulSpec, LayerNorm2dSpec, LayerScaleSpec, StochasticDepthSpec,
                 BatchNormReluSpec, BatchNormActivationSpec, Conv2dReluSpec, CastSpec,
                 NormalizeSpec>;

/// Name of the layer type: "conv2d", "batchnorm2d", "relu", "maxpool2d", "avgpool2d",
/// "global_avgpool", "linear", "add", "concat", "dropout", "flatten", "softmax_cross_entropy",
/// "silu", "gelu", "sigmoid", "hardswish", "relu6", "hardsigmoid", "mul", "layernorm2d",
/// "layer_scale", "stochastic_depth" (the types a config may write), then the fused
/// "batchnorm2d_relu", "batchnorm2d_add_relu", "batchnorm2d_" + the activation's name (e.g.
/// "batchnorm2d_silu") and "conv2d_relu", "cast" and "normalize".
std::string_view type_name(const LayerSpec& spec);
/// The types a config may write, in LayerSpec's order (the first alternatives of the variant).
const std::vector<std::string_view>& known_type_names();
/// The batch norm a spec normalizes with (batchnorm2d or a fused chain), else null.
const BatchNorm2dSpec* batch_norm_of(const LayerSpec& spec);
/// The convolution a spec computes (conv2d or the fused conv2d_relu), else null.
const Conv2dSpec* conv_of(const LayerSpec& spec);

/// Whether a layer reads input `i` as a row-strided view (runtime::TensorView::row_stride, Note
/// [Dense block storage]): a batch norm's x (batchnorm2d and its fused chains) and a
/// concatenation's first input, which it finds in place in its own (row-strided) output.
bool reads_row_strided_input(const LayerSpec& spec, std::size_t i);

/// The element type of a layer's output when its inputs are `input` (Note [Precision]): a cast's
/// or a normalize's target, F32 for the loss (the loss is FP32 in every precision), else `input`.
runtime::DType output_dtype(const LayerSpec& spec, runtime::DType input);

/// Whether parameter `index` of `spec` is read through a copy in the feature maps' element type
/// when the layer runs in bf16 (Note [Precision]): convolution and linear weights, which tensor
/// cores take in bf16; biases and batch-norm parameters are read in FP32.
bool param_read_in_precision(const LayerSpec& spec, std::size_t index);

/// Number of inputs a layer takes.
struct Arity {
  int min = 1;
  int max = 1;  // kUnbounded for Add and Concat; 2 for Mul
  static constexpr int kUnbounded = 1 << 30;
};
Arity arity(const LayerSpec& spec);

/// What a layer's backward reads besides the output gradient: its inputs, its output, both (e.g.
/// conv2d_relu: x for the weight gradient, y for the ReLU's mask) or neither, or only its first
/// input (a fused batch norm's, not the residual). The scheduler keeps (or brings back) exactly
/// these for backward.
struct BackwardNeeds {
  bool inputs = false;
  bool output = false;
  bool first_input = false;
  /// Whether backward reads input `i`.
  bool input(std::size_t i) const noexcept { return inputs || (first_input && i == 0); }
};
BackwardNeeds backward_needs(const LayerSpec& spec);

/// Output shape for the given input shapes. Throws runtime::ShapeError naming what was expected.
Shape infer_output_shape(const LayerSpec& spec, const std::vector<Shape>& inputs);

/// How a parameter tensor starts.
enum class Init : std::uint8_t {
  Zeros,
  Ones,
  KaimingNormalFanOut,  // N(0, 2 / fan_out): torchvision's ResNet convs
  UniformFanIn,         // U(-1/sqrt(fan_in), 1/sqrt(fan_in)): PyTorch Linear weights and biases
  Constant,             // ParamSpec::value everywhere (ConvNeXt's layer scale)
};
/// Trainable tensors get gradients and optimizer updates; buffers (running statistics) do not.
enum class ParamKind : std::uint8_t { Trainable, Buffer };

/// One parameter or buffer of a layer, named as PyTorch names it ("weight", "running_mean").
struct ParamSpec {
  std::string name;
  Shape shape;
  ParamKind kind = ParamKind::Trainable;
  Init init = Init::Zeros;
  std::int64_t fan = 1;  // fan_out for KaimingNormalFanOut, fan_in for UniformFanIn
  /// How a rank-4 parameter lies in memory: Nchw (a KCRS convolution weight, PyTorch's order) or
  /// Nhwc (KRSC, which an NHWC convolution runs; graph::ParameterStore decides, Note [Layout]).
  runtime::Layout layout = runtime::Layout::Nchw;
  double value = 0.0;  // Init::Constant's value
};
/// Parameters and buffers in a fixed order; trainable ones first.
std::vector<ParamSpec> param_specs(const LayerSpec& spec, const std::vector<Shape>& inputs);

}  // namespace vdnn::layers
