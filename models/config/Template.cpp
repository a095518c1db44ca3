// Reading block templates, finding the parameters they use, and substituting parameter values.
#include "models/config/Template.hpp"

#include <algorithm>
#include <set>

namespace vdnn::models::config {
namespace {

// Names and types stay literal, so that names are deterministic and a template's keys can be
// checked against its types.
bool is_literal_key(const std::string& key) { return key == "name" || key == "type"; }

bool is_parameter_reference(const Json& value) {
  return value.is_string() && value.get_ref<const std::string&>().rfind('$', 0) == 0 &&
         value.get_ref<const std::string&>() != kBlockInput;
}

bool is_identifier(const std::string& s) {
  const auto word = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (c >= '0' && c <= '9');
  };
  return !s.empty() && !(s[0] >= '0' && s[0] <= '9') && std::all_of(s.begin(), s.end(), word);
}

// Records every "$param" inside `value` (arrays included) with the place of its first use.
void collect_params(const Cursor& value, std::map<std::string, Cursor>& params) {
  if (value.json().is_array()) {
    for (std::size_t i = 0; i < value.json().size(); ++i) collect_params(value.at(i), params);
  } else if (is_parameter_reference(value.json())) {
    const std::string param = value.as_string().substr(1);
    if (!is_identifier(param)) {
      value.fail(
          "expected \"$in\" or a parameter reference \"$name\" (a letter or '_', then "
          "letters, digits or '_'), got \"$" +
          param + "\"");
    }
    params.emplace(param, value);
  }
}

Json substitute(const Json& value, const ParamValues& values, std::string& note) {
  if (value.is_array()) {
    Json out = Json::array();
    for (const Json& element : value) out.push_back(substitute(element, values, note));
    return out;
  }
  if (!is_parameter_reference(value)) return value;
  const std::string param = value.get<std::string>().substr(1);
  const ParamValue& p = values.at(param);
  note += (note.empty() ? "" : "; ") + ("$" + param + " from " + p.pointer);
  return *p.value;
}

}  // namespace

Template read_template(std::string name, const Cursor& layers) {
  Template tmpl{std::move(name), layers, {}, {}, false};
  const std::size_t count = layers.expect_array(1, kMaxLayers);
  std::set<std::string> seen;
  for (std::size_t i = 0; i < count; ++i) {
    const Cursor layer = layers.at(i);
    if (!layer.json().is_object()) layer.fail("expected a layer (a JSON object)");
    const Cursor name_at = layer.required("name");
    // Dots let a layer carry PyTorch's submodule path ("downsample.0"); expanded names stay
    // unambiguous, as top-level names have none: "BLOCK.REPETITION.LOCAL".
    std::string local = name_at.as_dotted_name();
    if (!seen.insert(local).second) {
      name_at.fail("duplicate layer name \"" + local + "\" in template \"" + tmpl.name + "\"");
    }
    tmpl.layer_names.push_back(std::move(local));
    for (const auto& member : layer.json().items()) {
      if (!is_literal_key(member.key())) collect_params(*layer.find(member.key()), tmpl.params);
    }
  }
  return tmpl;
}

ParamValue read_param_value(const Cursor& value) {
  if (value.json().is_null() || value.json().is_object()) {
    value.fail("expected a parameter value: a string, number, boolean or array");
  }
  return {&value.json(), value.pointer()};
}

Json instantiate(const Template& tmpl, std::size_t index, const ParamValues& values,
                 KeyNotes& notes) {
  notes.clear();
  Json layer = Json::object();
  for (const auto& member : tmpl.layers.json().at(index).items()) {
    std::string note;
    layer[member.key()] =
        is_literal_key(member.key()) ? member.value() : substitute(member.value(), values, note);
    if (!note.empty()) notes[member.key()] = note;
  }
  return layer;
}

}  // namespace vdnn::models::config
