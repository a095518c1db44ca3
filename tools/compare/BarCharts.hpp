// The bar charts of report.html: throughput and peak memory per policy (and precision, where the
// run has several: a bf16 series is drawn in its policy's paler colour) over the matrix's cells,
// and the largest batch or deepest network a search found per policy and precision.
#pragma once

#include <string>

#include "tools/compare/CellGrid.hpp"
#include "tools/compare/CompareResults.hpp"
#include "tools/compare/PolicyPalette.hpp"

namespace vdnn::tools {

/// Images/s per policy, grouped by batch (or depth); cells that did not fit or failed show a
/// labelled marker instead of a bar. Returns one <svg> element.
std::string throughput_chart(const CellGrid& grid, const PolicyPalette& palette);

/// Measured peak device memory per policy as bars, the predicted peak as a thin marker on each,
/// and each budget as a labelled dashed line over the groups it applies to. One <svg> element.
std::string peak_memory_chart(const CellGrid& grid, const PolicyPalette& palette);

/// The search's answer per policy: the largest batch (max-batch) or the deepest network (depth
/// sweep) under the cells' budget. `results.searches` must not be empty. One <svg> element.
std::string search_chart(const CompareResults& results, const PolicyPalette& palette);

}  // namespace vdnn::tools
