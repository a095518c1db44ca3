// Backend-independent facts about each layer type: names, arity, backward needs, shape inference
// and parameter shapes.
#include "layers/LayerSpec.hpp"

#include <type_traits>

#include "runtime/Error.hpp"

namespace vdnn::layers {
namespace {

template <typename... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <typename... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

[[noreturn]] void shape_error(std::string_view layer, const std::string& expected,
                              const std::vector<Shape>& inputs) {
  std::string got;
  for (const Shape& s : inputs) got += (got.empty() ? "" : ", ") + s.to_string();
  throw runtime::ShapeError(std::string(layer) + ": expected " + expected +
                            ", got input shape(s) " + got);
}

void expect_rank4(std::string_view layer, const std::vector<Shape>& inputs) {
  if (inputs.size() != 1 || inputs[0].rank() != 4) {
    shape_error(layer, "one NCHW (rank-4) input", inputs);
  }
}

void expect_batch_norm(std::string_view layer, const BatchNorm2dSpec& b,
                       const std::vector<Shape>& inputs) {
  if (!(b.eps > 0.0) || !(b.momentum >= 0.0 && b.momentum <= 1.0)) {
    shape_error(layer, "eps > 0 and momentum in [0, 1]", inputs);
  }
}

Pair effective_stride(const Pair& stride, const Pair& kernel) {
  return {stride[0] == 0 ? kernel[0] : stride[0], stride[1] == 0 ? kernel[1] : stride[1]};
}

// Output extent of a sliding window; throws when the window does not fit the padded input.
std::int64_t window_out(std::string_view layer, std::int64_t in, std::int64_t kernel,
                        std::int64_t stride, std::int64_t padding, std::int64_t dilation,
                        const std::vector<Shape>& inputs) {
  if (kernel <= 0 || stride <= 0 || padding < 0 || dilation <= 0) {
    shape_error(layer, "kernel, stride and dilation > 0 and padding >= 0", inputs);
  }
  const std::int64_t span = dilation * (kernel - 1) + 1;
  if (in + 2 * padding < span) {
    shape_error(layer,
                "an input of at least " + std::to_string(span - 2 * padding) +
                    " pixels for a window of " + std::to_string(span),
                inputs);
  }
  return (in + 2 * padding - span) / stride + 1;
}

// With ceil_mode, one more window when the last one would leave input pixels out, as long as it
// starts before the end of the input (PyTorch's rule), so that no window is all padding.
std::int64_t pooled_extent(std::string_view layer, std::int64_t in, std::int64_t kernel,
                           std::int64_t stride, std::int64_t padding, bool ceil_mode,
                           const std::vector<Shape>& inputs) {
  std::int64_t out = window_out(layer, in, kernel, stride, padding, 1, inputs);
  if (ceil_mode && (in + 2 * padding - kernel) % stride != 0 && out * stride < in + padding) ++out;
  return out;
}

Shape pooled_shape(std::string_view layer, const Shape& x, const Pair& kernel, const Pair& stride,
                   const Pair& padding, bool ceil_mode, const std::vector<Shape>& inputs) {
  const Pair s = effective_stride(stride, kernel);
  if (padding[0] * 2 > kernel[0] || padding[1] * 2 > kernel[1]) {
    shape_error(layer, "padding at most half the kernel", inputs);
  }
  return Shape::nchw(x.n(), x.c(),
                     pooled_extent(layer, x.h(), kernel[0], s[0], padding[0], ceil_mode, inputs),
                     pooled_extent(layer, x.w(), kernel[1], s[1], padding[1], ceil_mode, inputs));
}

Shape conv_output(std::string_view layer, const Conv2dSpec& c, const std::vector<Shape>& inputs) {
  expect_rank4(layer, inputs);
  const Shape& x = inputs.front();
  if (c.out_channels <= 0 || c.groups <= 0 || x.c() % c.groups != 0 ||
      c.out_channels % c.groups != 0) {
    shape_error(layer, "out_channels > 0 and groups dividing both in_channels and out_channels",
                inputs);
  }
  return Shape::nchw(
      x.n(), c.out_channels,
      window_out(layer, x.h(), c.kernel[0], c.stride[0], c.padding[0], c.dilation[0], inputs),
      window_out(layer, x.w(), c.kernel[1], c.stride[1], c.padding[1], c.dilation[1], inputs));
}

// "batchnorm2d_" + the activation's config name: static storage, as type_name returns a view.
std::string_view fused_activation_name(Activation activation) {
  switch (activation) {
    case Activation::Silu:
      return "batchnorm2d_silu";
    case Activation::Gelu:
      return "batchnorm2d_gelu";
    case Activation::Sigmoid:
      return "batchnorm2d_sigmoid";
    case Activation::Hardswish:
      return "batchnorm2d_hardswish";
    case Activation::Relu6:
      return "batchnorm2d_relu6";
    case Activation::Hardsigmoid:
      return "batchnorm2d_hardsigmoid";
  }
  return "batchnorm2d_activation";  // unreachable: every enumerator is listed
}

}  // namespace

std::string_view type_name(const LayerSpec& spec) {
  if (const auto* fused = std::get_if<BatchNormReluSpec>(&spec)) {
    return fused->residual ? "batchnorm2d_add_relu" : "batchnorm2d_relu";
  }
  if (const auto* fused = std::get_if<BatchNormActivationSpec>(&spec)) {
    return fused_activation_name(fused->activation);
  }
  if (std::holds_alternative<Conv2dReluSpec>(spec)) return "conv2d_relu";
  if (std::holds_alternative<CastSpec>(spec)) return "cast";
  if (std::holds_alternative<NormalizeSpec>(spec)) return "normalize";
  return known_type_names().at(spec.index());
}

const std::vector<std::string_view>& known_type_names() {
  // Order follows the LayerSpec variant's alternatives; the fused ones, last, are not config types.
  static const std::vector<std::string_view> kNames = {"conv2d",      "batchnorm2d",
                                                       "relu",        "maxpool2d",
                                                       "avgpool2d",   "global_avgpool",
                                                       "linear",      "add",
                                                       "concat",      "dropout",
                                                       "flatten",     "softmax_cross_entropy",
                                                       "silu",        "gelu",
                                                       "sigmoid",     "hardswish",
                                                       "relu6",       "hardsigmoid",
                                                       "mul",         "layernorm2d",
                                                       "layer_scale", "stochastic_depth"};
  static_assert(std::variant_size_v<LayerSpec> == 27, "keep kNames in step with LayerSpec");
  return kNames;
}

const BatchNorm2dSpec* batch_norm_of(const LayerSpec& spec) {
  if (const auto* fused = std::get_if<BatchNormReluSpec>(&spec)) return &fused->bn;
  if (const auto* fused = std::get_if<BatchNormActivationSpec>(&spec)) return &fused->bn;
  return std::get_if<BatchNorm2dSpec>(&spec);
}

const Conv2dSpec* conv_of(const LayerSpec& spec) {
  if (const auto* fused = std::get_if<Conv2dReluSpec>(&spec)) return &fused->conv;
  return std::get_if<Conv2dSpec>(&spec);
}

bool reads_row_strided_input(const LayerSpec& spec, std::size_t i) {
  return i == 0 && (batch_norm_of(spec) != nullptr || std::holds_alternative<ConcatSpec>(spec));
}

runtime::DType output_dtype(const LayerSpec& spec, runtime::DType input) {
  if (const auto* cast = std::get_if<CastSpec>(&spec)) return cast->to;
  if (const auto* normalize = std::get_if<NormalizeSpec>(&spec)) return normalize->to;
  if (std::holds_alternative<SoftmaxCrossEntropySpec>(spec)) return runtime::DType::F32;
  return input;
}

bool param_read_in_precision(const LayerSpec& spec, std::size_t index) {
  return index == 0 && (conv_of(spec) != nullptr || std::holds_alternative<LinearSpec>(spec));
}

Arity arity(const LayerSpec& spec) {
  if (std::holds_alternative<AddSpec>(spec) || std::holds_alternative<ConcatSpec>(spec)) {
    return {2, Arity::kUnbounded};
  }
  if (const auto* fused = std::get_if<BatchNormReluSpec>(&spec)) {
    return fused->residual ? Arity{2, 2} : Arity{1, 1};
  }
  if (std::holds_alternative<MulSpec>(spec)) return {2, 2};
  return {1, 1};
}

BackwardNeeds backward_needs(const LayerSpec& spec) {
  return std::visit(Overloaded{
                        [](const Conv2dSpec&) {
                          return BackwardNeeds{true, false};
                        },
                        [](const BatchNorm2dSpec&) {
                          return BackwardNeeds{true, false};
                        },
                        [](const ReluSpec&) {
                          return BackwardNeeds{false, true};
                        },
                        [](const MaxPool2dSpec&) {
                          return BackwardNeeds{true, false};
                        },  // re-finds the arg-max
                        [](const LinearSpec&) {
                          return BackwardNeeds{true, false};
                        },
                        // x for the batch norm; the residual chain's ReLU mask from y, the
                        // plain chain's from x renormalized; never the residual.
                        [](const BatchNormReluSpec& f) {
                          return BackwardNeeds{false, f.residual, true};
                        },
                        // x for the batch norm and, renormalized, the activation's derivative.
                        [](const BatchNormActivationSpec&) {
                          return BackwardNeeds{true, false};
                        },
                        // x for the weight gradient, y for the ReLU's mask.
                        [](const Conv2dReluSpec&) {
                          return BackwardNeeds{true, true};
                        },
                        [](const SoftmaxCrossEntropySpec&) {
                          return BackwardNeeds{true, false};
                        },
                        // sigmoid's derivative is y (1 - y), relu6's mask 0 < y < 6 (exactly
                        // 0 < x < 6); the others' need x.
                        [](const SigmoidSpec&) {
                          return BackwardNeeds{false, true};
                        },
                        [](const Relu6Spec&) {
                          return BackwardNeeds{false, true};
                        },
                        [](const SiluSpec&) {
                          return BackwardNeeds{true, false};
                        },
                        [](const GeluSpec&) {
                          return BackwardNeeds{true, false};
                        },
                        [](const HardswishSpec&) {
                          return BackwardNeeds{true, false};
                        },
                        // from x: y rounds to 1 just below x = 3, where the slope is still 1/6.
                        [](const HardsigmoidSpec&) {
                          return BackwardNeeds{true, false};
                        },
                        // each operand's gradient is the other's product with dy.
                        [](const MulSpec&) {
                          return BackwardNeeds{true, false};
                        },
                        // the statistics are taken again from x rather than kept.
                        [](const LayerNorm2dSpec&) {
                          return BackwardNeeds{true, false};
                        },
                        // x for the scale's gradient.
                        [](const LayerScaleSpec&) {
                          return BackwardNeeds{true, false};
                        },
                        [](const auto&) {
                          return BackwardNeeds{false, false};
                        },
                    },
                    spec);
}

Shape infer_output_shape(const LayerSpec& spec, const std::vector<Shape>& inputs) {
  const std::string_view name = type_name(spec);
  const Arity a = arity(spec);
  if (static_cast<int>(inputs.size()) < a.min || static_cast<int>(inputs.size()) > a.max) {
    shape_error(name,
                a.max == a.min ? "exactly " + std::to_string(a.min) + " input(s)"
                               : "at least " + std::to_string(a.min) + " inputs",
                inputs);
  }
  for (const Shape& s : inputs) {
    if (s.rank() < 2 || s.numel() == 0) shape_error(name, "non-empty inputs of rank >= 2", inputs);
  }
  const Shape& x = inputs.front();
  return std::visit(
      Overloaded{
          [&](const Conv2dSpec& c) { return conv_output(name, c, inputs); },
          [&](const Conv2dReluSpec& f) { return conv_output(name, f.conv, inputs); },
          [&](const MaxPool2dSpec& p) {
            expect_rank4(name, inputs);
            return pooled_shape(name, x, p.kernel, p.stride, p.padding, p.ceil_mode, inputs);
          },
          [&](const AvgPool2dSpec& p) {
            expect_rank4(name, inputs);
            return pooled_shape(name, x, p.kernel, p.stride, p.padding, false, inputs);
          },
          [&](const GlobalAvgPoolSpec&) {
            expect_rank4(name, inputs);
            return Shape::nchw(x.n(), x.c(), 1, 1);
          },
          [&](const BatchNorm2dSpec& b) {
            expect_rank4(name, inputs);
            expect_batch_norm(name, b, inputs);
            return x;
          },
          [&](const BatchNormActivationSpec& f) {
            expect_rank4(name, inputs);
            expect_batch_norm(name, f.bn, inputs);
            return x;
          },
          [&](const BatchNormReluSpec& f) {
            if (x.rank() != 4 || (f.residual && inputs[1] != x)) {
              shape_error(name,
                          f.residual ? "two NCHW inputs of identical shape" : "one NCHW input",
                          inputs);
            }
            expect_batch_norm(name, f.bn, inputs);
            return x;
          },
          [&](const LinearSpec& l) {
            if (l.out_features <= 0) shape_error(name, "out_features > 0", inputs);
            return Shape{x.n(), l.out_features};
          },
          [&](const FlattenSpec&) {
            return Shape{x.n(), x.sample_numel()};
          },
          [&](const AddSpec&) {
            for (const Shape& s : inputs) {
              if (s != x) shape_error(name, "inputs of identical shape", inputs);
            }
            return x;
          },
          [&](const ConcatSpec&) {
            std::int64_t channels = 0;
            for (const Shape& s : inputs) {
              if (s.rank() != 4 || s.n() != x.n() || s.h() != x.h() || s.w() != x.w()) {
                shape_error(name, "NCHW inputs that agree in N, H and W", inputs);
              }
              channels += s.c();
            }
            return Shape::nchw(x.n(), channels, x.h(), x.w());
          },
          [&](const DropoutSpec& d) {
            if (!(d.p >= 0.0 && d.p < 1.0)) shape_error(name, "p in [0, 1)", inputs);
            return x;
          },
          [&](const SoftmaxCrossEntropySpec&) { return Shape{1}; },
          [&](const ReluSpec&) { return x; },
          [&](const SiluSpec&) { return x; },
          [&](const GeluSpec&) { return x; },
          [&](const SigmoidSpec&) { return x; },
          [&](const HardswishSpec&) { return x; },
          [&](const Relu6Spec&) { return x; },
          [&](const HardsigmoidSpec&) { return x; },
          [&](const MulSpec&) {
            const Shape& s = inputs[1];
            if (x.rank() != 4 || (s != x && s != Shape::nchw(x.n(), x.c(), 1, 1))) {
              shape_error(name, "an NCHW input and a scale of its shape or N x C x 1 x 1", inputs);
            }
            return x;
          },
          [&](const LayerNorm2dSpec& l) {
            expect_rank4(name, inputs);
            if (!(l.eps > 0.0)) shape_error(name, "eps > 0", inputs);
            return x;
          },
          [&](const LayerScaleSpec&) {
            expect_rank4(name, inputs);
            return x;
          },
          [&](const StochasticDepthSpec& d) {
            if (!(d.p >= 0.0 && d.p < 1.0)) shape_error(name, "p in [0, 1)", inputs);
            return x;
          },
          [&](const CastSpec&) { return x; },
          [&](const NormalizeSpec&) {
            if (x.rank() != 4 || x.c() != 3)
              shape_error(name, "an N x 3 x H x W image batch", inputs);
            return x;
          },
      },
      spec);
}

std::vector<ParamSpec> param_specs(const LayerSpec& spec, const std::vector<Shape>& inputs) {
  if (inputs.empty()) return {};
  const Shape& x = inputs.front();
  if (const Conv2dSpec* c = conv_of(spec)) {
    const std::int64_t in_per_group = x.c() / c->groups;
    const std::int64_t taps = c->kernel[0] * c->kernel[1];
    std::vector<ParamSpec> params = {
        {"weight", Shape{c->out_channels, in_per_group, c->kernel[0], c->kernel[1]},
         ParamKind::Trainable, Init::KaimingNormalFanOut, c->out_channels / c->groups * taps}};
    if (c->bias) {
      params.push_back({"bias", Shape{c->out_channels}, ParamKind::Trainable, Init::UniformFanIn,
                        in_per_group * taps});
    }
    return params;
  }
  if (batch_norm_of(spec) != nullptr) {
    const Shape channels{x.c()};
    return {{"weight", channels, ParamKind::Trainable, Init::Ones, 1},
            {"bias", channels, ParamKind::Trainable, Init::Zeros, 1},
            {"running_mean", channels, ParamKind::Buffer, Init::Zeros, 1},
            {"running_var", channels, ParamKind::Buffer, Init::Ones, 1}};
  }
  if (std::holds_alternative<LayerNorm2dSpec>(spec)) {
    return {{"weight", Shape{x.c()}, ParamKind::Trainable, Init::Ones, 1},
            {"bias", Shape{x.c()}, ParamKind::Trainable, Init::Zeros, 1}};
  }
  if (const auto* scale = std::get_if<LayerScaleSpec>(&spec)) {
    return {{"layer_scale", Shape{x.c(), 1, 1}, ParamKind::Trainable, Init::Constant, 1,
             runtime::Layout::Nchw, scale->init}};
  }
  if (const auto* l = std::get_if<LinearSpec>(&spec)) {
    const std::int64_t in_features = x.sample_numel();
    std::vector<ParamSpec> params = {{"weight", Shape{l->out_features, in_features},
                                      ParamKind::Trainable, Init::UniformFanIn, in_features}};
    if (l->bias) {
      params.push_back(
          {"bias", Shape{l->out_features}, ParamKind::Trainable, Init::UniformFanIn, in_features});
    }
    return params;
  }
  return {};
}

}  // namespace vdnn::layers
