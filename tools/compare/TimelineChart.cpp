// Draws one iteration's memory timeline: downsampling to a bounded number of x positions,
// stacked device and host areas, the forward/backward split and thinned layer-name ticks.
#include "tools/compare/TimelineChart.hpp"

#include <algorithm>

#include "tools/compare/ByteUnits.hpp"
#include "tools/compare/Chart.hpp"

namespace vdnn::tools {
namespace {

constexpr double kTickSpacing = 70.0;  // pixels between layer-name labels, at least
constexpr std::size_t kMaxLabelChars = 18;

std::string shortened(const std::string& name) {
  if (name.size() <= kMaxLabelChars) return name;
  return name.substr(0, kMaxLabelChars - 1) + "\u2026";
}

// The x pixel of the left edge of point `index`, over `count` points.
double index_x(const Box& plot, double index, std::size_t count) {
  return plot.x + index / static_cast<double>(count) * plot.width;
}

// The edge of a band through every bucket's `value`: a step per bucket while buckets are at
// least 2 px wide, else one point per bucket (narrower steps would only double the SVG's size).
template <typename Value>
std::vector<Point> band_edge(const Chart& chart, const std::vector<TimelineBucket>& buckets,
                             std::size_t count, Value value) {
  const bool steps = static_cast<double>(buckets.size()) * 2.0 <= chart.plot().width;
  std::vector<Point> edge;
  for (const TimelineBucket& bucket : buckets) {
    const double left = index_x(chart.plot(), static_cast<double>(bucket.first), count);
    const double right = index_x(chart.plot(), static_cast<double>(bucket.last + 1), count);
    const double row = chart.y(static_cast<double>(value(bucket)));
    if (steps) {
      edge.insert(edge.end(), {{left, row}, {right, row}});
    } else {
      edge.push_back({(left + right) / 2.0, row});
    }
  }
  return edge;
}

// The filled area between `lower(bucket)` and `upper(bucket)`, when it covers any pixels.
template <typename Lower, typename Upper>
void draw_band(Chart& chart, const std::vector<TimelineBucket>& buckets, std::size_t count,
               const std::string& colour, Lower lower, Upper upper) {
  std::vector<Point> outline = band_edge(chart, buckets, count, upper);
  const std::vector<Point> bottom = band_edge(chart, buckets, count, lower);
  double area = 0.0;  // the steps' area; close enough for the expected-colour threshold
  for (std::size_t i = 0; i < outline.size(); ++i) {
    const double width = i + 1 < outline.size() ? outline[i + 1].x - outline[i].x : 0.0;
    area += width * (bottom[i].y - outline[i].y);
  }
  outline.insert(outline.end(), bottom.rbegin(), bottom.rend());
  if (area > 0.0) chart.series_polygon(outline, colour, area);
}

void draw_phases(Chart& chart, const std::vector<MemoryPoint>& points) {
  const Box& plot = chart.plot();
  const auto first_backward = static_cast<std::size_t>(
      std::find_if(points.begin(), points.end(), [](const MemoryPoint& p) { return p.backward; }) -
      points.begin());
  const double split = index_x(plot, static_cast<double>(first_backward), points.size());
  const TextStyle phase{12.0, "middle", "#333333", 0.0, true};
  if (first_backward > 0)
    chart.svg().text({(plot.x + split) / 2.0, plot.y + 16.0}, "forward", phase);
  if (first_backward < points.size()) {
    chart.svg().text({(split + plot.right()) / 2.0, plot.y + 16.0}, "backward", phase);
  }
  if (first_backward > 0 && first_backward < points.size()) {
    chart.svg().line({split, plot.y}, {split, plot.bottom()}, Stroke{"#333333", 1.5, false});
  }
}

void draw_layer_ticks(Chart& chart, const std::vector<MemoryPoint>& points) {
  const Box& plot = chart.plot();
  const std::size_t count = points.size();
  const auto slots = static_cast<std::size_t>(plot.width / kTickSpacing);
  const std::size_t labels = std::clamp<std::size_t>(slots, 1, count);
  chart.svg().begin_group("x-ticks");
  for (std::size_t k = 0; k < labels; ++k) {
    const std::size_t index = labels == 1 ? 0 : k * (count - 1) / (labels - 1);
    const double x = index_x(plot, static_cast<double>(index) + 0.5, count);
    chart.svg().line({x, plot.bottom()}, {x, plot.bottom() + 5.0}, Stroke{});
    chart.svg().text({x + 3.0, plot.bottom() + 14.0}, shortened(points[index].layer),
                     TextStyle{10.0, "end", "#222222", -35.0});
  }
  chart.svg().end_group();
  chart.svg().text({plot.x + plot.width / 2.0, chart.svg().height() - 8.0},
                   "action (forward, then backward), labelled by layer", TextStyle{12.0, "middle"});
}

}  // namespace

std::vector<TimelineBucket> downsample_timeline(const std::vector<MemoryPoint>& points,
                                                std::size_t max_buckets) {
  const std::size_t count = points.size();
  const std::size_t buckets = std::min(count, std::max<std::size_t>(max_buckets, 1));
  std::vector<TimelineBucket> out;
  out.reserve(buckets);
  for (std::size_t b = 0; b < buckets; ++b) {
    TimelineBucket bucket{b * count / buckets, (b + 1) * count / buckets - 1, 0, 0};
    for (std::size_t i = bucket.first; i <= bucket.last; ++i) {
      const MemoryPoint& p = points[i];
      bucket.device_bytes = std::max(bucket.device_bytes, p.device_bytes);
      bucket.total_bytes = std::max(bucket.total_bytes, p.device_bytes + p.offloaded_bytes);
    }
    out.push_back(bucket);
  }
  return out;
}

std::string timeline_chart(const MemoryTimeline& timeline) {
  const std::string title = "Memory timeline of one iteration: " + timeline.policy + " " +
                            timeline.precision + ", batch " + std::to_string(timeline.batch);
  ChartSpec spec{
      "timeline",
      title,
      {{"on device", kTimelineDeviceColour}, {"offloaded to host", kTimelineOffloadedColour}},
      kTimelineFrame};
  if (timeline.budget_bytes != 0)
    spec.legend.push_back({"budget", kBudgetColour, LegendKind::DashedLine});
  spec.height = 500.0;
  spec.margin_bottom = 100.0;
  Chart chart(spec);
  const std::vector<TimelineBucket> buckets =
      downsample_timeline(timeline.points, kMaxTimelineBuckets);
  double max_bytes = static_cast<double>(timeline.budget_bytes);
  for (const TimelineBucket& b : buckets)
    max_bytes = std::max(max_bytes, static_cast<double>(b.total_bytes));
  const ByteUnit unit = byte_unit_for(max_bytes);
  // Headroom above the highest point for the "forward" and "backward" labels.
  chart.y_axis(max_bytes * 1.1, unit.bytes, std::string(" ") + unit.name, "bytes");
  const std::size_t count = timeline.points.size();
  draw_band(
      chart, buckets, count, kTimelineDeviceColour,
      [](const TimelineBucket&) { return std::uint64_t{0}; },
      [](const TimelineBucket& b) { return b.device_bytes; });
  draw_band(
      chart, buckets, count, kTimelineOffloadedColour,
      [](const TimelineBucket& b) { return b.device_bytes; },
      [](const TimelineBucket& b) { return b.total_bytes; });
  if (timeline.budget_bytes != 0) {
    chart.budget_line(timeline.budget_bytes, chart.plot().x, chart.plot().right());
  }
  draw_phases(chart, timeline.points);
  draw_layer_ticks(chart, timeline.points);
  return chart.finish();
}

}  // namespace vdnn::tools
