// cuDNN convolution: descriptors and algorithm choices are made once at construction; each pass
// is then a few cuDNN calls on the compute stream with the workspace the caller provides, one per
// batch chunk when the pass runs chunked (Note [Batch chunks] in docs/ARCHITECTURE.md), and for
// conv2d_relu the epilogue's own kernels (Note [Fusion]). Measured choices persist in the setup
// cache on disk, checked against cuDNN before use (Note [Cost model]).
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

// Note [Batch chunks]: the batch splits into this many equal chunks (those that divide it) for a
// direction whose fastest algorithm needs more than kChunkFromBytes of workspace; smaller
// workspaces buy no memory worth another cudnnFind.
constexpr std::array<std::int64_t, 4> kChunkCounts{2, 4, 8, 16};
constexpr std::size_t kChunkFromBytes = std::size_t{16} << 20;
// cudnnFind runs every candidate on the problem it is given. Past this size (the larger of a
// problem's input and output) the per-sample work fills the GPU anyway, so the candidates are timed
// on the largest batch chunk within it and each takes that chunk's time times the chunks (VGG-16
// at batch 256 spent 24 s of its start in cudnnFind; Note [Batch chunks]).
constexpr std::size_t kTimedBytes = std::size_t{256} << 20;

// The descriptors of one convolution problem, every tensor in the layout the convolution runs in
// (Note [Layout]: NHWC runs with KRSC filters) and of the layer's dtype (BF16: cuDNN's pseudo-bf16
// configuration, F32 compute on the convolution descriptor; the bias, F32, is used in F32 only).
struct Descriptors {
  Descriptors(const Conv2dSpec& spec, const Shape& x_shape, const Shape& w_shape,
              const Shape& y_shape, cudnnMathType_t math, runtime::Layout layout,
              runtime::DType dtype)
      : x(x_shape, layout, dtype),
        y(y_shape, layout, dtype),
        w(w_shape, layout, dtype),
        conv(spec, math) {
    if (spec.bias) bias.emplace(Shape::nchw(1, spec.out_channels, 1, 1), layout);
  }
  TensorDescriptor x;
  TensorDescriptor y;  // also the output gradient
  FilterDescriptor w;
  ConvolutionDescriptor conv;
  std::optional<TensorDescriptor> bias;
};

// One convolution problem: the layer's own (chunks 1) or one batch chunk of it.
struct Problem {
  std::int64_t chunks = 1;
  Descriptors d;
  std::size_t bytes = 0;  // the larger of its input and output
};

// One algorithm of one direction with the math type it was ranked under (cuDNN runs with the math
// type on the descriptor, so that is set again before every call), its exact workspace and the
// number of batch chunks it runs in.
template <typename Algo>
struct AlgoChoice {
  Algo algo{};
  cudnnMathType_t math = CUDNN_FMA_MATH;
  std::size_t workspace = 0;
  double seconds = -1.0;  // cudnnFind's time (of every chunk); negative when ranked by heuristics
  std::int64_t chunks = 1;
};

// The eligible algorithms of one direction, fastest first.
template <typename Algo>
struct AlgoChoices {
  std::vector<AlgoChoice<Algo>> ranked;
  // The fastest whose workspace is within `limit`, else the one that needs least.
  const AlgoChoice<Algo>& pick(std::size_t limit) const {
    const AlgoChoice<Algo>* smallest = &ranked.front();
    for (const AlgoChoice<Algo>& choice : ranked) {
      if (choice.workspace <= limit) return choice;
      if (choice.workspace < smallest->workspace) smallest = &choice;
    }
    return *smallest;
  }
};

// How candidates are ranked and which are eligible.
struct SearchPolicy {
  cudnnMathType_t math = CUDNN_FMA_MATH;  // the descriptor's math type while ranking
  bool measure = false;                   // cudnnFind* timings, else cuDNN's heuristic order
  bool deterministic = false;             // CUDNN_DETERMINISTIC algorithms only
  bool allow_tf32 = false;                // tensor-op math too (TF32, or bf16), else FMA only
  /// bf16: only tensor-op candidates where cuDNN offers one. cudnnFind ranks bf16's other paths
  /// (the atomic weight-gradient algorithm 0 among them) close to the tensor-op ones, but in a
  /// training step they run up to 10x slower (DenseNet-121's 1x1 weight gradients on the H200).
  bool tensor_ops_only = false;
};

