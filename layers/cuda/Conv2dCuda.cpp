// cuDNN convolution: engines and their execution plans are chosen once at construction
// (ConvSearch, Note [Convolution plans]); each pass then runs its plan on the compute stream with
// the workspace the caller provides, once per batch chunk when the pass runs chunked (Note [Batch
// chunks] in docs/ARCHITECTURE.md), and for conv2d_relu the epilogue's own kernels (Note
// [Fusion]). Measured choices persist in the setup cache on disk, checked against cuDNN before
// use (Note [Cost model]).
#include "layers/cuda/Conv2dCuda.hpp"

#include <cuda_bf16.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "layers/StoredConvAlgos.hpp"
#include "layers/cuda/ChannelSums.hpp"
#include "layers/cuda/ConvEpilogue.hpp"
#include "layers/cuda/ConvSearch.hpp"
#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/CudnnDescriptors.hpp"
#include "layers/cuda/ElementwiseKernels.hpp"
#include "runtime/ByteSize.hpp"
#include "runtime/DiskCache.hpp"
#include "runtime/Error.hpp"
#include "runtime/MemoryResource.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {
namespace {

constexpr float kOne = 1.0f;
constexpr float kZero = 0.0f;

// Chunk `c` of `chunks` equal batch chunks of `data`, a tensor of `shape` and `dtype` (the batch is
// the outermost dimension in both layouts).
void* chunk(void* data, const Shape& shape, runtime::DType dtype, std::int64_t c,
            std::int64_t chunks) {
  return static_cast<char*>(data) + static_cast<std::size_t>(shape.bytes(dtype)) /
                                        static_cast<std::size_t>(chunks) *
                                        static_cast<std::size_t>(c);
}

std::size_t aligned(std::size_t bytes) { return runtime::MemoryResource::align_up(bytes); }

// In NHWC the weight runs KRSC while the parameter stays KCRS, an NCHW input (the network's) is
// converted for the convolution, and the bias gradient is our own channel sum: the scratch of
// those comes first in each pass's workspace, then the engine's (Note [Layout]). BF16 stages the
// weight's gradient (cuDNN's bf16 dW, converted into the F32 gradient) and sums every bias gradient
// itself (cuDNN reduces no bf16 gradient into an F32 one); it reads the weight as the executor's
// bf16 copy (LayerOptions::bf16_weight_copies), else stages it too: a bf16 copy of the F32 master
// in the layout the convolution runs in. The staged copies are then bf16-sized, the converted input
// too (Note [Precision]).
struct Staging {
  Staging(const Shape& x_shape, const Shape& w_shape, const Shape& y_shape, bool bias,
          runtime::Layout layout, runtime::Layout input_layout, runtime::DType dtype, bool copies)
      : bf16(dtype == runtime::DType::BF16),
        nhwc(layout == runtime::Layout::Nhwc),
        grad(nhwc || bf16 ? aligned(w_shape.bytes(dtype)) : 0),
        weight(bf16 && copies ? 0 : grad),
        input(input_layout != layout ? aligned(x_shape.bytes(dtype)) : 0),
        w_kcrs(w_shape),
        w_run(w_shape, layout),
        x_given(x_shape, input_layout),
        x_run(x_shape, layout) {
    if (bias && layout == runtime::Layout::Nhwc) {
      bias_sums.emplace(y_shape.n() * y_shape.h() * y_shape.w(), y_shape.c());
    } else if (bias && bf16) {
      bias_sums.emplace(y_shape.n(), y_shape.c(), y_shape.h() * y_shape.w());
    }
    if (bias_sums) bias_scratch = aligned(bias_sums->scratch_bytes());
  }
  // Scratch before the engine's workspace: forward (weight, input), backward (weight, its
  // gradient, input, the bias sums').
  std::size_t forward() const { return weight + input; }
  // Whether a weight (or weight gradient) view goes through a copy: in BF16 an F32 one (the
  // weight's bf16 copy runs as it is), else an NHWC convolution given a KCRS one. The executor's
  // are KRSC already (graph::ParameterStore).
  bool staged(const TensorView& view) const {
    if (bf16) return view.dtype != runtime::DType::BF16;
    return nhwc && view.layout != runtime::Layout::Nhwc;
  }
  std::size_t backward() const { return weight + grad + input + bias_scratch; }

