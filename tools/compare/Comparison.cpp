// Runs compare cells in sequence and keeps results.csv, results.json, report.html (and the trace)
// up to date after each.
#include "tools/compare/Comparison.hpp"

#include <cstdio>
#include <utility>

#include "graph/Planner.hpp"
#include "runtime/ByteSize.hpp"
#include "tools/cli/TraceWriter.hpp"
#include "tools/compare/ResultsFiles.hpp"

namespace vdnn::tools {
namespace {

std::string describe(const CellSpec& spec) {
  std::string text = spec.policy + " " + spec.precision + " batch " + std::to_string(spec.batch);
  if (spec.depth != 0) text += " depth " + std::to_string(spec.depth);
  if (!spec.budget.empty()) text += " under " + spec.budget;
  return text;
}

std::string outcome(const CellResult& r) {
  char text[160];
  if (r.status == CellStatus::Ok) {
    std::snprintf(text, sizeof text, "%.1f img/s, %.1f ms/iter, peak %s", r.images_per_s,
                  r.ms_per_iter, runtime::format_bytes(r.measured_peak_bytes).c_str());
    return text;
  }
  return std::string(cell_status_name(r.status)) + ": " + r.message;
}

// The deeper, or else larger, of two cells of the timeline policy gives the timeline.
bool bigger(const CellResult& a, const CellResult& b) {
  return a.depth != b.depth ? a.depth > b.depth : a.batch >= b.batch;
}

}  // namespace

Comparison::Comparison(CompareResults header, ComparisonSetup setup)
    : results_(std::move(header)), setup_(std::move(setup)) {}

CellResult Comparison::run(const graph::NetworkDef& def, const CellSpec& spec) {
  const auto number = static_cast<std::int64_t>(results_.cells.size()) + 1;
  if (setup_.planned_cells > 0) {
    std::fprintf(stderr, "compare: cell %lld/%lld: %s (%lld left after it)\n",
                 static_cast<long long>(number), static_cast<long long>(setup_.planned_cells),
                 describe(spec).c_str(), static_cast<long long>(setup_.planned_cells - number));
  } else {
    std::fprintf(stderr, "compare: cell %lld: %s\n", static_cast<long long>(number),
                 describe(spec).c_str());
  }
  CellOutcome o = run_cell(def, spec, setup_.cells, static_cast<int>(number));
  std::fprintf(stderr, "compare:   %s\n", outcome(o.result).c_str());
  const auto timeline_series = [&](const CellResult& c) {
    return c.policy == setup_.timeline_policy && c.precision == setup_.timeline_precision;
  };
  const bool timeline_cell = o.timeline && timeline_series(o.result);
  const CellResult* previous = nullptr;
  for (const CellResult& c : results_.cells) {
    if (c.status == CellStatus::Ok && timeline_series(c)) previous = &c;
  }
  if (timeline_cell && (previous == nullptr || bigger(o.result, *previous))) {
    results_.timeline = std::move(o.timeline);
  }
  for (nlohmann::json& event : o.trace) trace_.push_back(std::move(event));
  results_.cells.push_back(o.result);
  write();
  return o.result;
}

void Comparison::add_search(const SearchResult& search) {
  results_.searches.push_back(search);
  write();
}

void Comparison::write() const {
  write_results(setup_.out, results_);
  if (!setup_.trace.empty()) write_trace(setup_.trace, trace_);
}

void Comparison::check_outcome() const {
  const CellResult* failed = nullptr;
  std::int64_t fitted = 0;
  for (const CellResult& c : results_.cells) {
    if (c.status == CellStatus::Ok) ++fitted;
    if (c.status == CellStatus::Failed && failed == nullptr) failed = &c;
  }
  if (failed != nullptr) {
    throw runtime::Error("a cell failed (" + failed->policy + " " + failed->precision + " batch " +
                         std::to_string(failed->batch) + "): " + failed->message +
                         "; the other cells are in " + setup_.out.string());
  }
  if (fitted == 0 && !results_.cells.empty()) {
    throw graph::DoesNotFit("no cell fits: " + results_.cells.front().message +
                                "; every cell's reason is in " +
                                (setup_.out / "results.csv").string(),
                            0, 0, 0);
  }
}

}  // namespace vdnn::tools
