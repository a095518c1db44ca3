// The cuDNN graph API for convolutions: descriptors owned before they are configured, operation
// graphs, heuristics, plans and their runs (Note [Convolution plans] in docs/ARCHITECTURE.md).
#include "layers/cuda/CudnnGraph.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "layers/cuda/CudnnDescriptors.hpp"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::layers::cuda {
namespace {

// The tensors' unique ids in every graph and variant pack.
constexpr std::int64_t kX = 1;
constexpr std::int64_t kW = 2;
constexpr std::int64_t kY = 3;
// Heuristics offer a few dozen configurations; past this many, none is worth a plan.
constexpr std::int64_t kMaxOffers = 64;

// cuDNN 9 deprecates the handle attributes of the operation graph and the plan in favour of
// device-property descriptors that older 9.x runtimes lack; the handle is what every 9.x takes.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
constexpr cudnnBackendAttributeName_t kGraphHandle = CUDNN_ATTR_OPERATIONGRAPH_HANDLE;
constexpr cudnnBackendAttributeName_t kPlanHandle = CUDNN_ATTR_EXECUTION_PLAN_HANDLE;
#pragma GCC diagnostic pop

// The strides of an NCHW-logical [n, c, h, w] tensor stored NCHW or NHWC (KCRS or KRSC).
std::array<std::int64_t, 4> strides_of(const Shape& s, runtime::Layout layout) {
  if (layout == runtime::Layout::Nhwc) return {s.h() * s.w() * s.c(), 1, s.w() * s.c(), s.c()};
  return {s.c() * s.h() * s.w(), s.h() * s.w(), s.w(), 1};
}

BackendDescriptor tensor(std::int64_t uid, const Shape& shape, runtime::Layout layout,
                         runtime::DType dtype, std::int64_t alignment) {
  BackendDescriptor d(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const cudnnDataType_t type = cudnn_data_type(dtype);
  const std::array<std::int64_t, 4> dims{shape.n(), shape.c(), shape.h(), shape.w()};
  const std::array<std::int64_t, 4> strides = strides_of(shape, layout);
  d.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
  d.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data());
  d.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data());
  d.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  d.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
  d.finalize();
  return d;
}

// Cross-correlation with FP32 compute (also for BF16 tensors: the pseudo-bf16 configuration).
// Groups follow from the tensors: W has C / groups input channels.
BackendDescriptor convolution(const Conv2dSpec& spec) {
  BackendDescriptor d(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const std::int64_t dims = 2;
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const std::array<std::int64_t, 2> padding{spec.padding[0], spec.padding[1]};
  const std::array<std::int64_t, 2> dilation{spec.dilation[0], spec.dilation[1]};
  const std::array<std::int64_t, 2> stride{spec.stride[0], spec.stride[1]};
  d.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims);
  d.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  d.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  d.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, padding.data());
  d.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, padding.data());
  d.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dilation.data());
  d.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride.data());
  d.finalize();
  return d;
}

// The operation's attribute names per direction: X, W, Y, convolution, alpha, beta.
struct OperationAttributes {
  cudnnBackendDescriptorType_t type;
  cudnnBackendAttributeName_t x, w, y, conv, alpha, beta;
};

OperationAttributes attributes_of(ConvDirection direction) {
  switch (direction) {
    case ConvDirection::Forward:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA};
    case ConvDirection::BackwardData:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA};
    case ConvDirection::BackwardFilter:
      break;
  }
  return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA};
}

// The backend descriptors of `count` results of attribute `name` of `from`, each created as `type`.
std::vector<BackendDescriptor> descriptors_of(const BackendDescriptor& from,
                                              cudnnBackendAttributeName_t name,
                                              cudnnBackendDescriptorType_t type,
                                              std::int64_t capacity) {
  std::vector<BackendDescriptor> out;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (std::int64_t i = 0; i < capacity; ++i) {
    out.emplace_back(type);
    raw.push_back(out.back().get());
  }
  std::int64_t count = 0;
  VDNN_CHECK_CUDNN(cudnnBackendGetAttribute(from.get(), name, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                            capacity, &count, raw.data()));
  out.erase(out.begin() + std::min(count, capacity), out.end());
  return out;
}

template <typename T>
T scalar_of(const BackendDescriptor& d, cudnnBackendAttributeName_t name,
            cudnnBackendAttributeType_t type) {
  T value{};
  std::int64_t count = 0;
  VDNN_CHECK_CUDNN(cudnnBackendGetAttribute(d.get(), name, type, 1, &count, &value));
  return value;
}

