// Chrome Trace Event JSON of one step (the "JSON Array/Object Format": "X" complete events,
// "C" counters, "M" names), times in microseconds from the step's start.
#include "tools/cli/TraceWriter.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "layers/LayerSpec.hpp"

namespace vdnn::tools {
namespace {

using Json = nlohmann::json;

// Peer-tier copies run on the offload and prefetch streams but get tracks of their own: one per
// link (Note [Peer tier]).
int thread_of(const std::string& stream) {
  if (stream == "offload") return 2;
  if (stream == "prefetch") return 3;
  if (stream == "peer offload") return 4;
  if (stream == "peer prefetch") return 5;
  return 1;
}

Json thread_name(int pid, int tid, const char* name) {
  return {
      {"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

}  // namespace

Json trace_events(graph::Session& session, int pid, const std::string& label) {
  const graph::StepTimeline timeline = session.executor().timeline();
  const graph::Graph& g = session.graph();
  const auto tensor_name = [&](graph::NodeId t) {
    return t == graph::kNetworkInput ? std::string(graph::kInputName) : g.node(t).name;
  };
  Json events = Json::array();
  events.push_back(
      {{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"args", {{"name", label}}}});
  events.push_back(thread_name(pid, 1, "compute"));
  events.push_back(thread_name(pid, 2, "offload"));
  events.push_back(thread_name(pid, 3, "prefetch"));
  if (session.plan().peer_device >= 0) {
    events.push_back(thread_name(pid, 4, "peer offload"));
    events.push_back(thread_name(pid, 5, "peer prefetch"));
  }
  for (const graph::TimelineEvent& e : timeline.events) {
    const bool layer = e.op == graph::Op::Forward || e.op == graph::Op::Backward;
    Json args{{"tensor", tensor_name(e.tensor)}};
    if (layer) args["type"] = std::string(layers::type_name(g.node(e.tensor).spec));
    if (!layer) args["bytes"] = e.bytes;
    events.push_back({{"ph", "X"},
                      {"name", std::string(graph::op_name(e.op)) + " " + tensor_name(e.tensor)},
                      {"cat", graph::op_name(e.op)},
                      {"pid", pid},
                      {"tid", thread_of(e.stream)},
                      {"ts", 1e6 * e.start},
                      {"dur", 1e6 * (e.end - e.start)},
                      {"args", args}});
  }
  for (const graph::MemorySample& m : timeline.memory) {
    events.push_back(
        {{"ph", "C"},
         {"name", "memory"},
         {"pid", pid},
         {"ts", 1e6 * m.time},
         {"args", {{"device bytes", m.device_bytes}, {"pinned bytes", m.pinned_bytes}}}});
  }
  return events;
}

void write_trace(const std::filesystem::path& path, const Json& events) {
  std::ofstream out(path);
  out << Json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump() << "\n";
  if (!out) throw runtime::Error("cannot write the trace " + path.string());
}

}  // namespace vdnn::tools
