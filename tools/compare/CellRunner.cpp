// One compare cell: train warmup + iters steps, take medians and the plan's figures.
#include "tools/compare/CellRunner.hpp"

#include "models/train/Divergence.hpp"
#include "models/train/Trainer.hpp"
#include "runtime/ByteSize.hpp"
#include "tools/cli/RunJson.hpp"
#include "tools/cli/TraceWriter.hpp"
#include "tools/compare/PlanTimeline.hpp"

namespace vdnn::tools {
namespace {

using Json = nlohmann::json;

double field(const Json& medians, const char* name) {
  const auto it = medians.find(std::string(name) + "_median");
  return it == medians.end() ? 0.0 : it->get<double>();
}

// Bytes of a step whose managed pages moved: the driver's count when there is one, else the
// plan's evictions and migrations back.
std::uint64_t migrated_bytes(const graph::TransferReport& t, bool counted) {
  if (counted) return t.migration.to_device_bytes + t.migration.to_host_bytes;
  return t.evicted_bytes + t.migrated_bytes;
}

void measure(models::Trainer& trainer, const CellSettings& s, CellResult& r) {
  graph::Session& session = trainer.session();
  const bool managed = session.plan().memory == graph::DeviceMemory::Managed;
  TransferSeries series(s.warmup);
  trainer.on_step([&](const models::StepRecord& step) {
    series.add(transfer_metrics(step.transfers, managed));
  });
  while (trainer.iteration() < s.warmup + s.iters) trainer.step();
  const models::RunMedians m = models::run_medians(trainer.history(), r.batch, s.warmup);
  const Json medians = series.medians();
  const graph::TransferReport& last = trainer.history().back().transfers;
  r.images_per_s = m.images_per_s;
  r.ms_per_iter = m.ms;
  r.measured_peak_bytes = session.executor().memory().device_peak;
  r.predicted_peak_bytes = session.plan().predicted_peak;
  r.offloaded_bytes = last.offloaded_bytes;
  r.prefetched_bytes = last.prefetched_bytes;
  r.migrated_bytes = migrated_bytes(last, session.executor().migrations_counted());
  r.offload_gbps = field(medians, managed ? "evict_gbps" : "offload_gbps");
  r.prefetch_gbps = field(medians, managed ? "migrate_gbps" : "prefetch_gbps");
  r.offload_busy = field(medians, managed ? "evict_busy" : "offload_busy");
  r.prefetch_busy = field(medians, managed ? "migrate_busy" : "prefetch_busy");
  r.peer_offloaded_bytes = last.peer_offloaded_bytes;
  r.peer_offload_busy = field(medians, "peer_offload_busy");
  r.peer_prefetch_busy = field(medians, "peer_prefetch_busy");
}

std::string cell_label(const CellResult& r) {
  std::string label = "vdnn " + r.network + " batch " + std::to_string(r.batch) + ", " + r.policy +
                      " " + r.precision;
  if (r.budget_bytes != 0) label += " under " + runtime::format_bytes(r.budget_bytes);
  return label;
}

}  // namespace

CellOutcome run_cell(const graph::NetworkDef& def, const CellSpec& spec,
                     const CellSettings& settings, int pid) {
  CellOutcome out;
  CellResult& r = out.result;
  r.policy = spec.policy;
  r.precision = spec.precision;
  r.batch = spec.batch;
  r.depth = static_cast<int>(spec.depth);
  r.network = def.name;
  r.budget_bytes = spec.budget.empty() ? 0 : runtime::parse_bytes(spec.budget);
  RunOptions run = settings.run;
  run.precision = spec.precision;
  try {
    models::Trainer trainer(def, spec.batch,
                            trainer_options(run, spec.policy, spec.budget,
                                            settings.warmup + settings.iters, settings.trace));
    measure(trainer, settings, r);
    out.timeline = plan_timeline(trainer.session().graph(), trainer.session().plan());
    if (settings.trace) out.trace = trace_events(trainer.session(), pid, cell_label(r));
  } catch (const runtime::OutOfMemory& e) {  // the planner's DoesNotFit, host or device memory
    r.status = CellStatus::DoesNotFit;
    r.message = e.what();
  } catch (const runtime::InvalidArgument&) {
    throw;
  } catch (const std::exception& e) {  // models::Diverged, CUDA errors, ...
    r.status = CellStatus::Failed;
    r.message = e.what();
  }
  return out;
}

}  // namespace vdnn::tools
