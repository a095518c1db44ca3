// Layer: the backend implementation of one LayerSpec (layers/cpu/ for Eigen, layers/cuda/ for
// cuDNN/cuBLAS). Built once for fixed input shapes, then run many times on views the executor owns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "layers/LayerCache.hpp"
#include "layers/LayerSpec.hpp"
#include "runtime/TensorView.hpp"

namespace vdnn::runtime {
class Communicator;
}  // namespace vdnn::runtime

namespace vdnn::runtime::cuda {
class DeviceContext;
}  // namespace vdnn::runtime::cuda

namespace vdnn::layers {

using runtime::DType;
using runtime::Layout;
using runtime::TensorView;

enum class Backend : std::uint8_t { Cpu, Cuda };
const char* backend_name(Backend backend) noexcept;

/// Per-step results a loss layer reports besides its output tensor. Which logits rank above a
/// sample's label, ties and NaN included, is ranks_above's rule (layers/LossLabels.hpp).
struct LossStats {
  double loss = 0.0;
  double accuracy = 0.0;  // top-1: fraction of samples whose label no logit ranks above
  double top5 = 0.0;      // fraction whose label is among the top 5 (every label with < 5 classes)
};

/// Arguments of Layer::forward. Views are owned by the caller and valid for the call only.
struct ForwardArgs {
  std::vector<TensorView> inputs;
  std::vector<TensorView> params;  // in param_specs() order, buffers included
  TensorView output;
  TensorView workspace;  // workspace().forward bytes, or empty when that is 0
  bool training = true;
  /// Training only: the same forward again, in this step's backward (Note [Recomputation]). The
  /// output must be bitwise the first one's, and nothing else changes: no running statistics
  /// update, and what the first forward saved for backward stays valid.
  bool recompute = false;
  std::uint64_t step = 0;                // training step, for stateless seeded randomness
  const std::int32_t* labels = nullptr;  // loss layers only: N class indices
  LossStats* loss_stats = nullptr;       // loss layers only: written by forward (CUDA: once
                                         // the compute stream passed it; best pinned)
};

/// Where backward writes one input gradient. Empty tensor: that input needs no gradient.
/// accumulate: add to the existing contents (the tensor has another consumer) instead of
/// overwriting them.
struct GradTarget {
  TensorView tensor;
  bool accumulate = false;
};

/// Arguments of Layer::backward. `inputs` and `output` are set only where backward_needs() says
/// so (the others may be empty views: their memory may already be offloaded or freed).
struct BackwardArgs {
  std::vector<TensorView> inputs;
  TensorView output;
  /// Nothing reads a node's output gradient after its backward: a layer may overwrite it with a
  /// gradient that its backward derives from it idempotently (the fused conv2d_relu masks it in
  /// place, so running backward again gives the same results).
  TensorView grad_output;
  std::vector<GradTarget> grad_inputs;  // one per input
  std::vector<TensorView> params;       // as in forward
  std::vector<TensorView> grad_params;  // one per trainable param; overwritten
  TensorView workspace;                 // workspace().backward bytes, or empty when that is 0
  std::uint64_t step = 0;
  const std::int32_t* labels = nullptr;
};

/// The elements from one row of `view` to the next, where a packed row of it holds `row_elements`
/// (in the layer's own layout): its row stride, else `row_elements` (Note [Dense block storage]).
std::int64_t row_pitch(const TensorView& view, std::int64_t row_elements) noexcept;

/// Whether `part` (rows of `part_row` elements when packed) already lies in `whole` (rows of
/// `whole_row`) from element `offset` of whole's first row on, row for row: same data address, same
/// row pitch. What a concatenation need not copy (Note [Dense block storage]).
bool lies_in_place(const TensorView& part, std::int64_t part_row, const TensorView& whole,
                   std::int64_t whole_row, std::int64_t offset) noexcept;

/// Scratch memory of a layer's forward and of its backward. The plan allocates it around each pass
/// (Note [Workspace]).
struct WorkspaceBytes {
  std::size_t forward = 0;
  std::size_t backward = 0;
  bool operator==(const WorkspaceBytes& o) const noexcept {
    return forward == o.forward && backward == o.backward;
  }
};

/// One choice limit_workspace() can make for a pass: the workspace it needs and the pass's time as
/// the layer measured it at setup (cudnnFind), negative when it was not measured.
struct WorkspaceOption {
  std::size_t workspace = 0;
  double seconds = -1.0;
};

/// No limit on a pass's workspace.
inline constexpr std::size_t kUnlimitedWorkspace = ~std::size_t{0};

/// One layer on one backend. Not thread-safe: one executor drives it. Methods throw
/// runtime::Error subclasses; they never allocate device memory (memory comes in through args).
class Layer {
 public:
  /// `layout`: the memory order of the output and of the work; `input_layout`: of the inputs
  /// (Note [Layout]). Layers that take only NCHW leave both at their default.
  Layer(LayerSpec spec, std::vector<runtime::Shape> input_shapes, DType dtype,
        Layout layout = Layout::Nchw, Layout input_layout = Layout::Nchw);
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;
  Layer(Layer&&) = delete;
  Layer& operator=(Layer&&) = delete;
  virtual ~Layer() = default;

