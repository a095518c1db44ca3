// Expands a network config into a graph::NetworkDef: reads the header, the templates and the
// layer list, instantiates each block once per repetition, and resolves every input reference to
// the name of the layer that produces it.
#include "models/ConfigLoader.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "models/config/Cursor.hpp"
#include "models/config/JsonReader.hpp"
#include "models/config/LayerAttributes.hpp"
#include "models/config/Template.hpp"

namespace vdnn::models {
namespace {

using config::Cursor;
using config::Json;

constexpr std::int64_t kMaxRepeat = 100000;
constexpr std::size_t kMaxInputs = 4096;
constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t{64} << 20;

const std::vector<std::string_view> kNetworkKeys = {"$schema",     "description", "name",  "input",
                                                    "num_classes", "templates",   "layers"};
const std::vector<std::string_view> kLayerKeys = {"name", "type", "inputs"};
const std::vector<std::string_view> kTemplateLayerKeys = {"name", "type", "inputs", "when"};
const std::vector<std::string_view> kBlockKeys = {"name",   "template", "repeat",
                                                  "params", "first",    "inputs"};

// Maps the reference at a cursor to the name of the layer whose output it means.
using Resolver = std::function<std::string(const Cursor& ref)>;

// The entry's "inputs", each resolved; by default, the previous layer's output.
std::vector<std::string> read_inputs(const Cursor& entry, const std::string& previous,
                                     const Resolver& resolve) {
  const std::optional<Cursor> inputs = entry.find("inputs");
  if (!inputs) return {previous};
  const std::size_t count = inputs->expect_array(1, kMaxInputs);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < count; ++i) names.push_back(resolve(inputs->at(i)));
  return names;
}

void check_arity(const Cursor& layer, const layers::LayerSpec& spec, std::size_t count) {
  const layers::Arity arity = layers::arity(spec);
  if (count >= static_cast<std::size_t>(arity.min) &&
      count <= static_cast<std::size_t>(arity.max)) {
    return;
  }
  const std::string message =
      std::string(layers::type_name(spec)) + " takes " +
      (arity.max == 1 ? std::string("exactly 1 input")
                      : "at least " + std::to_string(arity.min) + " inputs") +
      ", got " + std::to_string(count);
  if (const std::optional<Cursor> inputs = layer.find("inputs")) inputs->fail(message);
  layer.fail(message + " (by default, the previous layer); list them in \"inputs\"");
}

// "stage2.17": the block's name and the repetition index, unpadded as PyTorch's nn.Sequential
// indices are ("layer1.0.conv1"), so that tensor names match torchvision's state_dict keys.
std::string repetition_prefix(const std::string& block, std::int64_t index) {
  return block + "." + std::to_string(index);
}

template <typename Value>
std::vector<std::string_view> keys_of(const std::map<std::string, Value>& map) {
  std::vector<std::string_view> keys;
  keys.reserve(map.size());
  for (const auto& entry : map) keys.push_back(entry.first);
  return keys;
}

class NetworkBuilder {
 public:
  NetworkBuilder(const std::string& source, const Json& document, std::size_t max_layers)
      : root_(source, document, ""), max_layers_(max_layers) {}

  graph::NetworkDef build() {
    root_.expect_object(kNetworkKeys, "a network config");
    for (const char* text_key : {"$schema", "description"}) {
      if (const std::optional<Cursor> text = root_.find(text_key)) text->as_string();
    }
    def_.origin = root_.source();
    def_.name = root_.required("name").as_name();
    const Cursor input = root_.required("input");
    input.expect_object({"channels", "height", "width"}, "the input shape");
    def_.channels = input.required("channels").as_int(1, config::kMaxExtent);
    def_.height = input.required("height").as_int(1, config::kMaxExtent);
    def_.width = input.required("width").as_int(1, config::kMaxExtent);
    def_.num_classes = root_.required("num_classes").as_int(2, config::kMaxExtent);
    read_templates();

    const Cursor entries = root_.required("layers");
    const std::size_t count = entries.expect_array(1, max_layers_);
    std::vector<std::string> names;
    for (std::size_t i = 0; i < count; ++i) names.push_back(read_entry_name(entries.at(i)));
    for (std::size_t i = 0; i < count; ++i) {
      const Cursor entry = entries.at(i);
      if (entry.find("template")) {
        add_block(entry, names[i]);
      } else if (entry.find("type")) {
        add_layer(entry, names[i]);
      } else {
        entry.fail("missing required key \"type\" (or \"template\" for a block)");
      }
    }
    for (const auto& [name, tmpl] : templates_) {
      if (!tmpl.used) tmpl.layers.fail("template \"" + name + "\" is never used");
    }
    return std::move(def_);
  }

