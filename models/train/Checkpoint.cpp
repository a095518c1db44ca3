// Saving and loading a session's state as safetensors: which tensors a network has, under which
// PyTorch names, the device<->host copies, and the one mismatch error that lists every difference.
#include "models/train/Checkpoint.hpp"

#include <charconv>
#include <cstddef>
#include <cstring>
#include <map>
#include <sstream>
#include <variant>
#include <vector>

namespace vdnn::models {
namespace {

constexpr const char* kIterationKey = "vdnn.iteration";
constexpr const char* kSeedKey = "vdnn.seed";
constexpr const char* kConfigKey = "vdnn.config";
constexpr const char* kOptimizerKey = "vdnn.optimizer";
constexpr const char* kFormatKey = "vdnn.format";
constexpr const char* kFormat = "vdnn-checkpoint-1";
constexpr const char* kNumBatchesTracked = "num_batches_tracked";

// Weights are what --init-from loads; the other kinds belong to resuming a run. A Counter holds the
// iteration (I64, or F32 as torch.optim.AdamW's step).
enum class SlotKind : std::uint8_t { Weight, Counter, Optimizer };

// One tensor that the session's checkpoint holds, and where its data lives in the session.
struct Slot {
  std::string name;
  SlotKind kind = SlotKind::Weight;
  TensorDType dtype = TensorDType::F32;
  std::vector<std::int64_t> shape;
  void* device = nullptr;  // null for a Counter, which has no storage in the session
  std::size_t bytes = 0;
  runtime::Shape logical;                          // of a Weight or Optimizer slot
  runtime::Layout layout = runtime::Layout::Nchw;  // how the session stores it (a KRSC weight)
};

// The bytes of an F32 tensor of `shape` reordered between layouts: the file holds PyTorch's order,
// the session a KRSC convolution weight where it runs one (graph::ParameterStore).
std::vector<std::byte> relayout_bytes(const std::vector<std::byte>& bytes,
                                      const runtime::Shape& shape, runtime::Layout from,
                                      runtime::Layout to) {
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  values = runtime::relayout(values, shape, from, to);
  std::vector<std::byte> out(bytes.size());
  std::memcpy(out.data(), values.data(), values.size() * sizeof(float));
  return out;
}

std::vector<std::int64_t> dims(const runtime::Shape& shape) {
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(shape.rank()));
  for (int axis = 0; axis < shape.rank(); ++axis) out.push_back(shape[axis]);
  return out;
}

// PyTorch's state_dict names of the state tensors each optimizer keeps, in ParameterStore order.
std::vector<const char*> state_names(layers::OptimizerKind kind) {
  if (kind == layers::OptimizerKind::AdamW) return {"exp_avg", "exp_avg_sq"};
  return {"momentum_buffer"};
}

std::vector<Slot> slots_of(graph::Session& session) {
  const graph::Graph& graph = session.graph();
  const graph::ParameterStore& store = session.executor().parameters();
  std::vector<Slot> slots;
  for (graph::NodeId id = 0; id < static_cast<graph::NodeId>(graph.nodes().size()); ++id) {
    bool has_counter = false;
    for (std::size_t index : store.of_node(id)) {
      const graph::Parameter& p = store.all()[index];
      slots.push_back({p.name, SlotKind::Weight, TensorDType::F32, dims(p.spec.shape),
                       p.value.data(), p.value.bytes(), p.spec.shape, p.spec.layout});
      has_counter = has_counter || p.spec.name == kNumBatchesTracked;
    }
    const graph::Node& node = graph.node(id);
    if (layers::batch_norm_of(node.spec) != nullptr && !has_counter) {
      slots.push_back({node.name + "." + kNumBatchesTracked,
                       SlotKind::Counter,
                       TensorDType::I64,
                       {},
                       nullptr,
                       sizeof(std::int64_t),
                       {},
                       runtime::Layout::Nchw});
    }
  }
  // An inference session keeps no optimizer state (Note [Inference plan]).
  if (session.plan().purpose == graph::Purpose::Inference) return slots;
  const layers::OptimizerKind kind = session.executor().optimizer().kind;
  for (const graph::Parameter& p : store.all()) {
    if (!p.trainable()) continue;
    const std::vector<const char*> names = state_names(kind);
    for (std::size_t i = 0; i < names.size(); ++i) {
      slots.push_back({optimizer_tensor_name(p.name, names[i]), SlotKind::Optimizer,
                       TensorDType::F32, dims(p.spec.shape), p.state.at(i).data(),
                       p.state.at(i).bytes(), p.spec.shape, p.spec.layout});
    }
    if (kind == layers::OptimizerKind::AdamW) {
      slots.push_back({optimizer_tensor_name(p.name, "step"),
                       SlotKind::Counter,
                       TensorDType::F32,
                       {},
                       nullptr,
                       sizeof(float),
                       {},
                       runtime::Layout::Nchw});
    }
  }
  return slots;
}

// The iteration as a Counter of `dtype` stores it.
void write_counter(std::vector<std::byte>& data, TensorDType dtype, std::int64_t iteration) {
  if (dtype == TensorDType::F32) {
    const auto step = static_cast<float>(iteration);
    std::memcpy(data.data(), &step, sizeof(step));
  } else {
    std::memcpy(data.data(), &iteration, sizeof(iteration));
  }
}

// A full load resumes the optimizer that wrote the state (files without the key: SGD's).
void check_optimizer(const SafetensorsFile& file, const std::string& source,
                     layers::OptimizerKind kind) {
  const auto it = file.metadata.find(kOptimizerKey);
  const std::string written = it == file.metadata.end() ? "sgd" : it->second;
  if (written == layers::optimizer_name(kind)) return;
  throw CheckpointError("checkpoint " + source + " holds the state of the " + written +
                        " optimizer, but this run uses " + layers::optimizer_name(kind) +
                        ": resume with that optimizer, or load only its weights (init_from)");
}

std::string describe(TensorDType dtype, const std::vector<std::int64_t>& shape) {
  return std::string(dtype_name(dtype)) + " " + shape_string(shape);
}

// weights_only ignores what resuming needs, wherever the file came from.
bool ignored(const std::string& name, const LoadOptions& options) {
  const auto ends_with = [&](const std::string& suffix) {
    return name.size() >= suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return options.weights_only &&
         (name.rfind("optimizer.", 0) == 0 || ends_with(std::string(".") + kNumBatchesTracked));
}

// Every difference between the file and the session, or nothing; one line each.
std::vector<std::string> differences(const std::vector<Slot>& slots, const SafetensorsFile& file,
                                     const LoadOptions& options) {
  std::map<std::string, const SafetensorsTensor*> found;
  for (const SafetensorsTensor& t : file.tensors) found[t.name] = &t;
  std::vector<std::string> lines;
  std::map<std::string, bool> expected;
  for (const Slot& slot : slots) {
    if (ignored(slot.name, options)) continue;
    expected[slot.name] = true;
    const auto it = found.find(slot.name);
    if (it == found.end()) {
      lines.push_back("missing " + slot.name + " (expected " + describe(slot.dtype, slot.shape) +
                      ")");
    } else if (it->second->dtype != slot.dtype || it->second->shape != slot.shape) {
      lines.push_back("mismatched " + slot.name + ": expected " + describe(slot.dtype, slot.shape) +
                      ", found " + describe(it->second->dtype, it->second->shape));
    }
  }
  for (const SafetensorsTensor& t : file.tensors) {
    if (expected.count(t.name) == 0 && !ignored(t.name, options)) {
      lines.push_back("unexpected " + t.name + " (found " + describe(t.dtype, t.shape) + ")");
    }
  }
  return lines;
}

template <typename Int>
Int parse_int(const std::map<std::string, std::string>& metadata, const char* key,
              const std::string& source) {
  const auto it = metadata.find(key);
  Int value = 0;
  if (it == metadata.end()) return value;
  const std::string& text = it->second;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw CheckpointError("checkpoint " + source + ": __metadata__ " + key + " is \"" + text +
                          "\", not an integer");
  }
  return value;
}

CheckpointState state_of(const SafetensorsFile& file, const std::string& source,
                         const LoadOptions& options) {
  if (!options.weights_only && file.metadata.count(kIterationKey) == 0) {
    throw CheckpointError("checkpoint " + source + ": no " + kIterationKey +
                          " in __metadata__, so it cannot resume a run (load it weights-only)");
  }
  CheckpointState state;
  state.iteration = parse_int<std::int64_t>(file.metadata, kIterationKey, source);
  state.seed = parse_int<std::uint64_t>(file.metadata, kSeedKey, source);
  const auto config = file.metadata.find(kConfigKey);
  if (config != file.metadata.end()) state.config_json = config->second;
  if (state.iteration < 0) {
    throw CheckpointError("checkpoint " + source + ": negative " + kIterationKey);
  }
  return state;
}

}  // namespace