  const LayerSpec& spec() const noexcept { return spec_; }
  const std::vector<runtime::Shape>& input_shapes() const noexcept { return input_shapes_; }
  const runtime::Shape& output_shape() const noexcept { return output_shape_; }
  DType dtype() const noexcept { return dtype_; }
  Layout layout() const noexcept { return layout_; }
  Layout input_layout() const noexcept { return input_layout_; }

  /// Scratch bytes forward and backward need (im2col columns, cuDNN workspace) with the current
  /// algorithm choice. Default none.
  virtual WorkspaceBytes workspace() const { return {}; }
  /// The most scratch either pass needs.
  std::size_t workspace_bytes() const;
  /// Layers that choose among algorithms (cuDNN convolutions) take, per pass, the fastest whose
  /// workspace is within `limit` (or, when none is, the one needing least); the default limit is
  /// kUnlimitedWorkspace. vDNN's per-layer choice under memory pressure, by the bytes the plan has
  /// free where the pass runs (Note [Workspace]). Others have one algorithm and ignore this.
  virtual void limit_workspace(const WorkspaceBytes& /*limit*/) {}
  /// The choices limit_workspace() makes for the forward (or backward) pass, one per distinct
  /// workspace, smallest first. Default: none (one algorithm).
  virtual std::vector<WorkspaceOption> workspace_options(bool /*backward*/) const { return {}; }
  /// The algorithms the passes run now, in a line, for layers that choose among several (what a
  /// limit changed shows in plan.txt); empty for the others.
  virtual std::string algorithms() const { return {}; }

  virtual void forward(const ForwardArgs& args) = 0;
  virtual void backward(const BackwardArgs& args) = 0;

 private:
  LayerSpec spec_;
  std::vector<runtime::Shape> input_shapes_;
  runtime::Shape output_shape_;
  DType dtype_;
  Layout layout_;
  Layout input_layout_;
};

/// How layers are built.
struct LayerOptions {
  DType dtype = DType::F32;
  std::uint64_t seed = 0;  // layers that draw random numbers (Dropout)
  /// Backend::Cuda: the device context whose compute stream and cuDNN/cuBLAS handles the layer
  /// uses (must outlive the layer). Unused on the CPU.
  runtime::cuda::DeviceContext* cuda = nullptr;
  bool deterministic = false;  // only deterministic algorithms: bitwise reproducible runs
  bool allow_tf32 = true;      // TF32 tensor-core math in convolutions (as PyTorch's default)
  /// Setup results shared between layers (convolution algorithms measured once per problem);
  /// null: every layer does its own setup. Must outlive the construction of the layers.
  LayerCache* cache = nullptr;
  /// The setup cache on disk (runtime/DiskCache.hpp) that graph::LayerSet hands its LayerCache,
  /// so measured convolution algorithms persist between runs; null: none. Not owned; must
  /// outlive the construction of the layers.
  runtime::DiskCache* disk_cache = nullptr;
  /// Memory order of the layer's output (and of its work), and of its inputs (Note [Layout]). The
  /// registry refuses a layer that cannot take the pair asked for.
  Layout layout = Layout::Nchw;
  Layout input_layout = Layout::Nchw;
  /// Loss layers: torch.nn.CrossEntropyLoss's label_smoothing eps in [0, 1]: the target is
  /// (1 - eps) * onehot + eps / K over K classes.
  double label_smoothing = 0.0;
  /// Batch norm: the group whose ranks its training statistics and input-gradient sums are taken
  /// over (synchronized batch norm, Note [Data parallelism]); not owned, outlives the layers. Null
  /// or a group of one: this rank's batch alone.
  runtime::Communicator* batch_norm_group = nullptr;
  /// BF16 layers: the parameters layers::param_read_in_precision names come as bf16 views in the
  /// layer's weight layout, the copies graph::ParameterStore rounds once per step (Note
  /// [Precision]), so the layer reserves no scratch to round them on each use. False: they come
  /// in F32 and the layer rounds them itself, into its workspace.
  bool bf16_weight_copies = false;
};

}  // namespace vdnn::layers
