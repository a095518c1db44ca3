// The shared chart frame of report.html: layout, legend, y axis, and the expected-colour
// bookkeeping behind the data-expect-colors attribute (tests/tools/report_screenshot.py).
#include "tools/compare/Chart.hpp"

#include <algorithm>
#include <cmath>

#include "tools/compare/ByteUnits.hpp"
#include "tools/compare/PolicyPalette.hpp"

namespace vdnn::tools {
namespace {

constexpr double kMarginLeft = 84.0;
constexpr double kMarginRight = 24.0;
constexpr double kLegendTop = 42.0;
constexpr double kLegendRow = 20.0;
constexpr double kLegendFontSize = 12.0;

double nice_step(double max_value, int target_count) {
  const double raw = max_value / std::max(target_count, 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double normalized = raw / magnitude;
  for (const double step : {1.0, 2.0, 2.5, 5.0}) {
    if (normalized <= step) return step * magnitude;
  }
  return 10.0 * magnitude;
}

// Rough width of a label in the sans-serif fallback fonts, for laying out the legend.
double text_width(std::string_view text, double size) {
  return 0.6 * size * static_cast<double>(text.size());
}

}  // namespace

std::vector<double> nice_ticks(double max_value, int target_count) {
  if (!(max_value > 0.0) || !std::isfinite(max_value)) return {0.0, 1.0};
  const double step = nice_step(max_value, target_count);
  std::vector<double> ticks{0.0};
  // The tolerance keeps 10 from becoming 10.000001 and asking for one more tick.
  while (ticks.back() < max_value * (1.0 - 1e-9)) {
    ticks.push_back(step * static_cast<double>(ticks.size()));
  }
  return ticks;
}

Chart::Chart(const ChartSpec& spec) : svg_(spec.width, spec.height) {
  svg_.text({kMarginLeft, 24.0}, spec.title, TextStyle{16.0, "start", "#222222", 0.0, true});
  draw_legend(spec.legend, kLegendTop);
  const double top = legend_bottom_ + 12.0;
  plot_ = Box{kMarginLeft, top, spec.width - kMarginLeft - kMarginRight,
              spec.height - spec.margin_bottom - top};
  svg_.set_attribute("data-chart", spec.name);
  svg_.set_attribute("data-frame-color", spec.frame_colour);
  svg_.rect(plot_, spec.frame_colour);
}

void Chart::draw_legend(const std::vector<LegendEntry>& entries, double top) {
  svg_.begin_group("legend");
  double x = kMarginLeft;
  double y = top;
  for (const LegendEntry& entry : entries) {
    const double width = 26.0 + text_width(entry.label, kLegendFontSize) + 18.0;
    if (x > kMarginLeft && x + width > svg_.width() - kMarginRight) {
      x = kMarginLeft;
      y += kLegendRow;
    }
    const Point mid{x + 9.0, y - 4.0};
    switch (entry.kind) {
      case LegendKind::Swatch:
        svg_.rect(Box{x, y - 10.0, 18.0, 12.0}, entry.colour);
        break;
      case LegendKind::Line:
      case LegendKind::DashedLine:
        svg_.line({x, mid.y}, {x + 18.0, mid.y},
                  Stroke{entry.colour, 2.0, entry.kind == LegendKind::DashedLine});
        break;
      case LegendKind::Cross:
        svg_.text({mid.x, y}, "\u00d7", TextStyle{16.0, "middle", entry.colour});
        break;
    }
    svg_.text({x + 24.0, y}, entry.label, TextStyle{kLegendFontSize});
    x += width;
  }
  svg_.end_group();
  legend_bottom_ = y + 6.0;
}

void Chart::y_axis(double max_value, double unit, std::string_view suffix, std::string_view title) {
  const std::vector<double> ticks = nice_ticks(max_value / unit);
  y_max_ = ticks.back() * unit;
  for (const double tick : ticks) {
    const double row = y(tick * unit);
    svg_.line({plot_.x, row}, {plot_.right(), row}, Stroke{"#DDDDDD", 1.0, false});
    svg_.line({plot_.x - 5.0, row}, {plot_.x, row}, Stroke{});
    svg_.text({plot_.x - 8.0, row + 4.0}, format_number(tick, 2) + std::string(suffix),
              TextStyle{11.0, "end"});
  }
  const Point at{18.0, plot_.y + plot_.height / 2.0};
  svg_.text(at, title, TextStyle{12.0, "middle", "#222222", -90.0});
}

double Chart::y(double value) const { return plot_.bottom() - value / y_max_ * plot_.height; }

void Chart::budget_line(std::uint64_t budget_bytes, double left, double right) {
  const double row = y(static_cast<double>(budget_bytes));
  svg_.line({left, row}, {right, row}, Stroke{kBudgetColour, 1.5, true});
  svg_.text({right - 2.0, row - 5.0}, "budget " + format_bytes(budget_bytes),
            TextStyle{11.0, "end", kBudgetColour, 0.0, false, true});
}

void Chart::series_rect(const Box& box, const std::string& colour) {
  svg_.rect(box, colour);
  series_polygon({}, colour, box.width * box.height);
}

void Chart::series_polygon(const std::vector<Point>& points, const std::string& colour,
                           double area) {
  svg_.polygon(points, colour);
  if (series_area_.count(colour) == 0) series_order_.push_back(colour);
  series_area_[colour] += area;
}

std::string Chart::finish() {
  const Stroke axis{"#444444", 1.0, false};
  svg_.line({plot_.x, plot_.y}, {plot_.x, plot_.bottom()}, axis);
  svg_.line({plot_.x, plot_.bottom()}, {plot_.right(), plot_.bottom()}, axis);
  std::string expected;
  for (const std::string& colour : series_order_) {
    if (series_area_[colour] < kMinExpectedArea) continue;
    expected += (expected.empty() ? "" : " ") + colour;
  }
  svg_.set_attribute("data-expect-colors", expected);
  return svg_.str();
}

}  // namespace vdnn::tools
