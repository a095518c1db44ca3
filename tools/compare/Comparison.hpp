// Comparison: the bookkeeping of a `vdnn compare` run: cells run one after another in this
// process, each recorded and written out as it finishes, the progress line, the chosen cell's
// memory timeline, the trace of every cell, and the searches' answers.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "graph/NetworkDef.hpp"
#include "tools/compare/CellRunner.hpp"
#include "tools/compare/CompareResults.hpp"

namespace vdnn::tools {

struct ComparisonSetup {
  std::filesystem::path out;    // results.csv, results.json, report.html go here
  std::string trace;            // Chrome trace of every cell's last step; empty: none
  std::string timeline_policy;  // whose largest cell gives the report's memory timeline,
  std::string timeline_precision = kDefaultPrecision;  // in this precision
  std::int64_t planned_cells = 0;                      // for "N left" (searches: 0, unknown)
  CellSettings cells;
};

/// Not thread-safe; one per run.
class Comparison {
 public:
  Comparison(CompareResults header, ComparisonSetup setup);

  /// Runs the cell (CellRunner), prints the progress line before and its outcome after, adds it
  /// to the results and rewrites the files. Returns the recorded result.
  CellResult run(const graph::NetworkDef& def, const CellSpec& spec);
  /// Records a search's answer and rewrites the files.
  void add_search(const SearchResult& search);
  /// Throws graph::DoesNotFit when no cell fitted, runtime::Error when a cell failed (the files
  /// are complete either way).
  void check_outcome() const;
  const CompareResults& results() const noexcept { return results_; }

 private:
  void write() const;

  CompareResults results_;
  ComparisonSetup setup_;
  nlohmann::json trace_ = nlohmann::json::array();
};

}  // namespace vdnn::tools