  bool bf16;         // the layer's dtype is BF16
  bool nhwc;         // the convolution runs NHWC (KRSC weights)
  std::size_t grad;  // bytes of the weight gradient's copy (KRSC F32 in NHWC, bf16 in BF16), else 0
  std::size_t weight;  // bytes of the weight's copy: as `grad`, but 0 given bf16 weight copies
  std::size_t input;   // bytes of the converted input, 0 when the input is in the layer's layout
  std::size_t bias_scratch = 0;
  std::optional<ChannelSums> bias_sums;  // NHWC with a bias
  TensorDescriptor w_kcrs;
  TensorDescriptor w_run;
  TensorDescriptor x_given;
  TensorDescriptor x_run;
};

// The setup cache's kind for convolution engines (runtime/DiskCache.hpp).
constexpr const char* kDiskKind = "conv";

// Tensor-op math: TF32 in F32 where allowed; bf16 needs it (and allow_tf32 means nothing there).
bool tensor_ops(const LayerOptions& options) {
  return options.allow_tf32 || options.dtype == runtime::DType::BF16;
}

}  // namespace

struct Conv2dCuda::Impl {
  Impl(runtime::cuda::DeviceContext& device, const Conv2dSpec& spec, const Shape& x_shape,
       const Shape& w_shape, const Shape& y_shape, const LayerOptions& options)
      : context(&device),
        staging(x_shape, w_shape, y_shape, spec.bias, options.layout, options.input_layout,
                options.dtype, options.bf16_weight_copies),
        y(y_shape, options.layout, options.dtype) {
    if (spec.bias) bias.emplace(Shape::nchw(1, spec.out_channels, 1, 1), options.layout);
    // Measuring runs every candidate, so its choice varies with timing noise; deterministic runs
    // need the same choice on every construction, which the heuristic ranking gives.
    const bool bf16 = options.dtype == runtime::DType::BF16;
    const SearchPolicy policy{!options.deterministic, options.deterministic, tensor_ops(options),
                              bf16, spec.groups > 1};
    const std::string key = cache_key(spec, x_shape, policy, options.layout);
    if (const Choices* cached = options.cache ? options.cache->find<Choices>(key) : nullptr) {
      choices = *cached;
      return;
    }
    const cudnnHandle_t handle = device.cudnn();
    const std::vector<ConvProblem> problems =
        conv_problems(handle, spec, x_shape, w_shape, y_shape, options.layout, options.dtype);
    runtime::DiskCache* disk = options.cache != nullptr ? options.cache->disk() : nullptr;
    std::optional<Choices> loaded;
    if (disk != nullptr) loaded = load(*disk, key, handle, problems, policy);
    if (loaded) {
      choices = std::move(*loaded);
    } else {
      const auto search = [&](ConvDirection direction) {
        return search_candidates(handle, device.compute_stream(), direction, problems, policy);
      };
      choices = {search(ConvDirection::Forward), search(ConvDirection::BackwardData),
                 search(ConvDirection::BackwardFilter)};
      if (disk != nullptr) {
        disk->store(kDiskKind, key,
                    to_text({stored(choices.forward), stored(choices.backward_data),
                             stored(choices.backward_filter)}));
      }
    }
    if (options.cache != nullptr) options.cache->put(key, choices);
  }

  // The engines of the three directions with their plans, searched once per problem
  // (LayerCache).
  struct Choices {
    ConvCandidates forward;
    ConvCandidates backward_data;
    ConvCandidates backward_filter;
  };