// The cuDNN entry points of each direction, so that one search routine serves all three.
struct ForwardApi {
  using Algo = cudnnConvolutionFwdAlgo_t;
  using Perf = cudnnConvolutionFwdAlgoPerf_t;
  static constexpr const char* kName = "forward";
  static int capacity(cudnnHandle_t h) {
    int count = 0;
    VDNN_CHECK_CUDNN(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &count));
    return count;
  }
  static int rank(cudnnHandle_t h, const Descriptors& d, bool measure, int capacity, Perf* perf) {
    int count = 0;
    if (measure) {
      VDNN_CHECK_CUDNN(cudnnFindConvolutionForwardAlgorithm(h, d.x.get(), d.w.get(), d.conv.get(),
                                                            d.y.get(), capacity, &count, perf));
    } else {
      VDNN_CHECK_CUDNN(cudnnGetConvolutionForwardAlgorithm_v7(h, d.x.get(), d.w.get(), d.conv.get(),
                                                              d.y.get(), capacity, &count, perf));
    }
    return count;
  }
  static cudnnStatus_t workspace(cudnnHandle_t h, const Descriptors& d, Algo algo,
                                 std::size_t* bytes) {
    return cudnnGetConvolutionForwardWorkspaceSize(h, d.x.get(), d.w.get(), d.conv.get(), d.y.get(),
                                                   algo, bytes);
  }
};

struct BackwardDataApi {
  using Algo = cudnnConvolutionBwdDataAlgo_t;
  using Perf = cudnnConvolutionBwdDataAlgoPerf_t;
  static constexpr const char* kName = "backward-data";
  static int capacity(cudnnHandle_t h) {
    int count = 0;
    VDNN_CHECK_CUDNN(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &count));
    return count;
  }
  static int rank(cudnnHandle_t h, const Descriptors& d, bool measure, int capacity, Perf* perf) {
    int count = 0;
    if (measure) {
      VDNN_CHECK_CUDNN(cudnnFindConvolutionBackwardDataAlgorithm(
          h, d.w.get(), d.y.get(), d.conv.get(), d.x.get(), capacity, &count, perf));
    } else {
      VDNN_CHECK_CUDNN(cudnnGetConvolutionBackwardDataAlgorithm_v7(
          h, d.w.get(), d.y.get(), d.conv.get(), d.x.get(), capacity, &count, perf));
    }
    return count;
  }
  static cudnnStatus_t workspace(cudnnHandle_t h, const Descriptors& d, Algo algo,
                                 std::size_t* bytes) {
    return cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w.get(), d.y.get(), d.conv.get(),
                                                        d.x.get(), algo, bytes);
  }
};

struct BackwardFilterApi {
  using Algo = cudnnConvolutionBwdFilterAlgo_t;
  using Perf = cudnnConvolutionBwdFilterAlgoPerf_t;
  static constexpr const char* kName = "backward-filter";
  static int capacity(cudnnHandle_t h) {
    int count = 0;
    VDNN_CHECK_CUDNN(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &count));
    return count;
  }
  static int rank(cudnnHandle_t h, const Descriptors& d, bool measure, int capacity, Perf* perf) {
    int count = 0;
    if (measure) {
      VDNN_CHECK_CUDNN(cudnnFindConvolutionBackwardFilterAlgorithm(
          h, d.x.get(), d.y.get(), d.conv.get(), d.w.get(), capacity, &count, perf));
    } else {
      VDNN_CHECK_CUDNN(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
          h, d.x.get(), d.y.get(), d.conv.get(), d.w.get(), capacity, &count, perf));
    }
    return count;
  }
  static cudnnStatus_t workspace(cudnnHandle_t h, const Descriptors& d, Algo algo,
                                 std::size_t* bytes) {
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.x.get(), d.y.get(), d.conv.get(),
                                                          d.w.get(), algo, bytes);
  }
};

