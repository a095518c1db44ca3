// Rank 0's plan for every rank: the plan's fields as bytes (one field list for both directions),
// their broadcast, and the checks that the plan fits the rank that takes it.
#include "graph/SharedPlan.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "runtime/Error.hpp"
#include "runtime/MemoryResource.hpp"

namespace vdnn::graph {
namespace {

// Every field of a Plan, in encoding order, to f (P: Plan or const Plan). A field added to Plan
// belongs here too, or ranks other than 0 lose it.
template <typename P, typename F>
void plan_fields(P& p, F&& f) {
  f(p.purpose), f(p.requested), f(p.policy), f(p.memory), f(p.budget_bytes);
  f(p.optimizer_state_buffers), f(p.resident_bytes), f(p.shared_workspace_bytes);
  f(p.predicted_peak), f(p.predicted_pool_peak), f(p.pool_bytes), f(p.device_blocks);
  f(p.pinned_bytes);
  f(p.offloaded_bytes), f(p.prefetched_bytes), f(p.evicted_bytes), f(p.migrated_bytes);
  f(p.faulted_bytes), f(p.recomputed_bytes), f(p.predicted_step_seconds), f(p.cost_source);
  f(p.placement), f(p.actions), f(p.inference), f(p.peer_device), f(p.peer_budget_bytes);
  f(p.host_budget_bytes), f(p.peer_bytes), f(p.peer_offloaded_bytes), f(p.communicator_bytes);
  f(p.data_parallel.world_size), f(p.data_parallel.bus_bytes_per_second);
  f(p.data_parallel.buckets.first_bytes), f(p.data_parallel.buckets.bytes);
}

template <typename A, typename F>
void action_fields(A& a, F&& f) {
  f(a.op), f(a.tensor), f(a.bytes), f(a.device_bytes), f(a.tier);
}

// The largest value of each enum the plan holds, for decoding's range checks.
constexpr Purpose last(Purpose /*kind*/) { return Purpose::Inference; }
constexpr Policy last(Policy /*kind*/) { return Policy::Auto; }
constexpr DeviceMemory last(DeviceMemory /*kind*/) { return DeviceMemory::Managed; }
constexpr Placement last(Placement /*kind*/) { return Placement::InBlock; }
constexpr Op last(Op /*kind*/) { return Op::StageInput; }
constexpr Tier last(Tier /*kind*/) { return Tier::Peer; }
constexpr runtime::BlockChoice last(runtime::BlockChoice /*kind*/) {
  return runtime::BlockChoice::SettledFirst;
}

class Writer {
 public:
  template <typename T>
  void operator()(const T& value) {
    if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      const auto* bytes = reinterpret_cast<const std::uint8_t*>(&value);
      out_.insert(out_.end(), bytes, bytes + sizeof(T));
    } else if constexpr (std::is_same_v<T, std::string>) {
      (*this)(static_cast<std::uint64_t>(value.size()));
      out_.insert(out_.end(), value.begin(), value.end());
    } else {  // a vector
      (*this)(static_cast<std::uint64_t>(value.size()));
      for (const auto& element : value) write_element(element);
    }
  }
  std::vector<std::uint8_t> take() { return std::move(out_); }

 private:
  void write_element(const Action& a) { action_fields(a, *this); }
  void write_element(Placement p) { (*this)(p); }

  std::vector<std::uint8_t> out_;
};

class Reader {
 public:
  explicit Reader(const std::vector<std::uint8_t>& bytes) : bytes_(bytes) {}

  template <typename T>
  void operator()(T& value) {
    if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      std::memcpy(&value, take(sizeof(T)), sizeof(T));
      if constexpr (std::is_enum_v<T>) {
        using U = std::underlying_type_t<T>;
        VDNN_EXPECTS(static_cast<U>(value) <= static_cast<U>(last(value)),
                     "a plan's bytes hold an enum value out of range");
      }
    } else if constexpr (std::is_same_v<T, std::string>) {
      const std::size_t n = count(1);
      const auto* at = reinterpret_cast<const char*>(take(n));
      value.assign(at, at + n);
    } else {  // a vector
      value.resize(count(1));
      for (auto& element : value) read_element(element);
    }
  }
  bool done() const noexcept { return at_ == bytes_.size(); }

 private:
  void read_element(Action& a) { action_fields(a, *this); }
  void read_element(Placement& p) { (*this)(p); }

  // A count of elements of at least `element_bytes` each, which the bytes left must hold.
  std::size_t count(std::size_t element_bytes) {
    std::uint64_t n = 0;
    (*this)(n);
    VDNN_EXPECTS(n <= (bytes_.size() - at_) / element_bytes, "a plan's bytes end early");
    return static_cast<std::size_t>(n);
  }
  const std::uint8_t* take(std::size_t n) {
    VDNN_EXPECTS(n <= bytes_.size() - at_, "a plan's bytes end early");
    const std::uint8_t* p = bytes_.data() + at_;
    at_ += n;
    return p;
  }