  // What an earlier run stored for `key`, when every candidate passes the checks; else nullopt,
  // with a warning through the cache's sink when there was an entry (it is then searched again).
  static std::optional<Choices> load(const runtime::DiskCache& disk, const std::string& key,
                                     cudnnHandle_t handle, const std::vector<ConvProblem>& problems,
                                     const SearchPolicy& policy) {
    const std::optional<std::string> text = disk.load(kDiskKind, key);
    if (!text) return std::nullopt;
    ConvAlgoLimits limits;
    limits.knob_types = CUDNN_KNOB_TYPE_COUNTS;
    for (const ConvProblem& p : problems) limits.chunks.push_back(p.chunks);
    limits.measured = policy.measure;
    std::string why;
    std::optional<StoredConvAlgos> algos = parse_conv_algos(*text, why);
    if (algos) why = check_conv_algos(*algos, limits);
    std::optional<Choices> restored;
    if (why.empty()) {
      const auto restore = [&](ConvDirection direction, const std::vector<StoredAlgo>& list) {
        return why.empty() ? restore_candidates(handle, direction, problems, list, why)
                           : std::nullopt;
      };
      auto fwd = restore(ConvDirection::Forward, algos->forward);
      auto bwd_data = restore(ConvDirection::BackwardData, algos->backward_data);
      auto bwd_filter = restore(ConvDirection::BackwardFilter, algos->backward_filter);
      if (fwd && bwd_data && bwd_filter) restored = Choices{*fwd, *bwd_data, *bwd_filter};
    }
    if (!restored) {
      disk.warn("ignoring cache file " + disk.file(kDiskKind, key).string() +
                ": convolution engines unusable here (" + why + "); searching again");
    }
    return restored;
  }

  // The layout, the input's shape, the spec and the search policy; BF16 problems rank other
  // engines than F32's.
  static std::string cache_key(const Conv2dSpec& s, const Shape& x, const SearchPolicy& p,
                               runtime::Layout layout) {
    std::string key =
        std::string("conv2d-engines ") + runtime::layout_name(layout) + " " + x.to_string();
    for (std::int64_t v : {s.out_channels, s.kernel[0], s.kernel[1], s.stride[0], s.stride[1],
                           s.padding[0], s.padding[1], s.dilation[0], s.dilation[1], s.groups}) {
      key += " " + std::to_string(v);
    }
    return key + (s.bias ? " bias" : "") +
           (p.bf16           ? " bf16"
            : p.tensor_cores ? " tf32"
                             : " fma") +
           (p.measure ? " measured" : "") + (p.deterministic ? " deterministic" : "") +
           (p.grouped ? " runtime-compiled" : "");
  }

  // The engine each direction runs under `limit` (set by limit_workspace, read by every pass),
  // the staging scratch taken off first.
  void pick(const WorkspaceBytes& limit) {
    const auto less = [](std::size_t bytes, std::size_t scratch) {
      return bytes == kUnlimitedWorkspace ? bytes : bytes - std::min(bytes, scratch);
    };
    forward = choices.forward.pick(less(limit.forward, staging.forward()));
    backward_data = choices.backward_data.pick(less(limit.backward, staging.backward()));
    backward_filter = choices.backward_filter.pick(less(limit.backward, staging.backward()));
  }

  runtime::cuda::DeviceContext* context;
  Staging staging;
  TensorDescriptor y;                    // the whole output, for the F32 bias calls
  std::optional<TensorDescriptor> bias;  // [1, Cout, 1, 1] F32
  Choices choices;
  ConvCandidate forward;
  ConvCandidate backward_data;
  ConvCandidate backward_filter;
};

namespace {

// The layouts a convolution runs in: NCHW, NHWC, or NHWC from an NCHW input (the network's).
bool supported(const LayerOptions& o) {
  return o.layout == o.input_layout || o.layout == runtime::Layout::Nhwc;
}

}  // namespace

Conv2dCuda::Conv2dCuda(const Conv2dSpec& spec, std::vector<Shape> input_shapes,
                       const LayerOptions& options)
    : Conv2dCuda(spec, spec, /*relu=*/false, std::move(input_shapes), options) {}

Conv2dCuda::Conv2dCuda(const Conv2dReluSpec& spec, std::vector<Shape> input_shapes,
                       const LayerOptions& options)
    : Conv2dCuda(spec, spec.conv, /*relu=*/true, std::move(input_shapes), options) {}

Conv2dCuda::Conv2dCuda(const LayerSpec& layer, const Conv2dSpec& spec, bool relu,
                       std::vector<Shape> input_shapes, const LayerOptions& options)
    : Layer(layer, std::move(input_shapes), options.dtype,
            supported(options) ? options.layout : runtime::Layout::Nchw,
            supported(options) ? options.input_layout : runtime::Layout::Nchw),
      spec_(spec),
      relu_(relu),
      param_shapes_(param_shapes(spec, this->input_shapes())) {
  LayerOptions run = options;
  run.layout = layout();
  run.input_layout = input_layout();
  impl_ =
      std::make_unique<Impl>(checked_context(options, "Conv2dCuda", Precisions::F32OrBf16), spec,
                             this->input_shapes()[0], param_shapes_[0], output_shape(), run);
  impl_->pick({kUnlimitedWorkspace, kUnlimitedWorkspace});
}

