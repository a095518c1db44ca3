// The per-layer memory timeline chart of report.html, in the manner of the vDNN paper's figures:
// device bytes after each forward and backward action, with the offloaded bytes stacked on top.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/compare/CompareResults.hpp"
#include "tools/compare/PolicyPalette.hpp"

namespace vdnn::tools {

/// Consecutive timeline points drawn as one x position: points [first, last], with the largest
/// device bytes and the largest device + offloaded bytes among them.
struct TimelineBucket {
  std::size_t first = 0;
  std::size_t last = 0;
  std::uint64_t device_bytes = 0;
  std::uint64_t total_bytes = 0;  // device + offloaded
};

/// `points` in at most `max_buckets` buckets of (nearly) equal length, keeping each bucket's
/// maxima so that no peak is lost; one bucket per point when there are few enough.
std::vector<TimelineBucket> downsample_timeline(const std::vector<MemoryPoint>& points,
                                                std::size_t max_buckets);

/// At most this many x positions are drawn, whatever the number of points.
inline constexpr std::size_t kMaxTimelineBuckets = 1500;

/// One <svg> element: device bytes as a filled area, offloaded bytes stacked on top, the budget
/// as a dashed line, forward and backward separated, some layer names as x ticks.
/// `timeline.points` must not be empty.
std::string timeline_chart(const MemoryTimeline& timeline);

}  // namespace vdnn::tools
