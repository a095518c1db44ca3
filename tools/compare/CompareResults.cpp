// Names of the compare results' enumerations and series, as results.json, results.csv and the
// report say them.
#include "tools/compare/CompareResults.hpp"

#include <algorithm>

namespace vdnn::tools {

const char* cell_status_name(CellStatus status) noexcept {
  switch (status) {
    case CellStatus::Ok:
      return "ok";
    case CellStatus::DoesNotFit:
      return "does-not-fit";
    case CellStatus::Failed:
      return "failed";
  }
  return "?";
}

const char* compare_mode_name(CompareMode mode) noexcept {
  switch (mode) {
    case CompareMode::Matrix:
      return "matrix";
    case CompareMode::MaxBatch:
      return "max-batch";
    case CompareMode::DepthSweep:
      return "depth-sweep";
  }
  return "?";
}

std::vector<std::string> precisions_of(const CompareResults& results) {
  std::vector<std::string> names;
  const auto add = [&](const std::string& name) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  };
  for (const CellResult& cell : results.cells) add(cell.precision);
  for (const SearchResult& search : results.searches) add(search.precision);
  return names;
}

std::string series_label(const std::string& policy, const std::string& precision,
                         bool several_precisions) {
  return several_precisions ? policy + " " + precision : policy;
}

}  // namespace vdnn::tools
