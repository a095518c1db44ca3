// A training run as JSON: each step's copy and migration figures (metrics.jsonl), their medians,
// and what summary.json says about managed memory. Shared by `vdnn train` and `vdnn compare`.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "graph/Session.hpp"

namespace vdnn::tools {

/// One step's copies and, with managed memory, migrations: bytes and, where the step's copies were
/// timed (TransferReport::copies_timed), GB/s (1e9 bytes) and the fraction of the step each copy
/// stream was busy.
nlohmann::json transfer_metrics(const graph::TransferReport& copies, bool managed);

/// The per-step series of transfer_metrics() and their medians, over the steps after `warmup`.
/// A figure only some steps have (the timed copies' speeds) has the median of those steps.
class TransferSeries {
 public:
  explicit TransferSeries(std::int64_t warmup = 0) : warmup_(warmup) {}
  /// Adds the next step's transfer_metrics().
  void add(const nlohmann::json& metrics);
  /// `<name>_median` for every series: of its steps after the warmup, of all where none is.
  nlohmann::json medians() const;

 private:
  std::int64_t warmup_;
  std::int64_t steps_ = 0;
  std::map<std::string, std::vector<std::pair<std::int64_t, double>>> series_;  // (step, value)
};

/// What summary.json says about managed memory (an empty object with dedicated memory).
nlohmann::json managed_summary(graph::Session& session);

/// Writes `value` as indented JSON; throws runtime::Error when the file cannot be written.
void write_json(const std::filesystem::path& path, const nlohmann::json& value);
/// The layout and the fused chains (as `vdnn plan` prints them), the plan that ran
/// (graph::format_plan), then the algorithms that a workspace limit changed
/// (LayerSet::limited_algorithms), if any.
void write_plan(const std::filesystem::path& path, const graph::Session& session);

}  // namespace vdnn::tools