// The offer of one heuristic result: its engine's index and notes, its knob settings.
EngineOffer offer_of(const BackendDescriptor& config) {
  BackendDescriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t raw = engine.get();
  std::int64_t count = 0;
  VDNN_CHECK_CUDNN(cudnnBackendGetAttribute(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE,
                                            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count, &raw));
  EngineOffer offer;
  offer.choice.engine =
      scalar_of<std::int64_t>(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64);
  std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> notes{};
  VDNN_CHECK_CUDNN(cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                            CUDNN_TYPE_NUMERICAL_NOTE, notes.size(), &count,
                                            notes.data()));
  for (std::int64_t i = 0; i < count; ++i) {
    switch (notes[static_cast<std::size_t>(i)]) {
      case CUDNN_NUMERICAL_NOTE_TENSOR_CORE:
        offer.tensor_core = true;
        break;
      case CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC:
        offer.nondeterministic = true;
        break;
      case CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS:
        offer.down_converts = true;
        break;
      case CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION:
        offer.reduced_precision = true;
        break;
      default:
        break;
    }
  }
  std::array<cudnnBackendBehaviorNote_t, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT> behaviour{};
  VDNN_CHECK_CUDNN(cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE,
                                            CUDNN_TYPE_BEHAVIOR_NOTE, behaviour.size(), &count,
                                            behaviour.data()));
  offer.runtime_compiled =
      std::find(behaviour.begin(), behaviour.begin() + count,
                CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION) != behaviour.begin() + count;
  for (const BackendDescriptor& knob :
       descriptors_of(config, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                      CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, CUDNN_KNOB_TYPE_COUNTS)) {
    const auto type = scalar_of<cudnnBackendKnobType_t>(knob, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                                        CUDNN_TYPE_KNOB_TYPE);
    const auto value =
        scalar_of<std::int64_t>(knob, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64);
    offer.choice.knobs.emplace_back(static_cast<std::int64_t>(type), value);
  }
  return offer;
}

// Finalizes `d`: false when cuDNN refuses what it describes (a parameter or a problem it does not
// support: a stored choice from another build, an engine that does not run this problem, a
// runtime-compiled engine whose kernel NVRTC fails to compile for it); throws runtime::CudaError on
// any other failure.
bool finalized(BackendDescriptor& d) {
  const cudnnStatus_t status = cudnnBackendFinalize(d.get());
  const int category = CUDNN_STATUS_CATEGORY(status);
  if (category == CUDNN_STATUS_BAD_PARAM || category == CUDNN_STATUS_NOT_SUPPORTED ||
      status == CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED) {
    return false;
  }
  VDNN_CHECK_CUDNN(status);
  return true;
}

// The engine configuration of `choice` on `graph`; nullopt when cuDNN refuses it.
std::optional<BackendDescriptor> config_of(const BackendDescriptor& graph,
                                           const EngineChoice& choice) {
  BackendDescriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t raw_graph = graph.get();
  engine.set(CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw_graph);
  engine.set(CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &choice.engine);
  if (!finalized(engine)) return std::nullopt;
  std::vector<BackendDescriptor> knobs;
  std::vector<cudnnBackendDescriptor_t> raw_knobs;
  for (const auto& [type, value] : choice.knobs) {
    knobs.emplace_back(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
    const auto knob_type = static_cast<cudnnBackendKnobType_t>(type);
    knobs.back().set(CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &knob_type);
    knobs.back().set(CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &value);
    if (!finalized(knobs.back())) return std::nullopt;
    raw_knobs.push_back(knobs.back().get());
  }
  BackendDescriptor config(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
  cudnnBackendDescriptor_t raw_engine = engine.get();
  config.set(CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw_engine);
  if (!raw_knobs.empty()) {
    config.set(CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
               static_cast<std::int64_t>(raw_knobs.size()), raw_knobs.data());
  }
  if (!finalized(config)) return std::nullopt;
  return config;
}

bool aligned_to(const void* p, std::int64_t alignment) {
  return reinterpret_cast<std::uintptr_t>(p) % static_cast<std::uintptr_t>(alignment) == 0;
}

}  // namespace

void detail::BackendDescriptorDeleter::destroy(cudnnBackendDescriptor_t descriptor) noexcept {
  VDNN_CHECK_CUDNN_NOTHROW(cudnnBackendDestroyDescriptor(descriptor));
}

BackendDescriptor::BackendDescriptor(cudnnBackendDescriptorType_t type) {
  cudnnBackendDescriptor_t descriptor = nullptr;
  VDNN_CHECK_CUDNN(cudnnBackendCreateDescriptor(type, &descriptor));
  handle_.reset(descriptor);
}

void BackendDescriptor::set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                            std::int64_t count, const void* values) {
  VDNN_CHECK_CUDNN(cudnnBackendSetAttribute(get(), name, type, count, values));
}

void BackendDescriptor::finalize() { VDNN_CHECK_CUDNN(cudnnBackendFinalize(get())); }

const char* direction_name(ConvDirection direction) {
  switch (direction) {
    case ConvDirection::Forward:
      return "forward";
    case ConvDirection::BackwardData:
      return "backward-data";
    case ConvDirection::BackwardFilter:
      break;
  }
  return "backward-filter";
}

std::int64_t alignment_of(std::size_t bytes) {
  std::int64_t alignment = 16;
  while (alignment > 1 && bytes % static_cast<std::size_t>(alignment) != 0) alignment /= 2;
  return alignment;
}

