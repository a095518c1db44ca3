// Cost models as JSON files: {"key": {...}, "device_to_host", "host_to_device", "gap",
// "layers": [[forward, backward, forward workspace, backward workspace], ...]}, seconds, bytes per
// second and bytes.
#include "models/train/CostCacheDir.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>

#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

using Json = nlohmann::json;

constexpr int kFormat = 2;

Json key_json(const graph::CostKey& key) {
  return {{"format", kFormat},
          {"network", key.network},
          {"batch", key.batch},
          {"device", key.device},
          {"deterministic", key.deterministic},
          {"tf32", key.tf32},
          {"structure", key.structure},
          {"algorithms", key.algorithms}};
}

// The model in a file's JSON; an empty model when a field is missing or out of range.
graph::CostModel parse_costs(const Json& j) {
  graph::CostModel costs;
  try {
    costs.device_to_host = j.at("device_to_host").get<double>();
    costs.host_to_device = j.at("host_to_device").get<double>();
    costs.gap = j.at("gap").get<double>();
    for (const Json& layer : j.at("layers")) {
      const double forward = layer.at(0).get<double>();
      const double backward = layer.at(1).get<double>();
      if (!(forward >= 0.0 && backward >= 0.0)) return {};
      costs.layers.push_back(
          {forward, backward, layer.at(2).get<std::uint64_t>(), layer.at(3).get<std::uint64_t>()});
    }
  } catch (const Json::exception&) {
    return {};
  }
  if (!(costs.device_to_host > 0.0 && costs.host_to_device > 0.0 && costs.gap >= 0.0)) return {};
  return costs;
}

Json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return in ? Json::parse(in, nullptr, /*allow_exceptions=*/false) : Json();
}

}  // namespace

graph::CostModel read_cost_file(const std::filesystem::path& path, const graph::Graph& graph) {
  const Json j = read_json(path);
  graph::CostModel costs = j.is_object() ? parse_costs(j) : graph::CostModel{};
  if (costs.layers.size() != graph.nodes().size()) {
    throw runtime::InvalidArgument(path.string() +
                                   ": expected a cost file written by vdnn train "
                                   "--cost-cache for " +
                                   graph.name() + " (" + std::to_string(graph.nodes().size()) +
                                   " layers)");
  }
  costs.source = "file " + path.string();
  return costs;
}

CostCacheDir::CostCacheDir(std::filesystem::path dir) : dir_(std::move(dir)) {
  std::error_code error;
  std::filesystem::create_directories(dir_, error);
  if (error) {
    throw runtime::Error("cannot create the cost cache directory " + dir_.string() + ": " +
                         error.message());
  }
}

graph::CostModel CostCacheDir::load(const graph::CostKey& key) {
  const std::filesystem::path path = dir_ / key.file_name();
  const Json j = read_json(path);
  if (!j.is_object() || j.value("key", Json()) != key_json(key)) return {};
  graph::CostModel costs = parse_costs(j);
  if (!costs.layers.empty()) costs.source = "cache " + path.string();
  return costs;
}

void CostCacheDir::store(const graph::CostKey& key, const graph::CostModel& costs) {
  Json layers = Json::array();
  for (const graph::LayerCost& c : costs.layers) {
    layers.push_back({c.forward, c.backward, c.forward_workspace, c.backward_workspace});
  }
  const Json j{{"key", key_json(key)},
               {"device_to_host", costs.device_to_host},
               {"host_to_device", costs.host_to_device},
               {"gap", costs.gap},
               {"layers", layers}};
  const std::filesystem::path path = dir_ / key.file_name();
  const std::filesystem::path partial = path.string() + ".partial";
  {
    std::ofstream out(partial, std::ios::trunc);
    out << j.dump() << "\n";
    if (!out) throw runtime::Error("cannot write the cost cache file " + partial.string());
  }
  std::error_code error;
  std::filesystem::rename(partial, path, error);
  if (error) throw runtime::Error("cannot write the cost cache file " + path.string());
}

}  // namespace vdnn::models
