// Cost models in the setup cache: each entry's value is {"key": {...}, "device_to_host",
// "host_to_device", "gap", ["peer_link", "peer_copy_latency",] "layers": [[forward, backward,
// forward workspace, backward workspace], ...]}, seconds, bytes per second and bytes; `vdnn plan
// --costs` reads either form.
#include "models/train/CostCacheDir.hpp"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

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

// The model in a value's JSON; an empty model when a field is missing or out of range.
graph::CostModel parse_costs(const Json& j) {
  if (!j.is_object()) return {};
  graph::CostModel costs;
  try {
    costs.device_to_host = j.at("device_to_host").get<double>();
    costs.host_to_device = j.at("host_to_device").get<double>();
    costs.gap = j.at("gap").get<double>();
    // Only entries measured with a peer tier have one (Note [Peer tier]).
    if (j.contains("peer_link")) costs.peer_link = j.at("peer_link").get<double>();
    if (j.contains("peer_copy_latency")) {
      costs.peer_copy_latency = j.at("peer_copy_latency").get<double>();
    }
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
  if (!(costs.device_to_host > 0.0 && costs.host_to_device > 0.0 && costs.gap >= 0.0 &&
        costs.peer_link >= 0.0 && costs.peer_copy_latency >= 0.0)) {
    return {};
  }
  return costs;
}

std::string hex(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(value));
  return text;
}

// A cost file's JSON: a setup cache file's value (when its checksum holds) or the file itself.
Json read_cost_json(const std::filesystem::path& path) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error || size > runtime::kDiskCacheMaxFileBytes) return Json();
  std::ifstream in(path, std::ios::binary);
  if (!in) return Json();
  const Json j = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  const auto value = j.is_object() ? j.find("value") : j.end();
  if (!j.is_object() || value == j.end()) return j;
  const auto checksum = j.find("checksum");
  if (!value->is_string() || checksum == j.end() || !checksum->is_string() ||
      *checksum != runtime::cache_checksum(value->get<std::string>())) {
    return Json();
  }
  return Json::parse(value->get<std::string>(), nullptr, /*allow_exceptions=*/false);
}

}  // namespace

std::string cost_cache_key(const graph::CostKey& key) {
  return "format " + std::to_string(kFormat) + "; network " + key.network + "; batch " +
         std::to_string(key.batch) + "; device " + key.device + "; deterministic " +
         (key.deterministic ? "1" : "0") + "; tf32 " + (key.tf32 ? "1" : "0") + "; structure " +
         hex(key.structure) + "; algorithms " + hex(key.algorithms);
}

graph::CostModel read_cost_file(const std::filesystem::path& path, const graph::Graph& graph) {
  graph::CostModel costs = parse_costs(read_cost_json(path));
  if (costs.layers.size() != graph.nodes().size()) {
    throw runtime::InvalidArgument(path.string() +
                                   ": expected a cost file of the setup cache (vdnn train, "
                                   "--cost-cache) for " +
                                   graph.name() + " (" + std::to_string(graph.nodes().size()) +
                                   " layers)");
  }
  costs.source = "file " + path.string();
  return costs;
}

graph::CostModel CostCacheDir::load(const graph::CostKey& key) {
  const std::string cache_key = cost_cache_key(key);
  const std::optional<std::string> text = cache_->load(kCostsKind, cache_key);
  if (!text) return {};
  const Json j = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  graph::CostModel costs;
  if (j.is_object() && j.contains("key") && j.at("key") == key_json(key)) costs = parse_costs(j);
  const std::filesystem::path file = cache_->file(kCostsKind, cache_key);
  if (costs.layers.empty()) {
    cache_->warn("ignoring cache file " + file.string() + ": not a cost model for this key");
    return {};
  }
  costs.source = "cache " + file.string();
  return costs;
}

void CostCacheDir::store(const graph::CostKey& key, const graph::CostModel& costs) {
  Json layers = Json::array();
  for (const graph::LayerCost& c : costs.layers) {
    layers.push_back({c.forward, c.backward, c.forward_workspace, c.backward_workspace});
  }
  Json j{{"key", key_json(key)},
         {"device_to_host", costs.device_to_host},
         {"host_to_device", costs.host_to_device},
         {"gap", costs.gap},
         {"layers", layers}};
  if (costs.peer_link > 0.0) {
    j["peer_link"] = costs.peer_link;
    j["peer_copy_latency"] = costs.peer_copy_latency;
  }
  cache_->store(kCostsKind, cost_cache_key(key), j.dump());
}

}  // namespace vdnn::models