 private:
  void read_templates() {
    const std::optional<Cursor> templates = root_.find("templates");
    if (!templates) return;
    if (!templates->json().is_object()) templates->fail("expected an object of named templates");
    for (const auto& member : templates->json().items()) {
      templates_.emplace(member.key(),
                         config::read_template(member.key(), *templates->find(member.key())));
    }
  }

  // Checks the entry's name (unique, not "input") before any entry is expanded, so that a
  // reference to a later entry can be told apart from an unknown one. A layer's name may be
  // dotted, as a PyTorch module path ("features.1.0.block.0"); a block's, the prefix of its
  // repetitions, may not.
  std::string read_entry_name(const Cursor& entry) {
    if (!entry.json().is_object()) entry.fail("expected a layer or a block (a JSON object)");
    const Cursor name_at = entry.required("name");
    std::string name = entry.find("template") ? name_at.as_name() : name_at.as_dotted_name();
    if (name == graph::kInputName) {
      name_at.fail("\"input\" is reserved: it names the network input");
    }
    if (!top_level_names_.insert(name).second) {
      name_at.fail("duplicate layer or block name \"" + name + "\"");
    }
    return name;
  }

  void add_layer(const Cursor& entry, const std::string& name) {
    if (def_.layers.size() == max_layers_) {
      entry.fail("the network would have more than " + std::to_string(max_layers_) + " layers");
    }
    const layers::LayerSpec spec = config::read_layer_spec(entry, kLayerKeys);
    std::vector<std::string> inputs =
        read_inputs(entry, previous_, [this](const Cursor& ref) { return resolve(ref); });
    check_arity(entry, spec, inputs.size());
    claim(entry, name);
    def_.layers.push_back({name, spec, std::move(inputs), entry.origin()});
    previous_ = name;
  }

  void add_block(const Cursor& entry, const std::string& name) {
    entry.expect_object(kBlockKeys, "a block");
    config::Template& tmpl = find_template(entry.required("template"));
    tmpl.used = true;
    const Cursor repeat_at = entry.required("repeat");
    const std::int64_t repeat = repeat_at.as_int(1, kMaxRepeat);
    const std::size_t expanded = static_cast<std::size_t>(repeat) * tmpl.layer_names.size();
    if (def_.layers.size() + expanded > max_layers_) {
      repeat_at.fail("the network would have more than " + std::to_string(max_layers_) + " layers");
    }
    const config::ParamValues params = read_params(entry, tmpl, name);
    const config::ParamValues first = read_first(entry, params);
    const std::vector<std::string> inputs =
        read_inputs(entry, previous_, [this](const Cursor& ref) { return resolve(ref); });
    if (inputs.size() != 1) {
      entry.required("inputs").fail("a block takes exactly 1 input, got " +
                                    std::to_string(inputs.size()));
    }
    std::string output = inputs.front();
    for (std::int64_t r = 0; r < repeat; ++r) {
      output = expand(tmpl, repetition_prefix(name, r), r == 0 ? first : params, output);
    }
    produced_[name] = output;
    previous_ = output;
  }

  // Adds one repetition of `tmpl` reading `input`; returns the name of its output.
  std::string expand(const config::Template& tmpl, const std::string& prefix,
                     const config::ParamValues& values, const std::string& input) {
    std::map<std::string, std::string> local;  // local name -> name of the producing layer
    std::string previous = input;
    config::KeyNotes notes;
    for (std::size_t i = 0; i < tmpl.layer_names.size(); ++i) {
      const std::string name = prefix + "." + tmpl.layer_names[i];
      const Json instance = config::instantiate(tmpl, i, values, notes);
      const Cursor layer(root_.source(), instance, tmpl.layers.at(i).pointer(),
                         "expanded as " + name, &notes);
      const layers::LayerSpec spec = config::read_layer_spec(layer, kTemplateLayerKeys);
      const auto resolve_local = [&](const Cursor& ref) {
        return resolve_in_template(ref, tmpl, i, local, input);
      };
      std::vector<std::string> inputs = read_inputs(layer, previous, resolve_local);
      check_arity(layer, spec, inputs.size());
      const std::optional<Cursor> when = layer.find("when");
      if (when && inputs.size() != 1) {
        when->fail(
            "only a layer with exactly 1 input may have \"when\": left out, it stands for "
            "its input");
      }
      if (!when || when->as_bool()) {
        claim(layer, name);
        def_.layers.push_back({name, spec, std::move(inputs), layer.origin()});
      } else {
        produced_[name] = inputs.front();
      }
      local[tmpl.layer_names[i]] = produced_[name];
      previous = produced_[name];
    }
    return previous;
  }

  // Records the layer `name` as produced: a dotted top-level name may be one a repetition expands
  // to, which the first of the two keeps.
  void claim(const Cursor& layer, const std::string& name) {
    if (!produced_.emplace(name, name).second) {
      layer.fail("duplicate layer name \"" + name + "\" (a layer and a repetition's layer)");
    }
  }