ConvGraph::ConvGraph(cudnnHandle_t handle, ConvDirection direction, const Conv2dSpec& spec,
                     const Shape& x_shape, const Shape& w_shape, const Shape& y_shape,
                     runtime::Layout layout, runtime::DType dtype, float beta,
                     std::int64_t alignment)
    : direction_(direction),
      alignment_(alignment),
      graph_(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR) {
  parts_.push_back(tensor(kX, x_shape, layout, dtype, alignment));
  parts_.push_back(tensor(kW, w_shape, layout, dtype, alignment));
  parts_.push_back(tensor(kY, y_shape, layout, dtype, alignment));
  parts_.push_back(convolution(spec));
  const OperationAttributes a = attributes_of(direction);
  BackendDescriptor op(a.type);
  const std::array<cudnnBackendDescriptor_t, 4> raw{parts_[0].get(), parts_[1].get(),
                                                    parts_[2].get(), parts_[3].get()};
  const float alpha = 1.0f;
  op.set(a.x, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw[0]);
  op.set(a.w, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw[1]);
  op.set(a.y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw[2]);
  op.set(a.conv, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw[3]);
  op.set(a.alpha, CUDNN_TYPE_FLOAT, 1, &alpha);
  op.set(a.beta, CUDNN_TYPE_FLOAT, 1, &beta);
  op.finalize();
  parts_.push_back(std::move(op));
  cudnnBackendDescriptor_t raw_op = parts_.back().get();
  graph_.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw_op);
  graph_.set(kGraphHandle, CUDNN_TYPE_HANDLE, 1, &handle);
  graph_.finalize();
}

std::vector<EngineOffer> ConvGraph::offers() const {
  std::vector<EngineOffer> offers;
  for (const cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    BackendDescriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    cudnnBackendDescriptor_t raw_graph = graph_.get();
    heuristics.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                   &raw_graph);
    heuristics.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    if (!finalized(heuristics)) continue;  // no engine of this mode for the problem
    for (const BackendDescriptor& config :
         descriptors_of(heuristics, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                        CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, kMaxOffers)) {
      EngineOffer offer = offer_of(config);
      const bool seen = std::any_of(offers.begin(), offers.end(),
                                    [&](const EngineOffer& o) { return o.choice == offer.choice; });
      if (!seen) offers.push_back(std::move(offer));
    }
  }
  return offers;
}

// The last few pointer sets (X, W, Y, workspace) a plan ran with and their finalized variant
// packs, replaced oldest first: batch chunks and recomputation run a plan with a handful of sets.
struct ConvPlan::Packs {
  static constexpr std::size_t kKept = 8;
  struct Entry {
    std::array<void*, 4> pointers{};
    std::optional<BackendDescriptor> pack;
  };
  std::array<Entry, kKept> entries;
  std::size_t next = 0;  // the entry the next new set replaces
};

ConvPlan::ConvPlan(std::shared_ptr<const ConvGraph> graph, BackendDescriptor plan,
                   std::size_t workspace)
    : graph_(std::move(graph)),
      plan_(std::make_shared<BackendDescriptor>(std::move(plan))),
      packs_(std::make_shared<Packs>()),
      workspace_(workspace) {}

const BackendDescriptor& ConvPlan::pack_for(const std::array<void*, 4>& pointers) const {
  for (const Packs::Entry& e : packs_->entries) {
    if (e.pack && e.pointers == pointers) return *e.pack;
  }
  static constexpr std::array<std::int64_t, 3> kUids{kX, kW, kY};
  BackendDescriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, kUids.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &pointers[3]);
  pack.finalize();
  Packs::Entry& slot = packs_->entries[packs_->next];
  packs_->next = (packs_->next + 1) % Packs::kKept;
  slot.pointers = pointers;
  slot.pack = std::move(pack);
  return *slot.pack;
}

std::optional<ConvPlan> ConvPlan::make(cudnnHandle_t handle, std::shared_ptr<const ConvGraph> graph,
                                       const EngineChoice& choice) {
  std::optional<BackendDescriptor> config = config_of(graph->graph(), choice);
  if (!config) return std::nullopt;
  BackendDescriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
  cudnnBackendDescriptor_t raw_config = config->get();
  plan.set(kPlanHandle, CUDNN_TYPE_HANDLE, 1, &handle);
  plan.set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw_config);
  if (!finalized(plan)) return std::nullopt;
  const auto workspace =
      scalar_of<std::int64_t>(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64);
  return ConvPlan(std::move(graph), std::move(plan), static_cast<std::size_t>(workspace));
}

void ConvPlan::run(cudnnHandle_t handle, const void* x, const void* w, const void* y,
                   void* workspace) const {
  const std::int64_t alignment = graph_->alignment();
  VDNN_EXPECTS(aligned_to(x, alignment) && aligned_to(w, alignment) && aligned_to(y, alignment),
               std::string("ConvPlan: a ") + direction_name(graph_->direction()) +
                   " tensor is not aligned to the " + std::to_string(alignment) +
                   " bytes its plan was built for");
  const std::array<void*, 4> pointers{const_cast<void*>(x), const_cast<void*>(w),
                                      const_cast<void*>(y), workspace};
  const BackendDescriptor& pack = pack_for(pointers);
  VDNN_CHECK_CUDNN(cudnnBackendExecute(handle, plan_->get(), pack.get()));
}

}  // namespace vdnn::layers::cuda