  const std::vector<std::uint8_t>& bytes_;
  std::size_t at_ = 0;
};

// The plan from `reader`'s bytes, which it must end.
Plan read_plan(Reader& reader) {
  Plan plan;
  plan_fields(plan, reader);
  VDNN_EXPECTS(reader.done(), "a plan's bytes run past its last field");
  return plan;
}

// FNV-1a over the graph's nodes: names, inputs, output bytes and layouts.
std::uint64_t graph_fingerprint(const Graph& graph) {
  std::uint64_t hash = 1469598103934665603ULL;
  const auto mix = [&hash](const void* data, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      hash = (hash ^ static_cast<const std::uint8_t*>(data)[i]) * 1099511628211ULL;
    }
  };
  for (std::size_t i = 0; i < graph.nodes().size(); ++i) {
    const Node& n = graph.nodes()[i];
    const std::uint64_t bytes = graph.tensor_bytes(static_cast<NodeId>(i));
    mix(n.name.data(), n.name.size());
    mix(n.inputs.data(), n.inputs.size() * sizeof(NodeId));
    mix(&bytes, sizeof(bytes));
    mix(&n.layout, sizeof(n.layout));
  }
  return hash;
}

// The name of the first node whose workspace `plan` makes smaller than `layers` needs; "" if none.
std::string short_workspace(const Graph& graph, const LayerSet& layers, const Plan& plan) {
  std::vector<std::uint64_t> given(graph.nodes().size(), plan.shared_workspace_bytes);
  for (const Action& a : plan.actions) {
    if (a.op != Op::AllocateWorkspace || a.tensor < 0) continue;
    std::uint64_t& g = given.at(static_cast<std::size_t>(a.tensor));
    g = std::max(g, a.bytes);
  }
  const std::vector<layers::WorkspaceBytes> needs = layers.workspaces();
  for (std::size_t i = 0; i < needs.size() && i < given.size(); ++i) {
    if (std::max(needs[i].forward, needs[i].backward) > given[i]) return graph.nodes()[i].name;
  }
  return "";
}

// Rank 0's `bytes` on every rank, through a buffer of `memory` (the stream's).
void broadcast_bytes(runtime::Communicator& communicator, runtime::Stream& stream,
                     runtime::MemoryResource& memory, std::vector<std::uint8_t>& bytes) {
  const double size = communicator.all_gather(static_cast<double>(bytes.size()))[0];
  bytes.resize(static_cast<std::size_t>(size));
  const runtime::Buffer buffer(memory, bytes.size());
  if (communicator.rank() == 0) stream.copy_async(buffer.data(), bytes.data(), bytes.size());
  communicator.broadcast(stream, buffer.data(), bytes.size());
  stream.copy_async(bytes.data(), buffer.data(), bytes.size());
  stream.synchronize();
  communicator.raise_if_failed();  // a watchdog's abort completes the stream too
}

// Ends the group (the other ranks' next collective throws instead of waiting) and throws `why`
// after this rank's name.
[[noreturn]] void refuse(runtime::Communicator& communicator, const std::string& why) {
  const std::string what = "rank " + std::to_string(communicator.rank()) + why;
  communicator.abort(what);
  throw runtime::CommunicatorError(what, communicator.rank());
}

}  // namespace

std::vector<std::uint8_t> encode_plan(const Plan& plan) {
  Writer writer;
  plan_fields(plan, writer);
  return writer.take();
}

Plan decode_plan(const std::vector<std::uint8_t>& bytes) {
  Reader reader(bytes);
  return read_plan(reader);
}

void use_rank0_plan(runtime::Communicator& communicator, runtime::ExecutionContext& context,
                    const Graph& graph, const LayerSet& layers, Plan& plan) {
  if (communicator.size() == 1) return;
  const std::uint64_t mine = graph_fingerprint(graph);
  std::vector<std::uint8_t> bytes;
  if (communicator.rank() == 0) {
    Writer writer;
    writer(mine);
    plan_fields(plan, writer);
    bytes = writer.take();
  }
  broadcast_bytes(communicator, context.compute(), context.device_upstream(), bytes);
  if (communicator.rank() == 0) return;
  Reader reader(bytes);
  std::uint64_t theirs = 0;
  reader(theirs);
  Plan shared = read_plan(reader);
  if (theirs != mine) {
    refuse(communicator,
           "'s graph (its network, fusion or layout) differs from rank 0's, whose plan every "
           "rank runs");
  }
  if (const std::string node = short_workspace(graph, layers, shared); !node.empty()) {
    refuse(communicator, "'s " + node +
                             " needs more workspace than rank 0's plan gives it (its algorithms "
                             "differ from rank 0's)");
  }
  plan = std::move(shared);
}

}  // namespace vdnn::graph
