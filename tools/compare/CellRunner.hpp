// CellRunner: one cell of `vdnn compare`: a trainer built, warmed up, timed and torn down, its
// failure to fit recorded rather than thrown, so the comparison goes on.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "graph/NetworkDef.hpp"
#include "tools/cli/RunOptions.hpp"
#include "tools/compare/CompareResults.hpp"

namespace vdnn::tools {

/// Which run a cell is.
struct CellSpec {
  std::string policy;
  std::int64_t batch = 0;
  std::string budget;                         // e.g. "16GiB"; empty: no budget
  std::int64_t depth = 0;                     // depth sweep: the generated network's depth
  std::string precision = kDefaultPrecision;  // "fp32" or "bf16": replaces settings.run.precision
};

/// How every cell runs.
struct CellSettings {
  RunOptions run;           // its precision is each cell's (CellSpec::precision)
  std::int64_t warmup = 2;  // untimed steps first (cuDNN autotuning, pool warmup)
  std::int64_t iters = 5;   // timed steps: medians
  bool trace = false;       // time every layer and return the last step's trace events
};

struct CellOutcome {
  CellResult result;
  std::optional<MemoryTimeline> timeline;          // Ok cells: the plan's memory over one step
  nlohmann::json trace = nlohmann::json::array();  // trace events of the last step, pid `pid`
};

/// Runs the cell. A run that does not fit (planner, host or device memory) or fails (divergence,
/// a runtime error) becomes the result's status and message. Throws runtime::InvalidArgument
/// (a usage error, the same for every cell: e.g. a backend this build lacks).
CellOutcome run_cell(const graph::NetworkDef& def, const CellSpec& spec,
                     const CellSettings& settings, int pid);

}  // namespace vdnn::tools
