// Writes EfficientNet configs as torchvision's efficientnet.py builds the network: its stage table,
// its channel and depth rounding, its module names, its stochastic-depth schedule.
#include "models/EfficientNetGenerator.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>

#include "models/ConfigPrinter.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

using Json = nlohmann::ordered_json;

constexpr double kMaxMultiplier = 8.0;
constexpr std::int64_t kMinResolution = 32;
constexpr std::int64_t kMaxResolution = 2048;
constexpr std::int64_t kMaxClasses = std::int64_t{1} << 20;
constexpr double kStochasticDepth = 0.2;  // torchvision's stochastic_depth_prob

// One row of torchvision's B0 table (MBConvConfig before scaling).
struct StageRow {
  std::int64_t expand;
  std::int64_t kernel;
  std::int64_t stride;
  std::int64_t in;
  std::int64_t out;
  std::int64_t blocks;
};
constexpr std::array<StageRow, 7> kStages = {{{1, 3, 1, 32, 16, 1},
                                              {6, 3, 2, 16, 24, 2},
                                              {6, 5, 2, 24, 40, 2},
                                              {6, 3, 2, 40, 80, 3},
                                              {6, 5, 1, 80, 112, 3},
                                              {6, 5, 2, 112, 192, 4},
                                              {6, 3, 1, 192, 320, 1}}};

struct Preset {
  const char* name;
  double width;
  double depth;
  std::int64_t resolution;
  double dropout;
  bool tf_batch_norm;
};
constexpr std::array<Preset, 8> kPresets = {{{"b0", 1.0, 1.0, 224, 0.2, false},
                                             {"b1", 1.0, 1.1, 240, 0.2, false},
                                             {"b2", 1.1, 1.2, 288, 0.3, false},
                                             {"b3", 1.2, 1.4, 300, 0.3, false},
                                             {"b4", 1.4, 1.8, 380, 0.4, false},
                                             {"b5", 1.6, 2.2, 456, 0.4, true},
                                             {"b6", 1.8, 2.6, 528, 0.5, true},
                                             {"b7", 2.0, 3.1, 600, 0.5, true}}};

// _make_divisible(v, 8) with torchvision's min_value = 8.
std::int64_t make_divisible(double v) {
  constexpr std::int64_t kDivisor = 8;
  std::int64_t rounded = std::max<std::int64_t>(
      kDivisor, static_cast<std::int64_t>(v + kDivisor / 2.0) / kDivisor * kDivisor);
  if (static_cast<double>(rounded) < 0.9 * v) rounded += kDivisor;
  return rounded;
}

void check(bool ok, const std::string& rule, const std::string& value) {
  if (!ok) throw runtime::InvalidArgument("EfficientNet " + rule + "; " + value + " is not");
}

void check_options(const EfficientNetOptions& o) {
  if (!o.preset.empty()) efficientnet_preset(o.preset);  // throws for an unknown one
  // The negated forms refuse NaN too.
  check(o.width > 0.0 && o.width <= kMaxMultiplier, "width must be in (0, 8]",
        Json(o.width).dump());
  check(o.depth > 0.0 && o.depth <= kMaxMultiplier, "depth must be in (0, 8]",
        Json(o.depth).dump());
  check(o.resolution >= kMinResolution && o.resolution <= kMaxResolution,
        "resolution must be in [32, 2048] pixels", std::to_string(o.resolution));
  check(o.dropout >= 0.0 && o.dropout < 1.0, "dropout must be in [0, 1)", Json(o.dropout).dump());
  check(o.num_classes >= 2 && o.num_classes <= kMaxClasses, "num_classes must be in [2, 2^20]",
        std::to_string(o.num_classes));
}

// The layer list under construction: each layer reads the previous one unless told otherwise.
class Builder {
 public:
  explicit Builder(bool tf_batch_norm) : tf_batch_norm_(tf_batch_norm) {}

  void add(const std::string& name, const char* type, Json attributes = Json::object()) {
    Json l = {{"name", name}, {"type", type}};
    l.update(attributes);
    layers_.push_back(std::move(l));
    last_ = name;
  }