// Ranks the candidates of one direction and keeps the eligible ones in rank order. Leaves the
// descriptor's math type changed.
template <typename Api>
AlgoChoices<typename Api::Algo> choose(cudnnHandle_t handle, Descriptors& d,
                                       const SearchPolicy& policy) {
  d.conv.set_math(policy.math);
  const int capacity = Api::capacity(handle);
  std::vector<typename Api::Perf> perfs(static_cast<std::size_t>(capacity));
  const int count = Api::rank(handle, d, policy.measure, capacity, perfs.data());
  AlgoChoices<typename Api::Algo> choices;
  for (int i = 0; i < count; ++i) {
    const typename Api::Perf& perf = perfs[static_cast<std::size_t>(i)];
    if (perf.status != CUDNN_STATUS_SUCCESS ||
        (policy.deterministic && perf.determinism != CUDNN_DETERMINISTIC) ||
        (!policy.allow_tf32 && perf.mathType != CUDNN_FMA_MATH)) {
      continue;
    }
    // The workspace depends on the math type, and the ranking's own figure is not always exact.
    d.conv.set_math(perf.mathType);
    AlgoChoice<typename Api::Algo> choice{perf.algo, perf.mathType, 0,
                                          policy.measure ? perf.time * 1e-3 : -1.0};
    const cudnnStatus_t sized = Api::workspace(handle, d, perf.algo, &choice.workspace);
    if (sized == CUDNN_STATUS_NOT_SUPPORTED) continue;  // ranked, yet refused for this problem
    VDNN_CHECK_CUDNN(sized);
    choices.ranked.push_back(choice);
  }
  const auto tensor_op = [](const AlgoChoice<typename Api::Algo>& c) {
    return c.math == CUDNN_TENSOR_OP_MATH || c.math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
  };
  if (policy.tensor_ops_only &&
      std::any_of(choices.ranked.begin(), choices.ranked.end(), tensor_op)) {
    choices.ranked.erase(std::remove_if(choices.ranked.begin(), choices.ranked.end(),
                                        [&](const auto& c) { return !tensor_op(c); }),
                         choices.ranked.end());
  }
  if (choices.ranked.empty()) {
    throw runtime::CudaError(std::string("Conv2dCuda: cuDNN offers no ") + Api::kName +
                             " algorithm" + (policy.deterministic ? " that is deterministic" : "") +
                             (policy.allow_tf32 ? "" : " with FMA math") + " for this problem");
  }
  return choices;
}

// The problem cudnnFind times: the first (fewest chunks) within kTimedBytes, else the last.
Problem& problem_to_time(std::vector<Problem>& problems) {
  for (Problem& p : problems) {
    if (p.bytes <= kTimedBytes) return p;
  }
  return problems.back();
}

// The ranking `timed` of a problem of `timed_chunks` chunks carried to `problem`: the same
// algorithms in the same order, each with its workspace there (those cuDNN refuses there left
// out) and its time for the whole batch.
template <typename Api>
AlgoChoices<typename Api::Algo> carried(cudnnHandle_t handle, Problem& problem,
                                        const AlgoChoices<typename Api::Algo>& timed,
                                        std::int64_t timed_chunks) {
  AlgoChoices<typename Api::Algo> choices;
  for (AlgoChoice<typename Api::Algo> c : timed.ranked) {
    problem.d.conv.set_math(c.math);
    const cudnnStatus_t sized = Api::workspace(handle, problem.d, c.algo, &c.workspace);
    if (sized == CUDNN_STATUS_NOT_SUPPORTED) continue;
    VDNN_CHECK_CUDNN(sized);
    if (c.seconds >= 0.0) c.seconds *= static_cast<double>(timed_chunks);
    c.chunks = problem.chunks;
    choices.ranked.push_back(c);
  }
  if (choices.ranked.empty()) {
    throw runtime::CudaError(std::string("Conv2dCuda: cuDNN runs no ") + Api::kName +
                             " algorithm it ranked on a batch chunk on the batch of " +
                             std::to_string(problem.chunks) + " chunks");
  }
  return choices;
}

