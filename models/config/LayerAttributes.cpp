// The attribute table of each layer type: JSON key, Spec field, whether it is required and its
// range. Defaults are not here: they are the Spec structs' own (layers/LayerSpec.hpp).
#include "models/config/LayerAttributes.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <variant>

namespace vdnn::models::config {
namespace {

using layers::Pair;

template <typename... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <typename... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

template <typename Spec>
using Member = std::variant<std::int64_t Spec::*, Pair Spec::*, bool Spec::*, double Spec::*>;

// One attribute of a Spec: integers and pairs lie in [min_int, kMaxExtent], reals in `real`.
template <typename Spec>
struct Attribute {
  std::string_view key;
  Member<Spec> member;
  bool required = false;
  std::int64_t min_int = 1;
  RealRange real{};
};

// Types without attributes.
template <typename Spec>
std::vector<Attribute<Spec>> attributes(const Spec& /*tag*/) {
  return {};
}

std::vector<Attribute<layers::Conv2dSpec>> attributes(const layers::Conv2dSpec& /*tag*/) {
  using S = layers::Conv2dSpec;
  return {{"out_channels", &S::out_channels, true},
          {"kernel", &S::kernel, true},
          {"stride", &S::stride},
          {"padding", &S::padding, false, 0},
          {"dilation", &S::dilation},
          {"groups", &S::groups},
          {"bias", &S::bias}};
}

std::vector<Attribute<layers::BatchNorm2dSpec>> attributes(const layers::BatchNorm2dSpec& /*tag*/) {
  using S = layers::BatchNorm2dSpec;
  return {{"eps", &S::eps, false, 1, {0.0, 1.0, true, false}},
          {"momentum", &S::momentum, false, 1, {0.0, 1.0, false, false}}};
}

// Max and average pooling share their window attributes. An explicit stride must be positive;
// leaving it out keeps the Spec's "same as kernel".
template <typename Spec>
std::vector<Attribute<Spec>> pool_attributes() {
  return {{"kernel", &Spec::kernel, true},
          {"stride", &Spec::stride},
          {"padding", &Spec::padding, false, 0}};
}

std::vector<Attribute<layers::MaxPool2dSpec>> attributes(const layers::MaxPool2dSpec& /*tag*/) {
  auto attrs = pool_attributes<layers::MaxPool2dSpec>();
  attrs.push_back({"ceil_mode", &layers::MaxPool2dSpec::ceil_mode});
  return attrs;
}

std::vector<Attribute<layers::AvgPool2dSpec>> attributes(const layers::AvgPool2dSpec& /*tag*/) {
  auto attrs = pool_attributes<layers::AvgPool2dSpec>();
  attrs.push_back({"count_include_pad", &layers::AvgPool2dSpec::count_include_pad});
  return attrs;
}

std::vector<Attribute<layers::LinearSpec>> attributes(const layers::LinearSpec& /*tag*/) {
  using S = layers::LinearSpec;
  return {{"out_features", &S::out_features, true}, {"bias", &S::bias}};
}

std::vector<Attribute<layers::DropoutSpec>> attributes(const layers::DropoutSpec& /*tag*/) {
  return {{"p", &layers::DropoutSpec::p, false, 1, {0.0, 1.0, false, true}}};
}

std::vector<Attribute<layers::LayerNorm2dSpec>> attributes(const layers::LayerNorm2dSpec& /*tag*/) {
  return {{"eps", &layers::LayerNorm2dSpec::eps, false, 1, {0.0, 1.0, true, false}}};
}

std::vector<Attribute<layers::LayerScaleSpec>> attributes(const layers::LayerScaleSpec& /*tag*/) {
  return {{"init", &layers::LayerScaleSpec::init, false, 1, {0.0, 1.0, true, false}}};
}

std::vector<Attribute<layers::StochasticDepthSpec>> attributes(
    const layers::StochasticDepthSpec& /*tag*/) {
  return {{"p", &layers::StochasticDepthSpec::p, true, 1, {0.0, 1.0, false, true}}};
}

// A default-constructed spec of the variant alternative `index`.
template <std::size_t... I>
layers::LayerSpec default_spec(std::size_t index, std::index_sequence<I...> /*alternatives*/) {
  static const std::array<layers::LayerSpec, sizeof...(I)> kDefaults = {
      layers::LayerSpec(std::in_place_index<I>)...};
  return kDefaults.at(index);
}

layers::LayerSpec read_type(const Cursor& layer) {
  const Cursor type = layer.required("type");
  const std::string name = type.as_string();
  const auto& known = layers::known_type_names();
  const auto it = std::find(known.begin(), known.end(), name);
  if (it == known.end()) {
    type.fail("unknown layer type \"" + name + "\"; known types: " + join(known));
  }
  return default_spec(static_cast<std::size_t>(it - known.begin()),
                      std::make_index_sequence<std::variant_size_v<layers::LayerSpec>>{});
}

}  // namespace

layers::LayerSpec read_layer_spec(const Cursor& layer,
                                  const std::vector<std::string_view>& structural_keys) {
  layers::LayerSpec spec = read_type(layer);
  std::visit(
      [&](auto& typed) {
        const auto attrs = attributes(typed);
        std::vector<std::string_view> allowed = structural_keys;
        for (const auto& a : attrs) allowed.push_back(a.key);
        layer.expect_object(allowed, "a " + std::string(layers::type_name(spec)) + " layer");
        for (const auto& a : attrs) {
          const std::optional<Cursor> value =
              a.required ? layer.required(std::string(a.key)) : layer.find(std::string(a.key));
          if (!value) continue;
          using Spec = std::decay_t<decltype(typed)>;
          std::visit(
              Overloaded{
                  [&](std::int64_t Spec::*m) { typed.*m = value->as_int(a.min_int, kMaxExtent); },
                  [&](Pair Spec::*m) { typed.*m = value->as_pair(a.min_int, kMaxExtent); },
                  [&](bool Spec::*m) { typed.*m = value->as_bool(); },
                  [&](double Spec::*m) { typed.*m = value->as_real(a.real); },
              },
              a.member);
        }
      },
      spec);
  return spec;
}

}  // namespace vdnn::models::config