Conv2dCuda::~Conv2dCuda() = default;

WorkspaceBytes Conv2dCuda::workspace() const {
  const Impl& m = *impl_;
  return {m.staging.forward() + m.forward.workspace,
          m.staging.backward() + std::max(m.backward_data.workspace, m.backward_filter.workspace)};
}

void Conv2dCuda::limit_workspace(const WorkspaceBytes& limit) { impl_->pick(limit); }

std::vector<WorkspaceOption> Conv2dCuda::workspace_options(bool backward) const {
  const Impl::Choices& c = impl_->choices;
  std::vector<std::size_t> limits;
  auto add_limits = [&limits](const auto& choices) {
    for (const auto& choice : choices.ranked) limits.push_back(choice.workspace);
  };
  if (backward) {
    add_limits(c.backward_data);
    add_limits(c.backward_filter);
  } else {
    add_limits(c.forward);
  }
  std::sort(limits.begin(), limits.end());
  std::vector<WorkspaceOption> options;
  for (std::size_t limit : limits) {
    WorkspaceOption o;
    if (backward) {
      const auto& data = c.backward_data.pick(limit);
      const auto& filter = c.backward_filter.pick(limit);
      o.workspace = impl_->staging.backward() + std::max(data.workspace, filter.workspace);
      o.seconds = data.seconds < 0.0 || filter.seconds < 0.0 ? -1.0 : data.seconds + filter.seconds;
    } else {
      const auto& forward = c.forward.pick(limit);
      o = {impl_->staging.forward() + forward.workspace, forward.seconds};
    }
    if (options.empty() || options.back().workspace != o.workspace) options.push_back(o);
  }
  return options;
}

std::string Conv2dCuda::algorithms() const {
  const auto describe = [](const char* pass, const auto& choice) {
    return std::string(pass) + " engine " + std::to_string(choice.choice.engine) +
           (choice.chunks > 1 ? " in " + std::to_string(choice.chunks) + " chunks" : "") + " (" +
           runtime::format_bytes(choice.workspace) + ")";
  };
  const Impl& m = *impl_;
  return describe("forward", m.forward) + ", " + describe("data", m.backward_data) + ", " +
         describe("filter", m.backward_filter);
}

Conv2dCuda::PassChunks Conv2dCuda::chunks() const {
  return {impl_->forward.chunks, impl_->backward_data.chunks, impl_->backward_filter.chunks};
}

namespace {

// dst = src converted between the descriptors' layouts (cudnnTransformTensor), on the handle's
// stream.
void convert(cudnnHandle_t handle, const TensorDescriptor& from, const void* src,
             const TensorDescriptor& to, void* dst) {
  VDNN_CHECK_CUDNN(cudnnTransformTensor(handle, &kOne, from.get(), src, &kZero, to.get(), dst));
}

__nv_bfloat16* bf16(void* p) { return static_cast<__nv_bfloat16*>(p); }

// The fused ReLU's mask on the output gradient, in place, where no bias pass applies it.
void mask_relu(cudaStream_t stream, bool bf16_elements, const BackwardArgs& args, std::int64_t n) {
  if (bf16_elements) {
    relu_mask_in_place(stream, args.output.as<runtime::BFloat16>(),
                       args.grad_output.as<runtime::BFloat16>(), n);
  } else {
    relu_mask_in_place(stream, args.output.as<float>(), args.grad_output.as<float>(), n);
  }
}

// The memory order of a weight view: KRSC (Layout::Nhwc) or KCRS.
runtime::Layout weight_layout(const TensorView& view) {
  return view.layout == runtime::Layout::Nhwc ? runtime::Layout::Nhwc : runtime::Layout::Nchw;
}

}  // namespace

