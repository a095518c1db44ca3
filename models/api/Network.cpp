// vdnn::Network and vdnn::NetworkBuilder: networks for the public API, as graph::NetworkDef.
#include <vdnn/Error.hpp>
#include <vdnn/Network.hpp>

#include <algorithm>
#include <set>
#include <utility>

#include "graph/Graph.hpp"
#include "models/ConfigLoader.hpp"
#include "models/api/NetworkDefinition.hpp"
#include "models/api/PublicErrors.hpp"

namespace vdnn {
namespace {

// Letters, digits, '_', '-' and non-leading, non-trailing dots: names end up in checkpoints,
// traces and JSON, and PyTorch's module paths ("layer1.0.conv1") must be expressible.
bool valid_layer_name(const std::string& name) {
  const auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  };
  return !name.empty() && name.front() != '.' && name.back() != '.' &&
         std::all_of(name.begin(), name.end(), allowed) && name != graph::kInputName;
}

Network make_network(graph::NetworkDef def, std::string config_json) {
  return Network(std::make_shared<const Network::Definition>(
      Network::Definition{std::move(def), std::move(config_json)}));
}

}  // namespace

Network::Network(std::shared_ptr<const Definition> definition) noexcept
    : definition_(std::move(definition)) {}

Network Network::from_file(const std::string& path) {
  return api::translate_errors([&] {
    std::string text = models::read_config_file(path);
    graph::NetworkDef def = models::parse_network(text, path);
    return make_network(std::move(def), std::move(text));
  });
}

Network Network::from_json(const std::string& json_text, const std::string& source_name) {
  return api::translate_errors(
      [&] { return make_network(models::parse_network(json_text, source_name), json_text); });
}

const std::string& Network::name() const noexcept { return definition_->def.name; }

std::vector<std::string> Network::layer_names() const {
  std::vector<std::string> names;
  for (const graph::LayerDef& layer : definition_->def.layers) names.push_back(layer.name);
  return names;
}

std::int64_t Network::parameter_count() const {
  return api::translate_errors(
      [&] { return graph::Graph::build(definition_->def, 1).trainable_parameters(); });
}

struct NetworkBuilder::State {
  graph::NetworkDef def;
  std::set<std::string> names;

  Tensor add_layer(const std::string& name, layers::LayerSpec spec, const std::vector<Tensor>& xs) {
    if (!valid_layer_name(name)) {
      throw InvalidArgument(def.name + ": layer name '" + name +
                            "' is not valid (letters, digits, '_', '-' and inner dots; not '" +
                            graph::kInputName + "')");
    }
    if (!names.insert(name).second) {
      throw InvalidArgument(def.name + ": a layer named '" + name + "' exists already");
    }
    graph::LayerDef layer{
        name, std::move(spec), {}, def.name + " (built in code) at layer " + name};
    for (const Tensor& x : xs) {
      if (x.layer != graph::kInputName && names.count(x.layer) == 0) {
        names.erase(name);
        throw InvalidArgument(def.name + ": layer '" + name + "' reads '" + x.layer +
                              "', which is not a layer of this network");
      }
      layer.inputs.push_back(x.layer);
    }
    def.layers.push_back(std::move(layer));
    return Tensor{name};
  }
};

namespace {

void expect_positive(const std::string& what, std::int64_t value) {
  if (value <= 0) {
    throw InvalidArgument(what + " must be positive, got " + std::to_string(value));
  }
}

void expect_non_negative(const std::string& what, std::int64_t value) {
  if (value < 0) {
    throw InvalidArgument(what + " must not be negative, got " + std::to_string(value));
  }
}

layers::Pair square(std::int64_t v) { return {v, v}; }

// A max or average pooling spec with square windows, checked.
template <class PoolSpec>
PoolSpec pool_spec(const std::string& name, std::int64_t kernel, std::int64_t stride,
                   std::int64_t padding) {
  expect_positive(name + ": kernel", kernel);
  expect_positive(name + ": stride", stride);
  expect_non_negative(name + ": padding", padding);
  PoolSpec spec;
  spec.kernel = square(kernel);
  spec.stride = square(stride);
  spec.padding = square(padding);
  return spec;
}

}  // namespace

