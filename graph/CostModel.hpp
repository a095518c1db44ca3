// CostModel: what one training step costs on a device, per layer and per copied byte: the input of
// the `auto` planner and of the step-time model (Note [Cost model] in docs/ARCHITECTURE.md).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/Graph.hpp"
#include "graph/Plan.hpp"

namespace vdnn::graph {

/// Device seconds of one node's forward and backward, and (measured costs) the workspace bytes
/// of the algorithms they were measured with.
struct LayerCost {
  double forward = 0.0;
  double backward = 0.0;
  std::uint64_t forward_workspace = 0;
  std::uint64_t backward_workspace = 0;
};

struct CostModel {
  std::vector<LayerCost> layers;  // per node
  double device_to_host = 0.0;    // bytes per second of an offload copy
  double host_to_device = 0.0;    // bytes per second of a prefetch copy (and the upload)
  /// Bytes per second of a copy to or from the peer pool, each way, and the seconds each such copy
  /// takes besides its bytes (the copy engine's start: a 4 MiB copy between two H200s runs at about
  /// 0.8 of the link, a 392 MiB one at its full rate; Note [Peer tier]).
  double peer_link = 0.0;
  double peer_copy_latency = 0.0;
  double gap = 0.0;    // seconds between two compute-stream operations (launches)
  std::string source;  // "estimated", "measured", or the cache file it came from

  double forward(NodeId node) const { return layers.at(static_cast<std::size_t>(node)).forward; }
  double backward(NodeId node) const { return layers.at(static_cast<std::size_t>(node)).backward; }
  /// Sum of the forward times (the window that hides offload copies).
  double forward_seconds() const;
  /// Seconds of an offload (`to_device` false) or a prefetch copy of `bytes` to or from `tier`; a
  /// peer link not measured (0) is taken to be the host's.
  double copy_seconds(Tier tier, bool to_device, double bytes) const {
    if (tier == Tier::Peer && peer_link > 0.0) return peer_copy_latency + bytes / peer_link;
    return bytes / (to_device ? host_to_device : device_to_host);
  }
  /// The slower of a map's two copies over `tier`'s link: what moving it costs where a link is
  /// busy.
  double slower_copy_seconds(Tier tier, double bytes) const {
    return std::max(copy_seconds(tier, false, bytes), copy_seconds(tier, true, bytes));
  }
};

/// Rough costs from arithmetic and bytes alone, at an H200's rates: for planning without a
/// measurement (`vdnn plan`) and in tests. Forward: FLOPs at 65 TFLOP/s plus bytes read and
/// written at 2.5 TB/s; backward twice that; copies at 55 GB/s to the host and 396 GB/s to a peer
/// (NVLink between two H200s, cudaMemcpyPeerAsync), 3 us more per peer copy.
CostModel estimate_costs(const Graph& graph);

/// What a measured cost model is valid for: the network's layers and shapes, the batch, the
/// backend and device, and the kernel choices. Equal keys, equal costs.
struct CostKey {
  std::string network;  // the graph's name
  std::int64_t batch = 0;
  std::string device;  // e.g. "cuda:NVIDIA H200" or "cpu"
  bool deterministic = false;
  bool tf32 = true;
  std::uint64_t structure = 0;   // hash of every node's name, type, inputs and output shape
  std::uint64_t algorithms = 0;  // LayerSet::algorithm_key(): the algorithm each layer runs
};
CostKey cost_key(const Graph& graph, const std::string& device, bool deterministic, bool tf32);

/// Where measured cost models are kept between runs (models::CostCacheDir writes JSON files).
/// load() returns an empty model (no layers) when it has none for the key.
class CostCache {
 public:
  virtual ~CostCache() = default;
  virtual CostModel load(const CostKey& key) = 0;
  virtual void store(const CostKey& key, const CostModel& costs) = 0;
};

}  // namespace vdnn::graph