// The candidates of one direction over the whole batch and, when its fastest algorithm's workspace
// is large, over each batch chunk (Note [Batch chunks]); fastest first by cudnnFind's times on the
// problem it times (problem_to_time), every chunking of an algorithm taking the same time, fewer
// chunks first; else (heuristics) the i-th of any problem's ranking before the (i+1)-th, fewer
// chunks first.
template <typename Api>
AlgoChoices<typename Api::Algo> choose_chunked(cudnnHandle_t handle, std::vector<Problem>& problems,
                                               const SearchPolicy& policy) {
  using Choice = AlgoChoice<typename Api::Algo>;
  Problem& timed = policy.measure ? problem_to_time(problems) : problems.front();
  const AlgoChoices<typename Api::Algo> ranking = choose<Api>(handle, timed.d, policy);
  const auto ranked_for = [&](Problem& problem) {
    if (policy.measure) return carried<Api>(handle, problem, ranking, timed.chunks);
    AlgoChoices<typename Api::Algo> own =
        &problem == &timed ? ranking : choose<Api>(handle, problem.d, policy);
    for (Choice& c : own.ranked) c.chunks = problem.chunks;
    return own;
  };
  AlgoChoices<typename Api::Algo> whole = ranked_for(problems.front());
  if (whole.ranked.front().workspace <= kChunkFromBytes) return whole;
  std::vector<std::pair<std::size_t, Choice>> ranked;  // (rank in its problem, choice)
  for (Problem& problem : problems) {
    const AlgoChoices<typename Api::Algo> part = problem.chunks == 1 ? whole : ranked_for(problem);
    for (std::size_t r = 0; r < part.ranked.size(); ++r) ranked.emplace_back(r, part.ranked[r]);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [&policy](const auto& a, const auto& b) {
    return policy.measure ? a.second.seconds < b.second.seconds : a.first < b.first;
  });
  AlgoChoices<typename Api::Algo> choices;
  for (const auto& entry : ranked) choices.ranked.push_back(entry.second);
  return choices;
}

// The layer's problem, then one per chunk count that divides the batch.
std::vector<Problem> problems_of(const Conv2dSpec& spec, const Shape& x_shape, const Shape& w_shape,
                                 const Shape& y_shape, cudnnMathType_t math, runtime::Layout layout,
                                 runtime::DType dtype) {
  std::vector<Problem> problems;
  const auto bytes = [dtype](const Shape& x, const Shape& y) {
    return static_cast<std::size_t>(std::max(x.bytes(dtype), y.bytes(dtype)));
  };
  problems.push_back({1, Descriptors(spec, x_shape, w_shape, y_shape, math, layout, dtype),
                      bytes(x_shape, y_shape)});
  for (const std::int64_t chunks : kChunkCounts) {
    if (x_shape.n() % chunks != 0) continue;
    Shape x = x_shape;
    Shape y = y_shape;
    x[0] = y[0] = x_shape.n() / chunks;
    problems.push_back(
        {chunks, Descriptors(spec, x, w_shape, y, math, layout, dtype), bytes(x, y)});
  }
  return problems;
}

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
// those comes first in each pass's workspace, then the algorithm's (Note [Layout]). BF16 always
// stages the weight (a bf16 copy of the F32 master, in the layout the convolution runs in) and its
// gradient (cuDNN's bf16 dW, converted into the F32 gradient), and sums every bias gradient itself
// (cuDNN reduces no bf16 gradient into an F32 one); the weight copies are then bf16-sized, the
// converted input too (Note [Precision]).
struct Staging {
  Staging(const Shape& x_shape, const Shape& w_shape, const Shape& y_shape, bool bias,
          runtime::Layout layout, runtime::Layout input_layout, runtime::DType dtype)
      : bf16(dtype == runtime::DType::BF16),
        weight(layout == runtime::Layout::Nhwc || bf16 ? aligned(w_shape.bytes(dtype)) : 0),
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
  // Scratch before the algorithm's workspace: forward (weight, input), backward (weight, its
  // gradient, input, the bias sums').
  std::size_t forward() const { return weight + input; }
  // Whether a weight (or weight gradient) view in `view`'s layout goes through the copy: always in
  // BF16, else an NHWC convolution given a KCRS one. The executor's are KRSC already
  // (graph::ParameterStore).
  bool staged(const TensorView& view) const {
    return bf16 || (weight > 0 && view.layout != runtime::Layout::Nhwc);
  }
  std::size_t backward() const { return 2 * weight + input + bias_scratch; }

