// Parameter allocation and seeded initialization (torchvision's schemes, reproducible anywhere).
#include "graph/ParameterStore.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "runtime/Random.hpp"

namespace vdnn::graph {
namespace {

// Elements [begin, end) of `p`'s initial values into `data` (sized for all of them).
void initialize(const Parameter& p, std::uint64_t seed, std::uint64_t stream,
                std::vector<float>& data, std::int64_t begin, std::int64_t end) {
  const double fan = static_cast<double>(p.spec.fan);
  for (std::int64_t i = begin; i < end; ++i) {
    const auto index = static_cast<std::uint64_t>(i);
    double v = 0.0;
    switch (p.spec.init) {
      case layers::Init::Zeros:
        v = 0.0;
        break;
      case layers::Init::Ones:
        v = 1.0;
        break;
      case layers::Init::Constant:
        v = p.spec.value;
        break;
      case layers::Init::KaimingNormalFanOut:
        v = std::sqrt(2.0 / fan) * runtime::normal01(seed, stream, index);
        break;
      case layers::Init::UniformFanIn:
        v = (2.0 * runtime::uniform01(seed, stream, index) - 1.0) / std::sqrt(fan);
        break;
    }
    data[static_cast<std::size_t>(i)] = static_cast<float>(v);
  }
}

// The random stream of a parameter: FNV-1a of its name, so that a parameter starts the same
// whatever comes before it in the graph (fused or not, Note [Fusion]).
std::uint64_t stream_of(const std::string& name) {
  std::uint64_t hash = 14695981039346656037ull;
  for (const char c : name) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

// Every parameter's initial values, element ranges drawn on several threads: each value is a pure
// function of (seed, parameter, index), so the result is the same however the work is split
// (VGG-16's 138 million values took 2 s on one thread).
std::vector<std::vector<float>> initial_values(const std::vector<Parameter>& params,
                                               std::uint64_t seed) {
  constexpr std::int64_t kRange = std::int64_t{1} << 22;
  struct Range {
    std::size_t param;
    std::int64_t begin;
    std::int64_t end;
  };
  std::vector<std::vector<float>> values(params.size());
  std::vector<Range> ranges;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::int64_t n = params[i].spec.shape.numel();
    values[i].resize(static_cast<std::size_t>(n));
    for (std::int64_t b = 0; b < n; b += kRange) ranges.push_back({i, b, std::min(n, b + kRange)});
  }
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t r = next++; r < ranges.size(); r = next++) {
      const Parameter& p = params[ranges[r].param];
      initialize(p, seed, stream_of(p.name), values[ranges[r].param], ranges[r].begin,
                 ranges[r].end);
    }
  };
  const unsigned threads = std::min<unsigned>(8, std::max(1U, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads && t < ranges.size(); ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return values;
}

}  // namespace

bool has_bf16_copy(const Graph& graph, NodeId node, std::size_t index) {
  return graph.input_dtype(node) == runtime::DType::BF16 &&
         layers::param_read_in_precision(graph.node(node).spec, index);
}

ParameterStore::ParameterStore(const Graph& graph, runtime::MemoryResource& memory,
                               std::uint64_t seed, runtime::Stream& upload, int state_buffers,
                               Purpose purpose, const std::vector<NodeId>& gradient_order)
    : by_node_(graph.nodes().size()) {
  for (NodeId id = 0; id < static_cast<NodeId>(graph.nodes().size()); ++id) {
    const Node& node = graph.node(id);
    std::vector<layers::ParamSpec> specs = layers::param_specs(node.spec, graph.input_shapes(id));
    for (std::size_t index = 0; index < specs.size(); ++index) {
      layers::ParamSpec& spec = specs[index];
      if (layers::conv_of(node.spec) != nullptr && spec.name == "weight") spec.layout = node.layout;
      const std::size_t bytes = spec.shape.bytes(runtime::DType::F32);
      Parameter p{node.name + "." + spec.name,    id, std::move(spec),
                  runtime::Buffer(memory, bytes), {}, {}};
      if (has_bf16_copy(graph, id, index)) {
        p.copy = runtime::Buffer(memory, p.spec.shape.bytes(runtime::DType::BF16));
      }
      // The state starts from the first gradient: no initial value; inference keeps neither.
      if (p.trainable() && purpose == Purpose::Training) {
        if (gradient_order.empty()) p.grad = runtime::Buffer(memory, bytes);
        for (int i = 0; i < state_buffers; ++i) p.state.at(i) = runtime::Buffer(memory, bytes);
      }
      by_node_[static_cast<std::size_t>(id)].push_back(params_.size());
      params_.push_back(std::move(p));
    }
  }
  if (!gradient_order.empty()) flatten_gradients(gradient_order, memory, upload);
  // One host staging buffer per parameter, alive until the copies have completed.
  std::vector<std::vector<float>> staging = initial_values(params_, seed);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const layers::ParamSpec& spec = params_[i].spec;
    staging[i] = runtime::relayout(staging[i], spec.shape, runtime::Layout::Nchw, spec.layout);
    upload.copy_async(params_[i].value.data(), staging[i].data(), params_[i].value.bytes());
  }
  upload.synchronize();
}

void ParameterStore::flatten_gradients(const std::vector<NodeId>& order,
                                       runtime::MemoryResource& memory, runtime::Stream& upload) {
  for (const NodeId node : order) {
    for (const std::size_t p : of_node(node)) {
      if (params_[p].trainable()) gradient_order_.push_back(p);
    }
  }
  const std::int64_t flattened = std::accumulate(
      gradient_order_.begin(), gradient_order_.end(), std::int64_t{0},
      [&](std::int64_t n, std::size_t p) { return n + params_[p].spec.shape.numel(); });
  VDNN_EXPECTS(flattened == trainable_count(),
               "flat gradients: a node with trainable parameters is missing from the backward "
               "order");
  std::size_t total = 0;
  for (const std::size_t p : gradient_order_) {
    total += runtime::MemoryResource::align_up(params_[p].spec.shape.bytes(runtime::DType::F32));
  }
  flat_gradients_ = runtime::Buffer(memory, total);
  auto* base = static_cast<std::byte*>(flat_gradients_.data());
  std::size_t offset = 0;
  for (const std::size_t p : gradient_order_) {
    const std::size_t bytes = params_[p].spec.shape.bytes(runtime::DType::F32);
    params_[p].grad = runtime::Buffer::borrowed(base + offset, bytes);
    offset += runtime::MemoryResource::align_up(bytes);
  }
  // Zeros, so that the padding between gradients, which every all-reduce carries, stays finite.
  const std::vector<std::byte> zeros(total);
  upload.copy_async(flat_gradients_.data(), zeros.data(), total);
  upload.synchronize();
}

std::int64_t ParameterStore::trainable_count() const noexcept {
  std::int64_t count = 0;
  for (const Parameter& p : params_) {
    if (p.trainable()) count += p.spec.shape.numel();
  }
  return count;
}

}  // namespace vdnn::graph