std::string optimizer_tensor_name(const std::string& parameter, const std::string& state) {
  return "optimizer." + parameter + "." + state;
}

void save_checkpoint(const std::filesystem::path& path, graph::Session& session,
                     const CheckpointState& state, const WriteProgress& progress) {
  const std::vector<Slot> slots = slots_of(session);
  // Before the first step the optimizer state holds no value yet (the first update writes it).
  const bool state_set = session.executor().steps() > 0;
  SafetensorsFile file;
  file.tensors.reserve(slots.size());
  runtime::Stream& compute = session.context().compute();
  for (const Slot& slot : slots) {
    SafetensorsTensor& t = file.tensors.emplace_back();
    t.name = slot.name;
    t.dtype = slot.dtype;
    t.shape = slot.shape;
    t.data.resize(slot.bytes);  // zeros
    if (slot.kind == SlotKind::Counter) {
      write_counter(t.data, slot.dtype, state.iteration);
    } else if (slot.kind == SlotKind::Weight || state_set) {
      compute.copy_async(t.data.data(), slot.device, slot.bytes);
    }
  }
  compute.synchronize();
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const Slot& slot = slots[i];
    if (slot.layout == runtime::Layout::Nchw) continue;
    std::vector<std::byte>& data = file.tensors[i].data;
    data = relayout_bytes(data, slot.logical, slot.layout, runtime::Layout::Nchw);
  }
  file.metadata = {{kFormatKey, kFormat},
                   {kIterationKey, std::to_string(state.iteration)},
                   {kSeedKey, std::to_string(state.seed)},
                   {kConfigKey, state.config_json},
                   {kOptimizerKey, layers::optimizer_name(session.executor().optimizer().kind)}};
  write_safetensors(path, file, progress);
}

