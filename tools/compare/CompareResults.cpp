// Names of the compare results' enumerations, as results.json, results.csv and the report say them.
#include "tools/compare/CompareResults.hpp"

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

}  // namespace vdnn::tools
