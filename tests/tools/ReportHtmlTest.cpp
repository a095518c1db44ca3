// report.html of vdnn compare: self-contained, one chart per result kind, legends, escaping,
// bounded size for long timelines.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tools/SampleCompareResults.hpp"
#include "tools/compare/PolicyPalette.hpp"
#include "tools/compare/ReportHtml.hpp"
#include "tools/compare/TimelineChart.hpp"

namespace {

using vdnn::test::sample_compare_results;
using vdnn::tools::CompareResults;
using vdnn::tools::render_report_html;

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

// Each <svg>...</svg> element of the page, in order.
std::vector<std::string> svgs(const std::string& html) {
  std::vector<std::string> out;
  for (auto at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) {
    const auto end = html.find("</svg>", at);
    if (end == std::string::npos) break;
    out.push_back(html.substr(at, end - at));
  }
  return out;
}

// The text inside the <g class="legend"> of one chart.
std::string legend_of(const std::string& svg) {
  const auto at = svg.find("<g class=\"legend\">");
  if (at == std::string::npos) return "";
  return svg.substr(at, svg.find("</g>", at) - at);
}

std::string attribute(const std::string& svg, const std::string& name) {
  const std::string key = name + "=\"";
  const auto at = svg.find(key);
  if (at == std::string::npos) return "";
  const auto begin = at + key.size();
  return svg.substr(begin, svg.find('"', begin) - begin);
}

// The number of "x,y" pairs in the polygons of `svg`.
std::size_t polygon_points(const std::string& svg) {
  std::size_t count = 0;
  const std::string key = "<polygon";
  for (auto at = svg.find(key); at != std::string::npos; at = svg.find(key, at + 1)) {
    const auto begin = svg.find("points=\"", at) + 8;
    count += count_of(svg.substr(begin, svg.find('"', begin) - begin), ",");
  }
  return count;
}

// The policies of sample_compare_results(), in the order they ran.
std::vector<std::string> sample_policies() { return {"baseline", "vdnn-conv", "vdnn-all"}; }

TEST(ReportHtml, IsSelfContained) {
  const std::string html = render_report_html(sample_compare_results());
  ASSERT_EQ(html.rfind("<!DOCTYPE html>", 0), 0U);
  for (const char* external : {"http", "<script", "<link", "@import", "url(", "<img", "<iframe"}) {
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  }
  EXPECT_NE(html.find("font-family: sans-serif"), std::string::npos);
}

TEST(ReportHtml, OneSvgPerChart) {
  const CompareResults full = sample_compare_results();
  const std::vector<std::string> charts = svgs(render_report_html(full));
  ASSERT_EQ(charts.size(), 4U);
  EXPECT_NE(charts[0].find("Throughput"), std::string::npos);
  EXPECT_NE(charts[1].find("Peak device memory"), std::string::npos);
  EXPECT_NE(charts[2].find("Largest batch under 4 GiB"), std::string::npos);
  EXPECT_NE(charts[3].find("Memory timeline"), std::string::npos);
  CompareResults depth = full;
  depth.mode = vdnn::tools::CompareMode::DepthSweep;
  EXPECT_NE(svgs(render_report_html(depth))[2].find("Deepest network under 4 GiB"),
            std::string::npos);
}

TEST(ReportHtml, NoSearchOrTimelineChartWhenAbsent) {
  CompareResults results = sample_compare_results();
  results.searches.clear();
  results.timeline.reset();
  const std::string html = render_report_html(results);
  EXPECT_EQ(svgs(html).size(), 2U);
  EXPECT_EQ(html.find("Largest batch"), std::string::npos);
  EXPECT_EQ(html.find("Memory timeline"), std::string::npos);
  results.timeline = sample_compare_results().timeline;
  EXPECT_EQ(svgs(render_report_html(results)).size(), 3U);
}

TEST(ReportHtml, EveryPolicyInEachLegend) {
  const std::vector<std::string> charts = svgs(render_report_html(sample_compare_results()));
  ASSERT_EQ(charts.size(), 4U);
  for (std::size_t c = 0; c < 3; ++c) {
    const std::string legend = legend_of(charts[c]);
    for (const std::string& policy : sample_policies()) {
      EXPECT_NE(legend.find(">" + policy + "</text>"), std::string::npos) << c << " " << policy;
    }
  }
  EXPECT_NE(legend_of(charts[3]).find("offloaded to host"), std::string::npos);
}

TEST(ReportHtml, ChartsNameTheColoursTheyDraw) {
  const CompareResults results = sample_compare_results();
  const std::vector<std::string> charts = svgs(render_report_html(results));
  ASSERT_EQ(charts.size(), 4U);
  const vdnn::tools::PolicyPalette palette(sample_policies());
  for (std::size_t c = 0; c < 3; ++c) {
    const std::string expected = attribute(charts[c], "data-expect-colors");
    for (const std::string& policy : sample_policies()) {
      EXPECT_NE(expected.find(palette.colour(policy)), std::string::npos) << c << " " << policy;
    }
    EXPECT_FALSE(attribute(charts[c], "data-frame-color").empty());
  }
  const std::string timeline = attribute(charts[3], "data-expect-colors");
  EXPECT_NE(timeline.find(vdnn::tools::kTimelineDeviceColour), std::string::npos);
  EXPECT_NE(timeline.find(vdnn::tools::kTimelineOffloadedColour), std::string::npos);
}

TEST(ReportHtml, PolicyColoursAreStableAndDistinct) {
  const vdnn::tools::PolicyPalette one({"baseline", "mine", "vdnn-all"});
  const vdnn::tools::PolicyPalette other({"theirs", "vdnn-all", "mine", "baseline"});
  EXPECT_EQ(one.colour("vdnn-all"), other.colour("vdnn-all"));
  EXPECT_EQ(one.colour("baseline"), other.colour("baseline"));
  const std::vector<std::string> names = {
      "baseline",     "vdnn-all", "vdnn-conv", "vdnn-dyn", "uvm", "uvm-evict",
      "uvm-prefetch", "auto",     "recompute", "x",        "y"};
  const vdnn::tools::PolicyPalette palette(names);
  std::vector<std::string> colours;
  colours.reserve(names.size());
  for (const std::string& name : names) colours.push_back(palette.colour(name));
  std::sort(colours.begin(), colours.end());
  EXPECT_EQ(std::unique(colours.begin(), colours.end()), colours.end());
}

// Two precisions: each (policy, precision) is a series of its own, named in the legends and
// drawn in its own colour (bf16 paler), and the table has the precision of every cell.
TEST(ReportHtml, EachPrecisionIsASeriesOfItsOwn) {
  CompareResults results = sample_compare_results();
  const std::size_t fp32_cells = results.cells.size();
  for (std::size_t i = 0; i < fp32_cells; ++i) {
    vdnn::tools::CellResult cell = results.cells[i];
    cell.precision = "bf16";
    cell.measured_peak_bytes /= 2;
    results.cells.push_back(cell);
  }
  results.searches.push_back({"vdnn-all", 400, 1500.0, "bf16"});
  const std::string html = render_report_html(results);
  EXPECT_NE(html.find("precision fp32, bf16"), std::string::npos);
  EXPECT_NE(html.find("<th class=\"name\">precision</th>"), std::string::npos);
  EXPECT_EQ(count_of(html, "<td class=\"name\">bf16</td>"), fp32_cells);
  EXPECT_EQ(count_of(html, "<td class=\"name\">fp32</td>"), fp32_cells);
  const std::vector<std::string> charts = svgs(html);
  ASSERT_EQ(charts.size(), 4U);
  const vdnn::tools::PolicyPalette palette(sample_policies());
  for (std::size_t c = 0; c < 3; ++c) {
    const std::string legend = legend_of(charts[c]);
    const std::string expected = attribute(charts[c], "data-expect-colors");
    for (const std::string& policy : sample_policies()) {
      EXPECT_NE(legend.find(">" + policy + " fp32</text>"), std::string::npos) << c << policy;
      if (c < 2 || policy == "vdnn-all") {  // the search found bf16 for vdnn-all only
        EXPECT_NE(legend.find(">" + policy + " bf16</text>"), std::string::npos) << c << policy;
        EXPECT_NE(expected.find(palette.colour(policy, "bf16")), std::string::npos) << c << policy;
      }
    }
  }
  for (const std::string& policy : sample_policies()) {
    EXPECT_EQ(palette.colour(policy, "fp32"), palette.colour(policy));
    EXPECT_NE(palette.colour(policy, "bf16"), palette.colour(policy));
  }
  EXPECT_EQ(palette.colour("vdnn-all", "bf16"), "#88BB99");  // #117733 halfway to white
}

TEST(ReportHtml, DoesNotFitIsShown) {
  CompareResults results = sample_compare_results();
  const std::vector<std::string> charts = svgs(render_report_html(results));
  EXPECT_NE(charts[0].find(">does not fit</text>"), std::string::npos);
  EXPECT_NE(charts[1].find(">does not fit</text>"), std::string::npos);
  results.cells[3].status = vdnn::tools::CellStatus::Ok;
  results.cells[3].images_per_s = 1.0;
  EXPECT_EQ(svgs(render_report_html(results))[0].find(">does not fit</text>"), std::string::npos);
}

TEST(ReportHtml, EscapesNamesFromConfigs) {
  CompareResults results = sample_compare_results();
  const std::string evil_policy = "<b>me&you</b>";
  results.cells[0].policy = evil_policy;
  results.network = "net<script>";
  const std::string html = render_report_html(results);
  EXPECT_EQ(html.find(vdnn::test::kAwkwardLayer), std::string::npos);
  EXPECT_NE(html.find("a&lt;b&amp;&quot;c"), std::string::npos);
  EXPECT_EQ(html.find(evil_policy), std::string::npos);
  EXPECT_NE(legend_of(svgs(html)[0]).find("&lt;b&gt;me&amp;you&lt;/b&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
}

TEST(ReportHtml, LongTimelinesAreDownsampled) {
  const std::string small = render_report_html(sample_compare_results(300));
  const std::string large = render_report_html(sample_compare_results(20000));
  EXPECT_LT(large.size(), 200U * 1024U);
  const std::string timeline = svgs(large)[3];
  // Two bands, each an upper and a lower edge of at most one point per bucket.
  EXPECT_LE(polygon_points(timeline), 4 * vdnn::tools::kMaxTimelineBuckets);
  EXPECT_GT(polygon_points(timeline), vdnn::tools::kMaxTimelineBuckets);
  EXPECT_LE(count_of(timeline.substr(timeline.find("class=\"x-ticks\"")), "<text"), 20U);
  EXPECT_GT(small.size(), 1000U);
}

TEST(ReportHtml, DownsamplingKeepsPeaksAndCoversEveryPoint) {
  std::vector<vdnn::tools::MemoryPoint> points(20000);
  points[12345].device_bytes = 999;
  points[777].offloaded_bytes = 555;
  const auto buckets = vdnn::tools::downsample_timeline(points, 1500);
  ASSERT_EQ(buckets.size(), 1500U);
  EXPECT_EQ(buckets.front().first, 0U);
  EXPECT_EQ(buckets.back().last, points.size() - 1);
  std::uint64_t device = 0;
  std::uint64_t total = 0;
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    if (b > 0) {
      EXPECT_EQ(buckets[b].first, buckets[b - 1].last + 1);
    }
    device = std::max(device, buckets[b].device_bytes);
    total = std::max(total, buckets[b].total_bytes);
  }
  EXPECT_EQ(device, 999U);
  EXPECT_EQ(total, 999U);
  EXPECT_EQ(vdnn::tools::downsample_timeline(points, 30000).size(), points.size());
}

}  // namespace