  config::Template& find_template(const Cursor& ref) {
    const std::string name = ref.as_string();
    const auto it = templates_.find(name);
    if (it == templates_.end()) {
      ref.fail("unknown template \"" + name + "\"; defined templates: " +
               (templates_.empty() ? std::string("none") : config::join(keys_of(templates_))));
    }
    return it->second;
  }

  // The block's "params": exactly the parameters its template uses.
  static config::ParamValues read_params(const Cursor& block, const config::Template& tmpl,
                                         const std::string& block_name) {
    config::ParamValues values;
    if (const std::optional<Cursor> params = block.find("params")) {
      params->expect_object(keys_of(tmpl.params),
                            "the parameters of template \"" + tmpl.name + "\"");
      for (const auto& member : params->json().items()) {
        values[member.key()] = config::read_param_value(*params->find(member.key()));
      }
    }
    for (const auto& [param, use] : tmpl.params) {
      if (values.count(param) == 0) {
        Cursor(use.source(), use.json(), use.pointer(),
               "used by block \"" + block_name + "\" at " + block.pointer())
            .fail("undefined parameter $" + param + "; set it in the block's \"params\"");
      }
    }
    return values;
  }

  // The parameters of the first repetition: "params" with the overrides of "first".
  static config::ParamValues read_first(const Cursor& block, const config::ParamValues& params) {
    config::ParamValues first = params;
    if (const std::optional<Cursor> overrides = block.find("first")) {
      overrides->expect_object(keys_of(params),
                               "\"first\" (it overrides parameters set in \"params\")");
      for (const auto& member : overrides->json().items()) {
        first[member.key()] = config::read_param_value(*overrides->find(member.key()));
      }
    }
    return first;
  }

  // A top-level reference: "input", an earlier layer or block, or an expanded layer.
  std::string resolve(const Cursor& ref) const {
    std::string name = ref.as_string();
    if (name == graph::kInputName) return name;
    const auto it = produced_.find(name);
    if (it != produced_.end()) return it->second;
    if (name == config::kBlockInput) {
      ref.fail("\"$in\" (the input of a repetition) is only meaningful inside a template");
    }
    if (top_level_names_.count(name) != 0) {
      ref.fail("\"" + name +
               "\" is not defined before this layer; inputs must refer to earlier layers, which "
               "rules out cycles");
    }
    ref.fail("unknown input \"" + name +
             "\"; an input is \"input\", an earlier layer or block, or an earlier expanded layer "
             "such as \"block.0.layer\"");
  }

  // A reference inside a repetition of a template: "$in" or an earlier layer of the template.
  static std::string resolve_in_template(const Cursor& ref, const config::Template& tmpl,
                                         std::size_t index,
                                         const std::map<std::string, std::string>& local,
                                         const std::string& input) {
    const std::string name = ref.as_string();
    if (name == config::kBlockInput) return input;
    const auto it = local.find(name);
    if (it != local.end()) return it->second;
    const auto& names = tmpl.layer_names;
    const std::vector<std::string_view> earlier(names.begin(), names.begin() + index);
    const std::string options =
        "inside template \"" + tmpl.name + "\" an input is \"$in\" (the input of the repetition)" +
        (earlier.empty() ? std::string() : " or an earlier layer: " + config::join(earlier));
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      ref.fail("\"" + name + "\" is not an earlier layer, which would allow cycles; " + options);
    }
    ref.fail("unknown input \"" + name + "\"; " + options);
  }

  Cursor root_;
  std::size_t max_layers_;
  graph::NetworkDef def_;
  std::map<std::string, config::Template> templates_;
  std::set<std::string> top_level_names_;
  std::map<std::string, std::string> produced_;  // reference -> name of the producing layer
  std::string previous_ = graph::kInputName;
};

}  // namespace

graph::NetworkDef parse_network(const std::string& json_text, const std::string& source_name,
                                std::size_t max_layers) {
  const Json document = config::parse_json(json_text, source_name);
  return NetworkBuilder(source_name, document, std::min(max_layers, config::kMaxLayers)).build();
}

graph::NetworkDef parse_network(const std::string& json_text, const std::string& source_name) {
  return parse_network(json_text, source_name, config::kMaxLayers);
}

std::string read_config_file(const std::string& path) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error) throw ConfigError(path, "", "cannot read the file: " + error.message());
  if (size > kMaxFileBytes) {
    throw ConfigError(path, "",
                      "the file has " + std::to_string(size) +
                          " bytes; a config may have at most " + std::to_string(kMaxFileBytes));
  }
  std::ifstream in(path, std::ios::binary);
  std::string text(static_cast<std::size_t>(size), '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(size))) {
    throw ConfigError(path, "", "cannot read the file");
  }
  return text;
}

graph::NetworkDef load_network(const std::string& path) {
  return parse_network(read_config_file(path), path);
}

}  // namespace vdnn::models
