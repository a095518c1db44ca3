// TraceWriter: the last training step as Chrome Trace Event JSON, which Perfetto and
// chrome://tracing open: one track per stream, an event per layer step and per copy or
// migration, and counters of the memory in use.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "graph/Session.hpp"

namespace vdnn::tools {

/// The trace events of `session`'s last step as process `pid`: threads "compute", "offload"
/// and "prefetch"; an event per forward and backward (layer name and type) and per offload,
/// prefetch, eviction and migration (tensor name and bytes), timed by the backend's events (CUDA:
/// the device clock) from the step's start; counters "device bytes" and "pinned bytes" after
/// every action of the plan. `label` names the process (e.g. the compare cell). Needs the
/// executor's profile_layers. Throws InvalidArgument (no timeline).
nlohmann::json trace_events(graph::Session& session, int pid, const std::string& label);

/// Writes `events` (concatenated trace_events()) to `path` in the JSON Object Format. Throws
/// runtime::Error when the file cannot be written.
void write_trace(const std::filesystem::path& path, const nlohmann::json& events);

}  // namespace vdnn::tools
