// cuDNN's graph (backend) API for one convolution direction: the operation graph built once, its
// engines as heuristics rank them, and execution plans finalized once and run many times, each
// run binding only the data pointers (Note [Convolution plans]). Internal to layers/cuda/.
#pragma once

#include <cudnn.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "layers/LayerSpec.hpp"
#include "runtime/Shape.hpp"
#include "runtime/UniqueHandle.hpp"

namespace vdnn::layers::cuda {

namespace detail {
struct BackendDescriptorDeleter {
  static void destroy(cudnnBackendDescriptor_t descriptor) noexcept;
};
}  // namespace detail

/// One backend descriptor of `type`, created empty; the owner sets its attributes and finalizes
/// it. Move-only. Throws runtime::CudaError when cuDNN refuses a call.
class BackendDescriptor {
 public:
  explicit BackendDescriptor(cudnnBackendDescriptorType_t type);
  cudnnBackendDescriptor_t get() const noexcept { return handle_.get(); }
  /// cudnnBackendSetAttribute with `count` elements of `type` at `values`.
  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, std::int64_t count,
           const void* values);
  void finalize();

 private:
  runtime::UniqueHandle<cudnnBackendDescriptor_t, detail::BackendDescriptorDeleter> handle_;
};

enum class ConvDirection : std::uint8_t { Forward, BackwardData, BackwardFilter };
/// "forward", "backward-data" or "backward-filter".
const char* direction_name(ConvDirection direction);

/// What identifies an engine configuration across processes: cuDNN's global engine index and its
/// knob settings (knob type, value).
struct EngineChoice {
  std::int64_t engine = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> knobs;
  friend bool operator==(const EngineChoice& a, const EngineChoice& b) {
    return a.engine == b.engine && a.knobs == b.knobs;
  }
};

/// An engine configuration as the heuristics offer it, with the notes that decide eligibility.
struct EngineOffer {
  EngineChoice choice;
  bool tensor_core = false;        // tensor-op math (TF32 on F32 tensors)
  bool nondeterministic = false;   // results may vary from run to run (atomics)
  bool down_converts = false;      // converts its inputs to a narrower type
  bool reduced_precision = false;  // reduces in less than FP32
  bool runtime_compiled = false;   // compiles a kernel when its plan is finalized (slow start)
};

/// The operation graph of one convolution direction: tensors X (the input, or its gradient), W
/// (the weight, or its gradient) and Y (the output, or its gradient) of the given NCHW-logical
/// shapes in `layout` (NHWC: W in KRSC) and `dtype` (F32 or BF16: cuDNN's pseudo-bf16
/// configuration, FP32 compute), y = alpha * conv + beta * y with alpha 1 (beta 0: overwrite,
/// 1: accumulate). Each tensor's declared byte alignment is `alignment` (a power of two, at most
/// 16): every pointer a plan of this graph runs with must have it. Throws runtime::CudaError when
/// cuDNN refuses the problem. Immutable once built.
class ConvGraph {
 public:
  ConvGraph(cudnnHandle_t handle, ConvDirection direction, const Conv2dSpec& spec,
            const Shape& x_shape, const Shape& w_shape, const Shape& y_shape,
            runtime::Layout layout, runtime::DType dtype, float beta, std::int64_t alignment);
  ConvDirection direction() const noexcept { return direction_; }
  std::int64_t alignment() const noexcept { return alignment_; }
  const BackendDescriptor& graph() const noexcept { return graph_; }
  /// The engines heuristics mode A ranks for this graph, in its order, then the fallback
  /// heuristics' engines it did not rank (those include the FMA-only ones). Throws
  /// runtime::CudaError.
  std::vector<EngineOffer> offers() const;

 private:
  ConvDirection direction_;
  std::int64_t alignment_;
  std::vector<BackendDescriptor> parts_;  // tensors, convolution, operation: what graph_ refers to
  BackendDescriptor graph_;
};

/// An execution plan of one engine choice on one graph, finalized once; run() binds the data
/// pointers and the workspace and enqueues it on the handle's stream. Keeps its graph alive.
class ConvPlan {
 public:
  /// The plan, or nullopt when cuDNN does not run `choice` on `graph` (not supported, or a
  /// setting out of range); throws runtime::CudaError on any other failure.
  static std::optional<ConvPlan> make(cudnnHandle_t handle, std::shared_ptr<const ConvGraph> graph,
                                      const EngineChoice& choice);
  std::size_t workspace() const noexcept { return workspace_; }
  /// x, w, y: the X, W and Y tensors' memory (see ConvGraph), each with the graph's alignment
  /// (else runtime::InvalidArgument); `workspace` holds workspace() bytes. Binds the pointers in
  /// a variant pack, reused while the same four pointers come again (a step's pools hand a layer
  /// the same addresses step after step). Not thread-safe with other calls on the same handle or
  /// the same plan (or its copies). Throws runtime::CudaError.
  void run(cudnnHandle_t handle, const void* x, const void* w, const void* y,
           void* workspace) const;

 private:
  struct Packs;
  ConvPlan(std::shared_ptr<const ConvGraph> graph, BackendDescriptor plan, std::size_t workspace);
  const BackendDescriptor& pack_for(const std::array<void*, 4>& pointers) const;
  std::shared_ptr<const ConvGraph> graph_;
  std::shared_ptr<BackendDescriptor> plan_;  // shared: plans are copied into candidate lists
  std::shared_ptr<Packs> packs_;             // the variant packs of recent pointer sets
  std::size_t workspace_;
};

/// The largest power of two up to 16 that divides `bytes` (and so every chunk offset of a tensor
/// whose batch chunks are `bytes` long); 16 for 0.
std::int64_t alignment_of(std::size_t bytes);

}  // namespace vdnn::layers::cuda
