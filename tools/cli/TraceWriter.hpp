// TraceWriter: the last training step as Chrome Trace Event JSON, which Perfetto and
// chrome://tracing open: one track per stream, an event per layer step and per copy or
// migration, and counters of the memory in use.
#pragma once

#include <filesystem>

#include "graph/Session.hpp"

namespace vdnn::tools {

/// Writes `session`'s last step to `path`: threads "compute", "offload" and "prefetch"; an
/// event per forward and backward (layer name and type) and per offload, prefetch, eviction and
/// migration (tensor name and bytes), timed by the backend's events (CUDA: the device clock);
/// counters "device bytes" and "pinned bytes" after every action of the plan. Needs the executor's
/// profile_layers. Throws InvalidArgument (no timeline), runtime::Error (cannot write).
void write_trace(const std::filesystem::path& path, graph::Session& session);

}  // namespace vdnn::tools