  bool bf16;           // the layer's dtype is BF16
  std::size_t weight;  // bytes of the weight copy (KRSC F32 in NHWC, bf16 in BF16), else 0
  std::size_t input;   // bytes of the converted input, 0 when the input is in the layer's layout
  std::size_t bias_scratch = 0;
  std::optional<ChannelSums> bias_sums;  // NHWC with a bias
  TensorDescriptor w_kcrs;
  TensorDescriptor w_run;
  TensorDescriptor x_given;
  TensorDescriptor x_run;
};

// The setup cache's kind for convolution algorithms (runtime/DiskCache.hpp).
constexpr const char* kDiskKind = "conv";

template <typename Algo>
std::vector<StoredAlgo> stored(const AlgoChoices<Algo>& choices) {
  std::vector<StoredAlgo> list;
  for (const AlgoChoice<Algo>& c : choices.ranked) {
    list.push_back(
        {static_cast<int>(c.algo), static_cast<int>(c.math), c.workspace, c.seconds, c.chunks});
  }
  return list;
}

// A stored direction's candidates, each checked against cuDNN: the workspace it reports now for
// that algorithm, math type and batch chunking must succeed and equal the stored one (another
// cuDNN build, or a file from elsewhere, must not hand the layer a choice it cannot run). nullopt,
// with `why`, when any candidate fails. The entries' ranges were checked (check_conv_algos).
template <typename Api>
std::optional<AlgoChoices<typename Api::Algo>> restored(cudnnHandle_t handle,
                                                        std::vector<Problem>& problems,
                                                        const std::vector<StoredAlgo>& list,
                                                        std::string& why) {
  using Algo = typename Api::Algo;
  AlgoChoices<Algo> choices;
  for (const StoredAlgo& s : list) {
    const auto problem = std::find_if(problems.begin(), problems.end(),
                                      [&s](const Problem& p) { return p.chunks == s.chunks; });
    const std::string entry = std::string(Api::kName) + " algo " + std::to_string(s.algo) +
                              " math " + std::to_string(s.math) + " in " +
                              std::to_string(s.chunks) + " chunks";
    if (problem == problems.end()) {
      why = entry + ": no such batch chunking";
      return std::nullopt;
    }
    AlgoChoice<Algo> c{static_cast<Algo>(s.algo), static_cast<cudnnMathType_t>(s.math), 0,
                       s.seconds, s.chunks};
    problem->d.conv.set_math(c.math);
    const cudnnStatus_t sized = Api::workspace(handle, problem->d, c.algo, &c.workspace);
    if (sized != CUDNN_STATUS_SUCCESS) {
      why = entry + ": cuDNN refuses it (" + cudnnGetErrorString(sized) + ")";
      return std::nullopt;
    }
    if (c.workspace != s.workspace) {
      why = entry + ": workspace " + std::to_string(c.workspace) + " bytes, stored " +
            std::to_string(s.workspace);
      return std::nullopt;
    }
    choices.ranked.push_back(c);
  }
  return choices;
}

// Tensor-op math: TF32 in F32 where allowed; bf16 needs it (and allow_tf32 means nothing there).
bool tensor_ops(const LayerOptions& options) {
  return options.allow_tf32 || options.dtype == runtime::DType::BF16;
}

// FMA math rules TF32 out (cuDNN's default math allows it on Ampere and later).
cudnnMathType_t search_math(const LayerOptions& options) {
  return tensor_ops(options) ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
}

}  // namespace

