// ConvSearch: the engine candidates of each convolution direction, ranked once per problem by
// cuDNN's heuristics or by measurement, each with its execution plans finalized (Note
// [Convolution plans]), over the whole batch and its batch chunks (Note [Batch chunks]); and their
// text form for the setup cache. Internal to layers/cuda/.
#pragma once

#include <cuda_runtime.h>
#include <cudnn.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "layers/LayerSpec.hpp"
#include "layers/StoredConvAlgos.hpp"
#include "layers/cuda/CudnnGraph.hpp"
#include "runtime/Shape.hpp"

namespace vdnn::layers::cuda {

/// One convolution problem: the layer's whole batch (chunks 1) or one of its equal batch chunks,
/// with the graph of each direction's pass and, for a pass that may add into its output (the data
/// gradient; the F32 weight gradient over several chunks), the graph that accumulates.
struct ConvProblem {
  std::int64_t chunks = 1;
  std::size_t x_bytes = 0;                                     // one chunk's input
  std::size_t w_bytes = 0;                                     // the weight
  std::size_t y_bytes = 0;                                     // one chunk's output
  std::array<std::shared_ptr<const ConvGraph>, 3> overwrite;   // by ConvDirection
  std::array<std::shared_ptr<const ConvGraph>, 3> accumulate;  // null where the pass never adds
};

/// The layer's problem, then one per chunk count that divides the batch. Throws
/// runtime::CudaError when cuDNN refuses the problem.
std::vector<ConvProblem> conv_problems(cudnnHandle_t handle, const Conv2dSpec& spec,
                                       const Shape& x_shape, const Shape& w_shape,
                                       const Shape& y_shape, runtime::Layout layout,
                                       runtime::DType dtype);

/// The plans of one candidate on one problem: the pass's, and the one that accumulates where the
/// pass may add into its output.
struct PassPlans {
  ConvPlan overwrite;
  std::optional<ConvPlan> accumulate;
};

/// One engine configuration of one direction on one problem: its workspace (the larger of its
/// plans'), cuDNN's measured time for the whole batch (negative when ranked by heuristics) and its
/// plans, shared by every layer of the same problem.
struct ConvCandidate {
  EngineChoice choice;
  std::size_t workspace = 0;
  double seconds = -1.0;
  std::int64_t chunks = 1;
  std::shared_ptr<const PassPlans> plans;
  /// The plan that overwrites, or (accumulate) adds into, its output; throws runtime::Error when
  /// the candidate's pass never adds.
  const ConvPlan& plan(bool accumulate) const;
};

/// The eligible candidates of one direction, fastest first.
struct ConvCandidates {
  std::vector<ConvCandidate> ranked;
  /// The fastest whose workspace is within `limit`, else the one that needs least.
  const ConvCandidate& pick(std::size_t limit) const;
};

/// How candidates are ranked and which are eligible.
struct SearchPolicy {
  bool measure = false;        // timed on the device, else in the heuristics' order
  bool deterministic = false;  // engines without cuDNN's nondeterministic note only
  bool tensor_cores = false;   // F32: TF32 tensor-core engines too, else FMA engines only
  /// BF16: tensor-core engines only where there is one. Other bf16 engines rank close to them but
  /// ran up to 10x slower in a training step (DenseNet-121's 1x1 weight gradients on the H200).
  bool bf16 = false;
  /// A grouped (or depthwise) convolution: cuDNN's runtime-compiled engines are eligible, whose
  /// NHWC depthwise kernels ran MobileNetV2 b256 in TF32 at 7903 img/s on the H200 against 5121
  /// without them (their compiling adds ~10 s to a first start; the setup cache keeps the choice),
  /// and BF16 keeps the engines without tensor cores, which a depthwise filter gives little to.
  bool grouped = false;
};

/// Ranks the candidates of `direction` over `problems` (conv_problems): each problem's eligible
/// engines with their plans; measured on the device when policy.measure (allocates and
/// synchronizes: at construction only). Throws runtime::CudaError when no engine is eligible.
ConvCandidates search_candidates(cudnnHandle_t handle, cudaStream_t stream, ConvDirection direction,
                                 const std::vector<ConvProblem>& problems,
                                 const SearchPolicy& policy);

/// A stored direction's candidates with their plans, each checked against cuDNN: the plan must
/// finalize and its workspace equal the stored one (another cuDNN build, or a file from elsewhere,
/// must not hand the layer a choice it cannot run). nullopt, with `why`, when any fails.
std::optional<ConvCandidates> restore_candidates(cudnnHandle_t handle, ConvDirection direction,
                                                 const std::vector<ConvProblem>& problems,
                                                 const std::vector<StoredAlgo>& list,
                                                 std::string& why);

/// The candidates' text-form entries (StoredConvAlgos).
std::vector<StoredAlgo> stored(const ConvCandidates& candidates);

}  // namespace vdnn::layers::cuda
