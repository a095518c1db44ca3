// Lays out generated configs one layer a line, as the shipped configs are, and closes their
// descriptions with the parameter count of the network they build.
#include "models/ConfigPrinter.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "graph/Graph.hpp"
#include "models/ConfigLoader.hpp"
#include "runtime/ByteSize.hpp"

namespace vdnn::models {
namespace {

using Json = nlohmann::ordered_json;

// A value on one line, with a space after each ':' and ',' as the shipped configs have.
std::string inline_json(const Json& value) {
  if (!value.is_structured()) return value.dump();
  std::string text = value.is_object() ? "{" : "[";
  bool first = true;
  for (const auto& item : value.items()) {
    if (!first) text += ", ";
    first = false;
    if (value.is_object()) text += Json(item.key()).dump() + ": ";
    text += inline_json(item.value());
  }
  return text + (value.is_object() ? "}" : "]");
}

// `items` (one per line) between `open` and `close`, the items at `indent`.
std::string lines(const std::string& open, const std::vector<std::string>& items,
                  const std::string& indent, const std::string& close) {
  std::string text = open + "\n";
  for (std::size_t i = 0; i < items.size(); ++i) {
    text += indent + items[i] + (i + 1 < items.size() ? ",\n" : "\n");
  }
  return text + indent.substr(2) + close;
}

std::vector<std::string> inline_items(const Json& array) {
  std::vector<std::string> items;
  for (const Json& item : array) items.push_back(inline_json(item));
  return items;
}

}  // namespace

std::string format_config(const Json& config) {
  std::vector<std::string> members;
  for (const auto& member : config.items()) {
    const std::string key = Json(member.key()).dump() + ": ";
    if (member.key() == "templates") {
      std::vector<std::string> templates;
      for (const auto& tmpl : member.value().items()) {
        templates.push_back(Json(tmpl.key()).dump() + ": " +
                            lines("[", inline_items(tmpl.value()), "      ", "]"));
      }
      members.push_back(key + lines("{", templates, "    ", "}"));
    } else if (member.key() == "layers") {
      members.push_back(key + lines("[", inline_items(member.value()), "    ", "]"));
    } else {
      members.push_back(key + inline_json(member.value()));
    }
  }
  return lines("{", members, "  ", "}") + "\n";
}

std::string format_config_with_count(Json config) {
  const std::string name = config["name"].get<std::string>();
  const graph::Graph g = graph::Graph::build(parse_network(format_config(config), name), 1);
  config["description"] =
      config["description"].get<std::string>() + "; " +
      runtime::format_count(static_cast<std::uint64_t>(g.trainable_parameters())) + " parameters.";
  return format_config(config);
}

}  // namespace vdnn::models