struct Conv2dCuda::Impl {
  Impl(runtime::cuda::DeviceContext& device, const Conv2dSpec& spec, const Shape& x_shape,
       const Shape& w_shape, const Shape& y_shape, const LayerOptions& options)
      : context(&device),
        problems(problems_of(spec, x_shape, w_shape, y_shape, search_math(options), options.layout,
                             options.dtype)),
        staging(x_shape, w_shape, y_shape, spec.bias, options.layout, options.input_layout,
                options.dtype) {
    // Measuring runs every candidate, so its choice varies with timing noise; deterministic runs
    // need the same choice on every construction, which the heuristic ranking gives.
    const SearchPolicy policy{search_math(options), !options.deterministic, options.deterministic,
                              tensor_ops(options), options.dtype == runtime::DType::BF16};
    const std::string key = cache_key(spec, x_shape, policy, options.layout, options.dtype);
    if (const Choices* cached = options.cache ? options.cache->find<Choices>(key) : nullptr) {
      choices = *cached;
      return;
    }
    const cudnnHandle_t handle = device.cudnn();
    runtime::DiskCache* disk = options.cache != nullptr ? options.cache->disk() : nullptr;
    std::optional<Choices> loaded;
    if (disk != nullptr) loaded = load(*disk, key, handle, policy);
    if (loaded) {
      choices = std::move(*loaded);
    } else {
      choices.forward = choose_chunked<ForwardApi>(handle, problems, policy);
      choices.backward_data = choose_chunked<BackwardDataApi>(handle, problems, policy);
      choices.backward_filter = choose_chunked<BackwardFilterApi>(handle, problems, policy);
      if (disk != nullptr) {
        disk->store(kDiskKind, key,
                    to_text({stored(choices.forward), stored(choices.backward_data),
                             stored(choices.backward_filter)}));
      }
    }
    if (options.cache != nullptr) options.cache->put(key, choices);
  }

  // The algorithms of the three directions, measured once per problem (LayerCache).
  struct Choices {
    AlgoChoices<cudnnConvolutionFwdAlgo_t> forward;
    AlgoChoices<cudnnConvolutionBwdDataAlgo_t> backward_data;
    AlgoChoices<cudnnConvolutionBwdFilterAlgo_t> backward_filter;
  };

  // What an earlier run stored for `key`, when every candidate passes the checks; else nullopt,
  // with a warning through the cache's sink when there was an entry (it is then measured again).
  std::optional<Choices> load(const runtime::DiskCache& disk, const std::string& key,
                              cudnnHandle_t handle, const SearchPolicy& policy) {
    const std::optional<std::string> text = disk.load(kDiskKind, key);
    if (!text) return std::nullopt;
    ConvAlgoLimits limits;
    limits.forward_algos = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
    limits.backward_data_algos = CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
    limits.backward_filter_algos = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
    limits.math_types = static_cast<int>(CUDNN_FMA_MATH) + 1;
    if (!policy.allow_tf32) limits.only_math = static_cast<int>(CUDNN_FMA_MATH);
    for (const Problem& p : problems) limits.chunks.push_back(p.chunks);
    limits.measured = policy.measure;
    std::string why;
    std::optional<StoredConvAlgos> algos = parse_conv_algos(*text, why);
    if (algos) why = check_conv_algos(*algos, limits);
    std::optional<Choices> restored_choices;
    if (why.empty()) {
      auto fwd = restored<ForwardApi>(handle, problems, algos->forward, why);
      auto bwd_data = fwd ? restored<BackwardDataApi>(handle, problems, algos->backward_data, why)
                          : std::nullopt;
      auto bwd_filter =
          bwd_data ? restored<BackwardFilterApi>(handle, problems, algos->backward_filter, why)
                   : std::nullopt;
      if (bwd_filter) restored_choices = Choices{*fwd, *bwd_data, *bwd_filter};
    }
    if (!restored_choices) {
      disk.warn("ignoring cache file " + disk.file(kDiskKind, key).string() +
                ": convolution algorithms unusable here (" + why + "); measuring again");
    }
    return restored_choices;
  }