NetworkBuilder::NetworkBuilder(const std::string& name, std::int64_t channels, std::int64_t height,
                               std::int64_t width, std::int64_t num_classes)
    : state_(std::make_unique<State>()) {
  if (name.empty()) throw InvalidArgument("a network needs a name");
  expect_positive(name + ": channels", channels);
  expect_positive(name + ": height", height);
  expect_positive(name + ": width", width);
  expect_positive(name + ": num_classes", num_classes);
  graph::NetworkDef& def = state_->def;
  def.name = name;
  def.channels = channels;
  def.height = height;
  def.width = width;
  def.num_classes = num_classes;
  def.origin = name + " (built in code)";
}

NetworkBuilder::NetworkBuilder(NetworkBuilder&&) noexcept = default;
NetworkBuilder& NetworkBuilder::operator=(NetworkBuilder&&) noexcept = default;
NetworkBuilder::~NetworkBuilder() = default;

NetworkBuilder::State& NetworkBuilder::state() {
  if (!state_) throw InvalidArgument("this NetworkBuilder has built its network already");
  return *state_;
}

Tensor NetworkBuilder::input() const { return Tensor{graph::kInputName}; }

Tensor NetworkBuilder::conv2d(const std::string& name, const Tensor& x, std::int64_t out_channels,
                              std::int64_t kernel, std::int64_t stride, std::int64_t padding,
                              bool bias) {
  expect_positive(name + ": out_channels", out_channels);
  expect_positive(name + ": kernel", kernel);
  expect_positive(name + ": stride", stride);
  expect_non_negative(name + ": padding", padding);
  layers::Conv2dSpec spec;
  spec.out_channels = out_channels;
  spec.kernel = square(kernel);
  spec.stride = square(stride);
  spec.padding = square(padding);
  spec.bias = bias;
  return state().add_layer(name, spec, {x});
}

Tensor NetworkBuilder::batchnorm2d(const std::string& name, const Tensor& x) {
  return state().add_layer(name, layers::BatchNorm2dSpec{}, {x});
}

Tensor NetworkBuilder::relu(const std::string& name, const Tensor& x) {
  return state().add_layer(name, layers::ReluSpec{}, {x});
}

Tensor NetworkBuilder::maxpool2d(const std::string& name, const Tensor& x, std::int64_t kernel,
                                 std::int64_t stride, std::int64_t padding) {
  return state().add_layer(name, pool_spec<layers::MaxPool2dSpec>(name, kernel, stride, padding),
                           {x});
}

Tensor NetworkBuilder::avgpool2d(const std::string& name, const Tensor& x, std::int64_t kernel,
                                 std::int64_t stride, std::int64_t padding) {
  return state().add_layer(name, pool_spec<layers::AvgPool2dSpec>(name, kernel, stride, padding),
                           {x});
}

Tensor NetworkBuilder::global_avgpool(const std::string& name, const Tensor& x) {
  return state().add_layer(name, layers::GlobalAvgPoolSpec{}, {x});
}

Tensor NetworkBuilder::flatten(const std::string& name, const Tensor& x) {
  return state().add_layer(name, layers::FlattenSpec{}, {x});
}

Tensor NetworkBuilder::linear(const std::string& name, const Tensor& x, std::int64_t out_features) {
  expect_positive(name + ": out_features", out_features);
  layers::LinearSpec spec;
  spec.out_features = out_features;
  return state().add_layer(name, spec, {x});
}

Tensor NetworkBuilder::dropout(const std::string& name, const Tensor& x, double p) {
  if (!(p >= 0.0 && p < 1.0)) {
    throw InvalidArgument(name + ": dropout probability must be in [0, 1), got " +
                          std::to_string(p));
  }
  return state().add_layer(name, layers::DropoutSpec{p}, {x});
}

Tensor NetworkBuilder::add(const std::string& name, const std::vector<Tensor>& xs) {
  if (xs.size() < 2) throw InvalidArgument(name + ": add needs at least two inputs");
  return state().add_layer(name, layers::AddSpec{}, xs);
}

Tensor NetworkBuilder::concat(const std::string& name, const std::vector<Tensor>& xs) {
  if (xs.size() < 2) throw InvalidArgument(name + ": concat needs at least two inputs");
  return state().add_layer(name, layers::ConcatSpec{}, xs);
}

Network NetworkBuilder::softmax_cross_entropy(const std::string& name, const Tensor& logits) {
  state().add_layer(name, layers::SoftmaxCrossEntropySpec{}, {logits});
  graph::NetworkDef def = std::move(state_->def);
  state_.reset();
  api::translate_errors([&] { graph::Graph::build(def, 1); });
  return make_network(std::move(def), "");
}

}  // namespace vdnn