  // torchvision's Conv2dNormActivation: conv (no bias) "P.0", BN "P.1", then SiLU "P.2" if `act`.
  void conv_bn(const std::string& prefix, std::int64_t out, std::int64_t kernel,
               std::int64_t stride, std::int64_t groups, bool act) {
    Json attributes = {{"out_channels", out}, {"kernel", kernel}};
    if (stride != 1) attributes["stride"] = stride;
    if (kernel > 1) attributes["padding"] = (kernel - 1) / 2;
    if (groups != 1) attributes["groups"] = groups;
    add(prefix + ".0", "conv2d", attributes);
    add(prefix + ".1", "batchnorm2d",
        tf_batch_norm_ ? Json{{"eps", 1e-3}, {"momentum", 0.01}} : Json::object());
    if (act) add(prefix + ".2", "silu");
  }

  // torchvision's SqueezeExcitation "P" over `channels` through `squeeze` (SiLU, then sigmoid).
  void squeeze_excitation(const std::string& prefix, std::int64_t channels, std::int64_t squeeze) {
    const std::string input = last_;
    add(prefix + ".avgpool", "global_avgpool");
    add(prefix + ".fc1", "conv2d", {{"out_channels", squeeze}, {"kernel", 1}, {"bias", true}});
    add(prefix + ".activation", "silu");
    add(prefix + ".fc2", "conv2d", {{"out_channels", channels}, {"kernel", 1}, {"bias", true}});
    add(prefix + ".scale_activation", "sigmoid");
    add(prefix, "mul", {{"inputs", Json::array({input, last_})}});
  }

  const std::string& last() const { return last_; }
  Json take() { return std::move(layers_); }

 private:
  bool tf_batch_norm_;
  Json layers_ = Json::array();
  std::string last_;
};

// One MBConv "features.S.B" from `in` to `out` channels.
void add_mbconv(Builder& b, const std::string& name, const StageRow& row, std::int64_t in,
                std::int64_t out, std::int64_t stride, double drop) {
  const std::string input = b.last();
  const std::int64_t expanded = make_divisible(static_cast<double>(in * row.expand));
  int index = 0;
  const auto next = [&] { return name + ".block." + std::to_string(index++); };
  if (expanded != in) b.conv_bn(next(), expanded, 1, 1, 1, true);
  b.conv_bn(next(), expanded, row.kernel, stride, expanded, true);
  b.squeeze_excitation(next(), expanded, std::max<std::int64_t>(1, in / 4));
  b.conv_bn(next(), out, 1, 1, 1, false);
  if (stride == 1 && in == out) {
    b.add(name + ".stochastic_depth", "stochastic_depth", {{"p", drop}});
    b.add(name + ".add", "add", {{"inputs", Json::array({input, b.last()})}});
  }
}

std::string number(double v) { return Json(v).dump(); }

// A multiplier in a network name, which allows no '.': 1.2 -> "1p2".
std::string name_part(double v) {
  std::string text = number(v);
  std::replace(text.begin(), text.end(), '.', 'p');
  return text;
}

// The `vdnn gen efficientnet` arguments that make `o`: a preset and what overrides it, or width,
// depth and resolution and what differs from the defaults.
std::string gen_arguments(const EfficientNetOptions& o) {
  const EfficientNetOptions base =
      o.preset.empty() ? EfficientNetOptions{} : efficientnet_preset(o.preset);
  std::string text = o.preset.empty()
                         ? "--width " + number(o.width) + " --depth " + number(o.depth) +
                               " --resolution " + std::to_string(o.resolution)
                         : "--preset " + o.preset;
  if (!o.preset.empty() && o.resolution != base.resolution) {
    text += " --resolution " + std::to_string(o.resolution);
  }
  if (o.dropout != base.dropout) text += " --dropout " + number(o.dropout);
  if (o.num_classes != base.num_classes) text += " --num-classes " + std::to_string(o.num_classes);
  return text;
}