  // BF16 problems rank other algorithms than F32's: the dtype is part of the key (F32 keys stay
  // as they were, so earlier runs' files still serve).
  static std::string cache_key(const Conv2dSpec& s, const Shape& x, const SearchPolicy& p,
                               runtime::Layout layout, runtime::DType dtype) {
    std::string key = std::string("conv2d ") + runtime::layout_name(layout) + " " + x.to_string();
    for (std::int64_t v : {s.out_channels, s.kernel[0], s.kernel[1], s.stride[0], s.stride[1],
                           s.padding[0], s.padding[1], s.dilation[0], s.dilation[1], s.groups}) {
      key += " " + std::to_string(v);
    }
    return key + (s.bias ? " bias" : "") + " math" + std::to_string(static_cast<int>(p.math)) +
           (p.measure ? " measured" : "") + (p.deterministic ? " deterministic" : "") +
           (p.tensor_ops_only ? " tensor-ops" : "") +
           (dtype == runtime::DType::F32 ? "" : std::string(" ") + runtime::dtype_name(dtype));
  }

  // The algorithm each direction runs under `limit` (set by limit_workspace, read by every pass),
  // the staging scratch taken off first.
  void pick(const WorkspaceBytes& limit) {
    const auto less = [](std::size_t bytes, std::size_t scratch) {
      return bytes == kUnlimitedWorkspace ? bytes : bytes - std::min(bytes, scratch);
    };
    forward = choices.forward.pick(less(limit.forward, staging.forward()));
    backward_data = choices.backward_data.pick(less(limit.backward, staging.backward()));
    backward_filter = choices.backward_filter.pick(less(limit.backward, staging.backward()));
  }

  // The descriptors `choice` runs with: those of its batch chunk.
  template <typename Choice>
  Descriptors& descriptors(const Choice& choice) {
    for (Problem& p : problems) {
      if (p.chunks == choice.chunks) return p.d;
    }
    throw runtime::Error("Conv2dCuda: no problem of " + std::to_string(choice.chunks) + " chunks");
  }
  Descriptors& whole() { return problems.front().d; }

  runtime::cuda::DeviceContext* context;
  std::vector<Problem> problems;  // the whole batch first, then its chunks
  Staging staging;
  Choices choices;
  AlgoChoice<cudnnConvolutionFwdAlgo_t> forward;
  AlgoChoice<cudnnConvolutionBwdDataAlgo_t> backward_data;
  AlgoChoice<cudnnConvolutionBwdFilterAlgo_t> backward_filter;
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
    return std::string(pass) + " algo " + std::to_string(static_cast<int>(choice.algo)) +
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

// The memory order of a weight view: KRSC (Layout::Nhwc) or KCRS.
runtime::Layout weight_layout(const TensorView& view) {
  return view.layout == runtime::Layout::Nhwc ? runtime::Layout::Nhwc : runtime::Layout::Nchw;
}

}  // namespace

