// ResultsFiles: results.csv, results.json and report.html of `vdnn compare`, rewritten whole
// after every cell so that a later failure never loses a measured cell.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tools/compare/CompareResults.hpp"

namespace vdnn::tools {

/// The results as results.json holds them.
nlohmann::json results_json(const CompareResults& results);

/// The cells as results.csv holds them: a header line, then one line per cell (RFC 4180 quoting).
std::string results_csv(const CompareResults& results);

/// Writes the three files into `dir`, each to a temporary file first and then renamed over the
/// old one, so a reader (or a crash) never sees a half-written file. Throws runtime::Error.
void write_results(const std::filesystem::path& dir, const CompareResults& results);

}  // namespace vdnn::tools
