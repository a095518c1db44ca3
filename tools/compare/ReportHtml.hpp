// report.html of `vdnn compare`: one self-contained page (inline SVG charts, no scripts, no
// external resources) rendered from CompareResults.
#pragma once

#include <string>

#include "tools/compare/CompareResults.hpp"

namespace vdnn::tools {

/// The whole HTML document: a header (network, device, mode), a table of every cell, and the
/// charts: throughput and peak memory per policy (when there are cells), the search's answer per
/// policy (when results.searches is not empty) and the memory timeline (when results.timeline
/// has points). Each chart's <svg> carries data-frame-color (its plot background) and
/// data-expect-colors (the series colours it drew) for tests/tools/report_screenshot.py.
/// All text from the results is escaped. Pure: no I/O, does not throw except std::bad_alloc.
std::string render_report_html(const CompareResults& results);

}  // namespace vdnn::tools
