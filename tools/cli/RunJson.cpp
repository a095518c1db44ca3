// Copy and migration figures of training steps as JSON, and their medians.
#include "tools/cli/RunJson.hpp"

#include <fstream>

#include "graph/Planner.hpp"
#include "models/train/Trainer.hpp"

namespace vdnn::tools {
namespace {

using Json = nlohmann::json;

// Achieved copy bandwidth in GB/s (1e9 bytes), 0 without copies.
double gbps(std::uint64_t bytes, double seconds) {
  return seconds > 0.0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0;
}

// Fraction of the step a copy stream was busy.
double busy(double copy_seconds, double step_seconds) {
  return step_seconds > 0.0 ? copy_seconds / step_seconds : 0.0;
}

// Note [Peer tier]: the copies of each tier and, where the step's copies were timed, each link's
// speed and busy fraction (the host link's share of a stream is what the peer's left).
Json peer_link_metrics(const graph::TransferReport& c) {
  Json j{{"peer_offloaded_bytes", c.peer_offloaded_bytes},
         {"peer_prefetched_bytes", c.peer_prefetched_bytes},
         {"host_offloaded_bytes", c.offloaded_bytes - c.peer_offloaded_bytes},
         {"host_prefetched_bytes", c.prefetched_bytes - c.peer_prefetched_bytes}};
  if (!c.copies_timed) return j;
  const double host_offload = c.offload_seconds - c.peer_offload_seconds;
  const double host_prefetch = c.prefetch_seconds - c.peer_prefetch_seconds;
  j.update(Json{{"peer_offload_gbps", gbps(c.peer_offloaded_bytes, c.peer_offload_seconds)},
                {"peer_prefetch_gbps", gbps(c.peer_prefetched_bytes, c.peer_prefetch_seconds)},
                {"peer_offload_busy", busy(c.peer_offload_seconds, c.step_seconds)},
                {"peer_prefetch_busy", busy(c.peer_prefetch_seconds, c.step_seconds)},
                {"host_offload_busy", busy(host_offload, c.step_seconds)},
                {"host_prefetch_busy", busy(host_prefetch, c.step_seconds)}});
  return j;
}

// What the driver's counters say about managed memory, and where the step's copies were timed,
// the evictions' and migrations' speeds and busy fractions.
Json managed_metrics(const graph::TransferReport& c) {
  const runtime::MigrationTraffic& m = c.migration;
  Json j{{"evicted_bytes", c.evicted_bytes},
         {"migrated_bytes", c.migrated_bytes},
         {"migrated_to_device_bytes", m.to_device_bytes},
         {"migrated_to_host_bytes", m.to_host_bytes},
         {"gpu_page_faults", m.gpu_page_faults},
         {"migration_to_device_gbps", gbps(m.to_device_bytes, m.to_device_seconds)},
         {"migration_to_host_gbps", gbps(m.to_host_bytes, m.to_host_seconds)}};
  if (!c.copies_timed) return j;
  j.update(Json{{"evict_gbps", gbps(c.evicted_bytes, c.evict_seconds)},
                {"migrate_gbps", gbps(c.migrated_bytes, c.migrate_seconds)},
                {"evict_busy", busy(c.evict_seconds, c.step_seconds)},
                {"migrate_busy", busy(c.migrate_seconds, c.step_seconds)}});
  return j;
}

}  // namespace

Json transfer_metrics(const graph::TransferReport& c, bool managed) {
  Json j{{"offloaded_bytes", c.offloaded_bytes},
         {"prefetched_bytes", c.prefetched_bytes},
         {"host_enqueue_ms", c.host_seconds * 1e3},
         {"allocation_waits", c.allocation_waits},
         {"allocation_wait_ms", c.allocation_wait_seconds * 1e3},
         {"staged_input_bytes", c.staged_input_bytes}};
  if (c.copies_timed) {  // ExecutorOptions::copy_timing_period
    j.update(Json{{"offload_gbps", gbps(c.offloaded_bytes, c.offload_seconds)},
                  {"prefetch_gbps", gbps(c.prefetched_bytes, c.prefetch_seconds)},
                  {"offload_busy", busy(c.offload_seconds, c.step_seconds)},
                  {"prefetch_busy", busy(c.prefetch_seconds, c.step_seconds)},
                  {"stage_input_gbps", gbps(c.staged_input_bytes, c.stage_input_seconds)}});
  }
  if (c.peer_offloaded_bytes + c.peer_prefetched_bytes > 0) j.update(peer_link_metrics(c));
  if (c.allreduced_bytes > 0) {  // several ranks (issue 27)
    j.update(Json{{"allreduced_bytes", c.allreduced_bytes},
                  {"allreduce_exposed_ms", c.allreduce_exposed_seconds * 1e3}});
  }
  if (managed) j.update(managed_metrics(c));
  return j;
}

void TransferSeries::add(const Json& metrics) {
  for (const auto& [name, value] : metrics.items()) {
    series_[name].emplace_back(steps_, value.get<double>());
  }
  ++steps_;
}

Json TransferSeries::medians() const {
  Json out = Json::object();
  for (const auto& [name, values] : series_) {
    std::vector<double> after;
    for (const auto& [step, value] : values) {
      if (step >= warmup_) after.push_back(value);
    }
    if (after.empty()) {
      for (const auto& entry : values) after.push_back(entry.second);
    }
    out[name + "_median"] = models::median(after);
  }
  return out;
}

Json managed_summary(graph::Session& session) {
  const graph::Plan& plan = session.plan();
  if (plan.memory != graph::DeviceMemory::Managed) return Json::object();
  return {{"managed_memory", session.context().managed_memory_is_real()
                                 ? "cudaMallocManaged"
                                 : "emulated: the CPU backend runs the plan on host memory, "
                                   "migrations move nothing"},
          {"migration_source", session.executor().migration_source()},
          {"pool_peak_bytes", session.executor().memory().pool_peak}};
}

void write_plan(const std::filesystem::path& path, const graph::Session& session) {
  std::ofstream out(path);
  const graph::Graph& graph = session.graph();
  out << "layout: " << runtime::layout_name(session.layout().layout) << " ("
      << session.layout().reason << ")\n"
      << graph::format_fusion(session.fusion()) << "\n"
      << graph::format_reasons(session.reasons()) << "\n"
      << graph::format_plan(graph, session.plan());
  const std::string limited = session.layers().limited_algorithms(graph);
  if (!limited.empty()) {
    out << "\nalgorithms a workspace limit changed (Note [Workspace], Note [Batch chunks]):\n"
        << limited;
  }
  if (!out) throw runtime::Error("cannot write " + path.string());
}

void write_json(const std::filesystem::path& path, const Json& value) {
  std::ofstream out(path);
  out << value.dump(2) << "\n";
  if (!out) throw runtime::Error("cannot write " + path.string());
}

}  // namespace vdnn::tools
