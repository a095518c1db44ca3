// Chart: the frame every chart of report.html shares (title, legend, tinted plot area, y axis with
// nice ticks) and the bookkeeping that tells a screenshot check which series colours to look for.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tools/compare/Svg.hpp"

namespace vdnn::tools {

/// Tick values 0, s, 2s, ... up to the first multiple of s at or above `max_value`, where the
/// step s is 1, 2, 2.5 or 5 times a power of ten chosen to give about `target_count` intervals.
/// `max_value` <= 0 gives {0, 1}.
std::vector<double> nice_ticks(double max_value, int target_count = 5);

enum class LegendKind : std::uint8_t { Swatch, Line, DashedLine, Cross };

struct LegendEntry {
  std::string label;
  std::string colour;
  LegendKind kind = LegendKind::Swatch;
};

struct ChartSpec {
  std::string name;  // data-chart of the <svg>, e.g. "throughput": how tests and checks refer to it
  std::string title;
  std::vector<LegendEntry> legend;
  std::string frame_colour;  // the plot area's background; unique per chart (screenshot check)
  double width = 1100.0;
  double height = 440.0;
  double margin_bottom = 64.0;  // room for the x labels under the plot
};

/// A series shape must cover at least this many square pixels for the chart to name its colour
/// in data-expect-colors: smaller ones could vanish under a label or a marker.
inline constexpr double kMinExpectedArea = 400.0;

/// Draws the title, the legend (a <g class="legend">) and the plot area on construction; the
/// caller then sets the y axis and draws series and labels. Not thread-safe.
class Chart {
 public:
  explicit Chart(const ChartSpec& spec);

  Svg& svg() { return svg_; }
  const Box& plot() const { return plot_; }

  /// Grid lines and tick labels from 0 to a nice value >= max_value. Ticks are nice in units of
  /// `unit` (e.g. 2^30 for GiB) and labelled as value/unit followed by `suffix`.
  void y_axis(double max_value, double unit, std::string_view suffix, std::string_view title);
  /// The pixel row of `value` on the y axis (y_axis() first).
  double y(double value) const;
  /// The value at the top of the y axis (y_axis() first).
  double y_max() const { return y_max_; }

  /// A dashed line at `budget_bytes` from x `left` to `right`, labelled "budget <bytes>".
  void budget_line(std::uint64_t budget_bytes, double left, double right);

  /// A filled rectangle of a data series; its area counts towards the colour's expected pixels.
  void series_rect(const Box& box, const std::string& colour);
  /// A filled polygon of a data series covering `area` square pixels.
  void series_polygon(const std::vector<Point>& points, const std::string& colour, double area);

  /// The whole <svg>, with the axis lines on top and data-expect-colors naming every series
  /// colour drawn over at least kMinExpectedArea.
  std::string finish();

 private:
  void draw_legend(const std::vector<LegendEntry>& entries, double top);

  Svg svg_;
  Box plot_;
  double y_max_ = 1.0;
  double legend_bottom_ = 0.0;
  std::map<std::string, double> series_area_;
  std::vector<std::string> series_order_;
};

}  // namespace vdnn::tools