// The weight the convolution reads: the parameter itself (or the executor's bf16 copy of it), or
// its staged copy at the front of the workspace (KRSC in NHWC; bf16 in BF16, Note [Precision]).
void* Conv2dCuda::staged_weight(const TensorView& weight, void* scratch) const {
  const Impl& m = *impl_;
  const Staging& st = m.staging;
  if (!st.staged(weight)) {
    VDNN_EXPECTS(weight_layout(weight) == layout(),
                 "Conv2dCuda: a weight copy in another order than the convolution runs");
    return weight.data;
  }
  VDNN_EXPECTS(st.weight > 0,
               "Conv2dCuda: given the F32 weight but built for bf16 weight copies "
               "(LayerOptions::bf16_weight_copies)");
  if (st.bf16) {
    convert_layout(m.context->compute_stream(), weight.as<float>(), weight_layout(weight),
                   bf16(scratch), layout(), param_shapes_[0]);
  } else {
    convert(m.context->cudnn(), st.w_kcrs, weight.data, st.w_run, scratch);
  }
  return scratch;
}

// The input the convolution reads: the view itself, or, when it comes in another layout (the
// network's NCHW input to an NHWC convolution), its copy in the layer's layout at `scratch`.
void* Conv2dCuda::staged_input(const TensorView& x, void* scratch) const {
  const Impl& m = *impl_;
  const Staging& st = m.staging;
  if (st.input == 0) return x.data;
  if (st.bf16) {
    convert_layout(m.context->compute_stream(), bf16(x.data), input_layout(), bf16(scratch),
                   layout(), input_shapes()[0]);
  } else {
    convert(m.context->cudnn(), st.x_given, x.data, st.x_run, scratch);
  }
  return scratch;
}

void Conv2dCuda::forward(const ForwardArgs& args) {
  VDNN_EXPECTS(
      args.inputs.size() == 1 && params_match(args.params, param_shapes_, dtype() == DType::BF16),
      "Conv2dCuda::forward: expected one input and the weight (and bias) views of the "
      "parameter shapes");
  VDNN_EXPECTS(view_matches(args.inputs[0], input_shapes()[0], dtype()) &&
                   view_matches(args.output, output_shape(), dtype()) &&
                   workspace_fits(args.workspace, workspace().forward),
               "Conv2dCuda::forward: input, output or workspace view does not match the layer");
  Impl& m = *impl_;
  const Staging& st = m.staging;
  const cudnnHandle_t handle = m.context->cudnn();
  const cudaStream_t stream = m.context->compute_stream();
  char* scratch = static_cast<char*>(args.workspace.data);
  void* w = staged_weight(args.params[0], scratch);
  void* x = staged_input(args.inputs[0], scratch + st.weight);
  const ConvCandidate& engine = m.forward;
  const ConvPlan& plan = engine.plan(/*accumulate=*/false);
  for (std::int64_t c = 0; c < engine.chunks; ++c) {
    plan.run(handle, chunk(x, input_shapes()[0], dtype(), c, engine.chunks), w,
             chunk(args.output.data, output_shape(), dtype(), c, engine.chunks),
             scratch + st.forward());
  }
  const float* bias = spec_.bias ? args.params[1].as<float>() : nullptr;
  if (st.bf16) {
    // The bias in FP32 from the F32 parameter, rounded once (and the ReLU after the rounding, as
    // the unfused chain runs it).
    if (relu_ || bias != nullptr) {
      bias_relu_forward(stream, bf16(args.output.data), bias, output_shape(), layout(), relu_);
    }
  } else if (relu_) {
    // One pass for the bias and the ReLU, rounded as cudnnAddTensor and ReluCuda round them.
    bias_relu_forward(stream, args.output.as<float>(), bias, output_shape(), layout());
  } else if (spec_.bias) {
    VDNN_CHECK_CUDNN(cudnnAddTensor(handle, &kOne, m.bias->get(), args.params[1].data, &kOne,
                                    m.y.get(), args.output.data));
  }
}

