// Assembles report.html: page skeleton and style, the header, the table of cells, the charts.
#include "tools/compare/ReportHtml.hpp"

#include <string_view>

#include "tools/compare/BarCharts.hpp"
#include "tools/compare/ByteUnits.hpp"
#include "tools/compare/CellGrid.hpp"
#include "tools/compare/PolicyPalette.hpp"
#include "tools/compare/Svg.hpp"
#include "tools/compare/TimelineChart.hpp"

namespace vdnn::tools {
namespace {

// Generic font family only, nothing fetched: the page must render offline.
constexpr std::string_view kStyle = R"(body { font-family: sans-serif; margin: 24px; color: #222; }
h1 { font-size: 22px; margin: 0 0 6px 0; }
p.meta { margin: 0 0 16px 0; color: #444; }
table { border-collapse: collapse; font-size: 12px; margin-bottom: 8px; }
th, td { padding: 3px 7px; border-bottom: 1px solid #ddd; text-align: right; white-space: nowrap; }
th { background: #eee; vertical-align: bottom; }
td.name, th.name { text-align: left; }
span.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 6px; }
td.does-not-fit, td.failed { color: #a33; }
ul.notes { font-size: 12px; color: #444; }
svg { display: block; margin: 18px 0; }
)";

std::string cell(std::string_view text, std::string_view css_class = "") {
  std::string out = css_class.empty() ? "<td>" : "<td class=\"" + std::string(css_class) + "\">";
  return out + escape_xml(text) + "</td>";
}

bool any_depth(const CompareResults& results) {
  for (const CellResult& c : results.cells) {
    if (c.depth != 0) return true;
  }
  return false;
}

std::string table_head(bool depth) {
  std::string row =
      "<tr><th class=\"name\">policy</th><th class=\"name\">precision</th><th>batch</th>"
      "<th>budget</th>";
  if (depth) row += "<th>depth</th>";
  return row +
         "<th class=\"name\">status</th><th>img/s</th><th>ms/iter</th><th>measured<br>peak</th>"
         "<th>predicted<br>peak</th><th>offloaded</th><th>prefetched</th><th>migrated</th>"
         "<th>offload<br>GB/s</th><th>prefetch<br>GB/s</th><th>offload<br>busy %</th>"
         "<th>prefetch<br>busy %</th></tr>\n";
}

std::string table_row(const CellResult& c, bool depth, const PolicyPalette& palette) {
  std::string row = "<tr><td class=\"name\"><span class=\"swatch\" style=\"background:" +
                    escape_xml(palette.colour(c.policy, c.precision)) + "\"></span>" +
                    escape_xml(c.policy) + "</td>" + cell(c.precision, "name") +
                    cell(std::to_string(c.batch)) +
                    cell(c.budget_bytes == 0 ? "none" : format_bytes(c.budget_bytes));
  if (depth) row += cell(std::to_string(c.depth));
  const char* status = cell_status_name(c.status);
  row += "<td class=\"name " + std::string(status) + "\">" + status + "</td>";
  if (c.status != CellStatus::Ok) return row + "<td colspan=\"11\"></td></tr>\n";
  return row + cell(format_number(c.images_per_s, 1)) + cell(format_number(c.ms_per_iter, 2)) +
         cell(format_bytes(c.measured_peak_bytes)) + cell(format_bytes(c.predicted_peak_bytes)) +
         cell(format_bytes(c.offloaded_bytes)) + cell(format_bytes(c.prefetched_bytes)) +
         cell(format_bytes(c.migrated_bytes)) + cell(format_number(c.offload_gbps, 1)) +
         cell(format_number(c.prefetch_gbps, 1)) + cell(format_number(100.0 * c.offload_busy, 0)) +
         cell(format_number(100.0 * c.prefetch_busy, 0)) + "</tr>\n";
}

// Why cells did not fit or failed, under the table (the messages are too long for a column).
std::string notes(const CompareResults& results) {
  std::string items;
  for (const CellResult& c : results.cells) {
    if (c.message.empty()) continue;
    items += "<li>" + escape_xml(c.policy) + " " + escape_xml(c.precision) + ", batch " +
             std::to_string(c.batch) + ": " + escape_xml(c.message) + "</li>\n";
  }
  return items.empty() ? "" : "<ul class=\"notes\">\n" + items + "</ul>\n";
}

std::string cells_table(const CompareResults& results, const PolicyPalette& palette) {
  const bool depth = any_depth(results);
  std::string table = "<table>\n" + table_head(depth);
  for (const CellResult& c : results.cells) table += table_row(c, depth, palette);
  return table + "</table>\n" + notes(results);
}

std::string header(const CompareResults& results) {
  std::string precisions;
  for (const std::string& p : precisions_of(results)) {
    precisions += (precisions.empty() ? "" : ", ") + escape_xml(p);
  }
  return "<h1>vdnn compare: " + escape_xml(results.network) + "</h1>\n<p class=\"meta\">device " +
         escape_xml(results.device) + " &middot; mode " + compare_mode_name(results.mode) +
         (precisions.empty() ? "" : " &middot; precision " + precisions) + " &middot; " +
         std::to_string(results.cells.size()) + " cells</p>\n";
}

std::string charts(const CompareResults& results, const PolicyPalette& palette) {
  std::string out;
  if (!results.cells.empty()) {
    const CellGrid grid = make_cell_grid(results);
    out += throughput_chart(grid, palette) + peak_memory_chart(grid, palette);
  }
  if (!results.searches.empty()) out += search_chart(results, palette);
  if (results.timeline && !results.timeline->points.empty()) {
    out += timeline_chart(*results.timeline);
  }
  return out;
}

}  // namespace

std::string render_report_html(const CompareResults& results) {
  const PolicyPalette palette(policies_of(results));
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>vdnn "
         "compare: " +
         escape_xml(results.network) + "</title>\n<style>\n" + std::string(kStyle) +
         "</style>\n</head>\n<body>\n" + header(results) + cells_table(results, palette) +
         charts(results, palette) + "</body>\n</html>\n";
}

}  // namespace vdnn::tools