CheckpointState load_checkpoint(const std::filesystem::path& path, graph::Session& session,
                                const LoadOptions& options) {
  const std::string source = "'" + path.string() + "'";
  const SafetensorsFile file = read_safetensors(path, /*require_checksum=*/!options.weights_only);
  CheckpointState state = state_of(file, source, options);
  if (!options.weights_only) check_optimizer(file, source, session.executor().optimizer().kind);
  const std::vector<Slot> slots = slots_of(session);
  const std::vector<std::string> lines = differences(slots, file, options);
  if (!lines.empty()) {
    std::ostringstream what;
    what << "checkpoint " << source << " does not match the network (" << lines.size()
         << (lines.size() == 1 ? " difference" : " differences") << "):";
    for (const std::string& line : lines) what << "\n  " << line;
    throw CheckpointError(what.str());
  }
  std::map<std::string, const SafetensorsTensor*> found;
  for (const SafetensorsTensor& t : file.tensors) found[t.name] = &t;
  runtime::Stream& compute = session.context().compute();
  std::vector<std::vector<std::byte>> relaid;  // host sources of copies, alive until they ran
  relaid.reserve(slots.size());
  for (const Slot& slot : slots) {
    // A Counter is derived from the iteration: nothing in the session stores it.
    if (slot.kind == SlotKind::Counter || ignored(slot.name, options)) continue;
    const std::vector<std::byte>& data = found.at(slot.name)->data;
    const void* from = data.data();
    if (slot.layout != runtime::Layout::Nchw) {
      from =
          relaid
              .emplace_back(relayout_bytes(data, slot.logical, runtime::Layout::Nchw, slot.layout))
              .data();
    }
    compute.copy_async(slot.device, from, slot.bytes);
  }
  compute.synchronize();
  if (!options.weights_only) session.executor().set_steps(state.iteration);
  return state;
}

}  // namespace vdnn::models