void Conv2dCuda::backward(const BackwardArgs& args) {
  VDNN_EXPECTS(args.inputs.size() == 1 && args.grad_inputs.size() == 1 &&
                   params_match(args.params, param_shapes_, dtype() == DType::BF16) &&
                   views_match(args.grad_params, param_shapes_),
               "Conv2dCuda::backward: expected one input, one input gradient and the weight (and "
               "bias) views with their gradients, of the parameter shapes");
  const GradTarget& dx = args.grad_inputs[0];
  VDNN_EXPECTS(view_matches(args.inputs[0], input_shapes()[0], dtype()) &&
                   view_matches(args.grad_output, output_shape(), dtype()) &&
                   (!relu_ || view_matches(args.output, output_shape(), dtype())) &&
                   (dx.tensor.empty() || view_matches(dx.tensor, input_shapes()[0], dtype())) &&
                   workspace_fits(args.workspace, workspace().backward),
               "Conv2dCuda::backward: a view does not match the layer");
  Impl& m = *impl_;
  const Staging& st = m.staging;
  VDNN_EXPECTS(dx.tensor.empty() || st.input == 0,
               "Conv2dCuda::backward: a convolution that converts its input's layout reads the "
               "network input, which takes no gradient");
  const cudnnHandle_t handle = m.context->cudnn();
  const cudaStream_t stream = m.context->compute_stream();
  // The convolution's gradient: dy, with the fused ReLU masked in place
  // (BackwardArgs::grad_output), in the bias gradient's pass where there is one.
  void* dy = args.grad_output.data;
  char* scratch = static_cast<char*>(args.workspace.data);
  if (st.bias_sums) {
    // The bias gradient in FP32 (bf16 elements read exactly), into the F32 parameter gradient.
    void* sums_scratch = scratch + st.weight + st.grad + st.input;
    float* db = args.grad_params[1].as<float>();
    if (st.bf16 && relu_) {
      st.bias_sums->masked_sums(stream, bf16(args.output.data), bf16(dy), sums_scratch, db);
    } else if (st.bf16) {
      st.bias_sums->sums(stream, bf16(dy), sums_scratch, db);
    } else if (relu_) {
      st.bias_sums->masked_sums(stream, args.output.as<float>(), static_cast<float*>(dy),
                                sums_scratch, db);
    } else {
      st.bias_sums->sums(stream, static_cast<const float*>(dy), sums_scratch, db);
    }
  } else {
    if (relu_) mask_relu(stream, st.bf16, args, output_shape().numel());
    if (spec_.bias) {
      VDNN_CHECK_CUDNN(cudnnConvolutionBackwardBias(handle, &kOne, m.y.get(), dy, &kZero,
                                                    m.bias->get(), args.grad_params[1].data));
    }
  }
  char* algo_workspace = scratch + st.backward();
  void* x = staged_input(args.inputs[0], scratch + st.weight + st.grad);
  const TensorView& dw_view = args.grad_params[0];
  void* dw = st.staged(dw_view) ? scratch + st.weight : dw_view.data;
  const ConvCandidate& filter = m.backward_filter;
  for (std::int64_t c = 0; c < filter.chunks; ++c) {
    // F32: the chunks' gradients add up in cuDNN's output. BF16: each chunk's bf16 dW is added to
    // the F32 gradient in FP32, so that the sum is not rounded to bf16 chunk by chunk.
    filter.plan(/*accumulate=*/c > 0 && !st.bf16)
        .run(handle, chunk(x, input_shapes()[0], dtype(), c, filter.chunks), dw,
             chunk(dy, output_shape(), dtype(), c, filter.chunks), algo_workspace);
    if (st.bf16) {
      convert_layout(stream, bf16(dw), layout(), dw_view.as<float>(), weight_layout(dw_view),
                     param_shapes_[0], /*accumulate=*/c > 0);
    }
  }
  if (st.staged(dw_view) && !st.bf16) convert(handle, st.w_run, dw, st.w_kcrs, dw_view.data);
  if (dx.tensor.empty()) return;
  void* w = staged_weight(args.params[0], scratch);
  const ConvCandidate& data = m.backward_data;
  const ConvPlan& plan = data.plan(dx.accumulate);
  for (std::int64_t c = 0; c < data.chunks; ++c) {
    plan.run(handle, chunk(dx.tensor.data, input_shapes()[0], dtype(), c, data.chunks), w,
             chunk(dy, output_shape(), dtype(), c, data.chunks), algo_workspace);
  }
}

}  // namespace vdnn::layers::cuda