// The weight the convolution reads: the parameter itself, or its staged copy at the front of the
// workspace (KRSC in NHWC; bf16 in BF16, Note [Precision]).
void* Conv2dCuda::staged_weight(const TensorView& weight, void* scratch) const {
  const Impl& m = *impl_;
  const Staging& st = m.staging;
  if (!st.staged(weight)) return weight.data;
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
  VDNN_EXPECTS(args.inputs.size() == 1 && views_match(args.params, param_shapes_),
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
  const auto& algo = m.forward;
  Descriptors& d = m.descriptors(algo);
  d.conv.set_math(algo.math);
  for (std::int64_t c = 0; c < algo.chunks; ++c) {
    VDNN_CHECK_CUDNN(cudnnConvolutionForward(
        handle, &kOne, d.x.get(), chunk(x, input_shapes()[0], dtype(), c, algo.chunks), d.w.get(),
        w, d.conv.get(), algo.algo, scratch + st.forward(), algo.workspace, &kZero, d.y.get(),
        chunk(args.output.data, output_shape(), dtype(), c, algo.chunks)));
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
    VDNN_CHECK_CUDNN(cudnnAddTensor(handle, &kOne, m.whole().bias->get(), args.params[1].data,
                                    &kOne, m.whole().y.get(), args.output.data));
  }
}

void Conv2dCuda::backward(const BackwardArgs& args) {
  VDNN_EXPECTS(args.inputs.size() == 1 && args.grad_inputs.size() == 1 &&
                   views_match(args.params, param_shapes_) &&
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
  // (BackwardArgs::grad_output).
  void* dy = args.grad_output.data;
  if (relu_ && st.bf16) {
    relu_mask_in_place(stream, args.output.as<runtime::BFloat16>(),
                       args.grad_output.as<runtime::BFloat16>(), output_shape().numel());
  } else if (relu_) {
    relu_mask_in_place(stream, args.output.as<float>(), args.grad_output.as<float>(),
                       output_shape().numel());
  }
  char* scratch = static_cast<char*>(args.workspace.data);
  if (st.bias_sums) {
    // The bias gradient in FP32 (bf16 elements read exactly), into the F32 parameter gradient.
    void* sums_scratch = scratch + 2 * st.weight + st.input;
    float* db = args.grad_params[1].as<float>();
    if (st.bf16) {
      st.bias_sums->sums(stream, bf16(dy), sums_scratch, db);
    } else {
      st.bias_sums->sums(stream, static_cast<const float*>(dy), sums_scratch, db);
    }
  } else if (spec_.bias) {
    VDNN_CHECK_CUDNN(cudnnConvolutionBackwardBias(handle, &kOne, m.whole().y.get(), dy, &kZero,
                                                  m.whole().bias->get(), args.grad_params[1].data));
  }
  char* algo_workspace = scratch + st.backward();
  void* x = staged_input(args.inputs[0], scratch + 2 * st.weight);
  const TensorView& dw_view = args.grad_params[0];
  void* dw = st.staged(dw_view) ? scratch + st.weight : dw_view.data;
  const auto& filter_algo = m.backward_filter;
  Descriptors& fd = m.descriptors(filter_algo);
  fd.conv.set_math(filter_algo.math);
  for (std::int64_t c = 0; c < filter_algo.chunks; ++c) {
    // F32: the chunks' gradients add up in cuDNN's output. BF16: each chunk's bf16 dW is added to
    // the F32 gradient in FP32, so that the sum is not rounded to bf16 chunk by chunk.
    VDNN_CHECK_CUDNN(cudnnConvolutionBackwardFilter(
        handle, &kOne, fd.x.get(), chunk(x, input_shapes()[0], dtype(), c, filter_algo.chunks),
        fd.y.get(), chunk(dy, output_shape(), dtype(), c, filter_algo.chunks), fd.conv.get(),
        filter_algo.algo, algo_workspace, filter_algo.workspace, c == 0 || st.bf16 ? &kZero : &kOne,
        fd.w.get(), dw));
    if (st.bf16) {
      convert_layout(stream, bf16(dw), layout(), dw_view.as<float>(), weight_layout(dw_view),
                     param_shapes_[0], /*accumulate=*/c > 0);
    }
  }
  if (st.staged(dw_view) && !st.bf16) convert(handle, st.w_run, dw, st.w_kcrs, dw_view.data);
  if (dx.tensor.empty()) return;
  void* w = staged_weight(args.params[0], scratch);
  const auto& data_algo = m.backward_data;
  Descriptors& dd = m.descriptors(data_algo);
  dd.conv.set_math(data_algo.math);
  for (std::int64_t c = 0; c < data_algo.chunks; ++c) {
    VDNN_CHECK_CUDNN(cudnnConvolutionBackwardData(
        handle, &kOne, dd.w.get(), w, dd.y.get(),
        chunk(dy, output_shape(), dtype(), c, data_algo.chunks), dd.conv.get(), data_algo.algo,
        algo_workspace, data_algo.workspace, dx.accumulate ? &kOne : &kZero, dd.x.get(),
        chunk(dx.tensor.data, input_shapes()[0], dtype(), c, data_algo.chunks)));
  }
}

}  // namespace vdnn::layers::cuda