std::string description(const EfficientNetOptions& o, const std::vector<std::int64_t>& stages) {
  std::string blocks;
  for (const std::int64_t s : stages) blocks += (blocks.empty() ? "" : "/") + std::to_string(s);
  return (o.preset.empty() ? "EfficientNet of width " + number(o.width) + " and depth " +
                                 number(o.depth) + " (torchvision's EfficientNet class)"
                           : "torchvision efficientnet_" + o.preset) +
         " for " + std::to_string(o.resolution) + "x" + std::to_string(o.resolution) +
         " images, made by `vdnn gen efficientnet " + gen_arguments(o) +
         "`: a 3x3 stride-2 stem, stages of " + blocks +
         " MBConv blocks (expand 1x1 conv-BN-SiLU, depthwise conv-BN-SiLU, squeeze-excitation, "
         "project 1x1 conv-BN; stochastic depth to 0.2 and a residual add where the stride is 1 "
         "and the channels agree), a 1x1 conv-BN-SiLU head, dropout " +
         number(o.dropout) + " and the classifier; batch norm " +
         (o.tf_batch_norm ? "eps 1e-3, momentum 0.01" : "eps 1e-5, momentum 0.1") +
         "; tensor names as torchvision's state_dict";
}

}  // namespace

EfficientNetOptions efficientnet_preset(const std::string& preset) {
  for (const Preset& p : kPresets) {
    if (preset != p.name) continue;
    EfficientNetOptions o;
    o.width = p.width;
    o.depth = p.depth;
    o.resolution = p.resolution;
    o.dropout = p.dropout;
    o.tf_batch_norm = p.tf_batch_norm;
    o.preset = p.name;
    return o;
  }
  throw runtime::InvalidArgument("unknown EfficientNet preset \"" + preset +
                                 "\"; presets: b0, b1, b2, b3, b4, b5, b6, b7");
}

std::vector<std::int64_t> efficientnet_stages(double depth) {
  std::vector<std::int64_t> stages;
  for (const StageRow& row : kStages) {
    stages.push_back(static_cast<std::int64_t>(std::ceil(static_cast<double>(row.blocks) * depth)));
  }
  return stages;
}

std::int64_t efficientnet_channels(std::int64_t channels, double width) {
  return make_divisible(static_cast<double>(channels) * width);
}

std::string generate_efficientnet_config(const EfficientNetOptions& o) {
  check_options(o);
  const std::vector<std::int64_t> stages = efficientnet_stages(o.depth);
  std::int64_t total = 0;
  for (const std::int64_t s : stages) total += s;
  Builder b(o.tf_batch_norm);
  b.conv_bn("features.0", efficientnet_channels(kStages[0].in, o.width), 3, 2, 1, true);
  std::int64_t block_id = 0;
  std::int64_t channels = efficientnet_channels(kStages[0].in, o.width);
  for (std::size_t s = 0; s < kStages.size(); ++s) {
    const std::int64_t out = efficientnet_channels(kStages[s].out, o.width);
    for (std::int64_t i = 0; i < stages[s]; ++i, ++block_id) {
      // torchvision's order of operations, so p is bitwise its float.
      const double drop =
          kStochasticDepth * static_cast<double>(block_id) / static_cast<double>(total);
      add_mbconv(b, "features." + std::to_string(s + 1) + "." + std::to_string(i), kStages[s],
                 channels, out, i == 0 ? kStages[s].stride : 1, drop);
      channels = out;
    }
  }
  b.conv_bn("features." + std::to_string(kStages.size() + 1), 4 * channels, 1, 1, 1, true);
  b.add("avgpool", "global_avgpool");
  b.add("flatten", "flatten");
  b.add("classifier.0", "dropout", {{"p", o.dropout}});
  b.add("classifier.1", "linear", {{"out_features", o.num_classes}});
  b.add("loss", "softmax_cross_entropy");
  Json config;
  config["$schema"] = "schema/network.schema.json";
  config["description"] = description(o, stages);
  config["name"] = o.preset.empty()
                       ? "efficientnet_w" + name_part(o.width) + "_d" + name_part(o.depth)
                       : "efficientnet_" + o.preset;
  config["input"] = {{"channels", 3}, {"height", o.resolution}, {"width", o.resolution}};
  config["num_classes"] = o.num_classes;
  config["layers"] = b.take();
  return format_config_with_count(std::move(config));
}

}  // namespace vdnn::models
