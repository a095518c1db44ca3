// MoveReasons: why each feature map of a plan leaves the device, offloaded (to which tier) or
// rebuilt, with what its copy and its rebuild cost under the plan's cost model: `vdnn plan`'s
// "moves" table and JSON (Note [Automatic placement]).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/CostModel.hpp"
#include "graph/Graph.hpp"
#include "graph/Plan.hpp"

namespace vdnn::graph {

/// One map that leaves the device between its last forward reader and its first backward one.
struct MoveReason {
  std::string tensor;
  Placement placement = Placement::Offloaded;  // Offloaded or Recomputed
  Tier tier = Tier::Host;                      // where an offloaded map waits (Host otherwise)
  std::uint64_t bytes = 0;
  /// Its offload or prefetch over that tier's link, the slower one (a rebuilt map's: over the
  /// peer link where the plan has a peer tier, as auto priced it).
  double copy_seconds = 0.0;
  double rebuild_seconds = 0.0;  // its producer's forward once more (infinite for the input)
  std::string why;
};

/// The maps `plan` offloads or rebuilds, in production order, each with its costs under `costs`
/// and the reason: for `auto`, the cheaper way, or a copy that runs beside compute where a
/// rebuild would lengthen the compute stream; for a fixed policy, the policy's rule.
std::vector<MoveReason> explain_moves(const Graph& graph, const Plan& plan, const CostModel& costs);

/// The table of explain_moves() ("moves: none" when nothing leaves the device).
std::string format_moves(const std::vector<MoveReason>& moves);

}  // namespace vdnn::graph
