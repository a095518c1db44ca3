// The engine search of a convolution: eligible engines from cuDNN's heuristics, each with its
// plans, ranked by heuristics or by timing them on the device, over the batch and its chunks
// (Note [Convolution plans], Note [Batch chunks] in docs/ARCHITECTURE.md).
#include "layers/cuda/ConvSearch.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "layers/cuda/RawBuffer.hpp"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/CudaEvent.hpp"

namespace vdnn::layers::cuda {
namespace {

// Note [Batch chunks]: the batch splits into this many equal chunks (those that divide it) for a
// direction whose fastest engine needs more than kChunkFromBytes of workspace; smaller workspaces
// buy no memory worth another search.
constexpr std::array<std::int64_t, 4> kChunkCounts{2, 4, 8, 16};
constexpr std::size_t kChunkFromBytes = std::size_t{16} << 20;
// Timing runs every candidate on the problem it is given. Past this size (the larger of a
// problem's input and output) the per-sample work fills the GPU anyway, so the candidates are timed
// on the largest batch chunk within it and each takes that chunk's time times the chunks (VGG-16
// at batch 256 spent 24 s of its start timing candidates).
constexpr std::size_t kTimedBytes = std::size_t{256} << 20;
// Per problem, the heuristics' first eligible engines (their order is good: the fastest is almost
// always among them), plus the one that needs least workspace for tight budgets.
constexpr std::size_t kKeptCandidates = 8;
constexpr int kTimedRuns = 3;
// A candidate needing more workspace than this is not timed (nor kept): no budget gives it that.
constexpr std::size_t kMaxTimedWorkspace = std::size_t{4} << 30;

std::size_t index_of(ConvDirection direction) { return static_cast<std::size_t>(direction); }

// Whether `direction`'s pass may add into its output: the data gradient (into a gradient that
// other consumers wrote), the F32 weight gradient chunk by chunk (BF16 adds chunks itself, in
// FP32).
bool accumulates(ConvDirection direction, runtime::DType dtype, std::int64_t chunks) {
  return direction == ConvDirection::BackwardData ||
         (direction == ConvDirection::BackwardFilter && dtype == runtime::DType::F32 && chunks > 1);
}

ConvProblem make_problem(cudnnHandle_t handle, const Conv2dSpec& spec, const Shape& x,
                         const Shape& w, const Shape& y, runtime::Layout layout,
                         runtime::DType dtype, std::int64_t chunks) {
  ConvProblem p;
  p.chunks = chunks;
  p.x_bytes = static_cast<std::size_t>(x.bytes(dtype));
  p.w_bytes = static_cast<std::size_t>(w.bytes(dtype));
  p.y_bytes = static_cast<std::size_t>(y.bytes(dtype));
  // A chunk starts at a multiple of the chunk's bytes from its tensor's (aligned) start.
  const std::int64_t alignment =
      chunks == 1 ? alignment_of(0) : std::min(alignment_of(p.x_bytes), alignment_of(p.y_bytes));
  for (const ConvDirection d :
       {ConvDirection::Forward, ConvDirection::BackwardData, ConvDirection::BackwardFilter}) {
    const auto graph = [&](float beta) {
      return std::make_shared<const ConvGraph>(handle, d, spec, x, w, y, layout, dtype, beta,
                                               alignment);
    };
    p.overwrite[index_of(d)] = graph(0.0f);
    if (accumulates(d, dtype, chunks)) p.accumulate[index_of(d)] = graph(1.0f);
  }
  return p;
}

bool eligible(const EngineOffer& o, const SearchPolicy& policy) {
  if ((o.runtime_compiled && !policy.grouped) || o.down_converts || o.reduced_precision) {
    return false;
  }
  if (policy.deterministic && o.nondeterministic) return false;
  return policy.bf16 || policy.tensor_cores || !o.tensor_core;
}

// `choice`'s candidate on `problem`, its plans finalized; nullopt when cuDNN does not run it there.
std::optional<ConvCandidate> candidate_on(cudnnHandle_t handle, ConvDirection direction,
                                          const ConvProblem& problem, const EngineChoice& choice) {
  std::optional<ConvPlan> overwrite =
      ConvPlan::make(handle, problem.overwrite[index_of(direction)], choice);
  if (!overwrite) return std::nullopt;
  std::optional<ConvPlan> accumulate;
  if (const auto& graph = problem.accumulate[index_of(direction)]) {
    accumulate = ConvPlan::make(handle, graph, choice);
    if (!accumulate) return std::nullopt;
  }
  ConvCandidate c;
  c.choice = choice;
  c.workspace = std::max(overwrite->workspace(), accumulate ? accumulate->workspace() : 0);
  c.chunks = problem.chunks;
  c.plans = std::make_shared<const PassPlans>(PassPlans{std::move(*overwrite), accumulate});
  return c;
}

std::string no_engine(ConvDirection direction, const SearchPolicy& policy) {
  return std::string("Conv2dCuda: cuDNN offers no ") + direction_name(direction) + " engine" +
         (policy.deterministic ? " that is deterministic" : "") +
         (policy.bf16 || policy.tensor_cores ? "" : " with FMA math") + " for this problem";
}

// The eligible offers of `problem` in the heuristics' order with their plans: the first
// kKeptCandidates, and the one that needs least workspace when it is not among them.
ConvCandidates heuristic_candidates(cudnnHandle_t handle, ConvDirection direction,
                                    const ConvProblem& problem, const SearchPolicy& policy) {
  std::vector<EngineOffer> offers = problem.overwrite[index_of(direction)]->offers();
  offers.erase(std::remove_if(offers.begin(), offers.end(),
                              [&](const EngineOffer& o) { return !eligible(o, policy); }),
               offers.end());
  const auto tensor_core = [](const EngineOffer& o) { return o.tensor_core; };
  if (policy.bf16 && !policy.grouped && std::any_of(offers.begin(), offers.end(), tensor_core)) {
    offers.erase(std::remove_if(offers.begin(), offers.end(),
                                [&](const EngineOffer& o) { return !tensor_core(o); }),
                 offers.end());
  }
  std::vector<ConvCandidate> all;
  for (const EngineOffer& offer : offers) {
    if (std::optional<ConvCandidate> c = candidate_on(handle, direction, problem, offer.choice)) {
      all.push_back(std::move(*c));
    }
  }
  if (all.empty()) throw runtime::CudaError(no_engine(direction, policy));
  const auto least = std::min_element(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a.workspace < b.workspace;
  });
  ConvCandidates kept;
  const std::size_t first = std::min(all.size(), kKeptCandidates);
  kept.ranked.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(first));
  if (least - all.begin() >= static_cast<std::ptrdiff_t>(first)) kept.ranked.push_back(*least);
  return kept;
}

// Times each candidate's plan on `problem` (zeroed data) and ranks them fastest first; a candidate
// whose workspace does not fit beside the data in half the free device memory is left out.
void measure(cudnnHandle_t handle, cudaStream_t stream, const ConvProblem& problem,
             ConvCandidates& candidates) {
  std::size_t free = 0;
  std::size_t total = 0;
  VDNN_CHECK_CUDA(cudaMemGetInfo(&free, &total));
  const std::size_t data = problem.x_bytes + problem.w_bytes + problem.y_bytes;
  const std::size_t cap = std::min(kMaxTimedWorkspace, free / 2 > data ? free / 2 - data : 0);
  std::vector<ConvCandidate>& ranked = candidates.ranked;
  const auto beyond = [cap](const ConvCandidate& c) { return c.workspace > cap; };
  if (std::all_of(ranked.begin(), ranked.end(), beyond)) {
    const auto least =
        std::min_element(ranked.begin(), ranked.end(),
                         [](const auto& a, const auto& b) { return a.workspace < b.workspace; });
    throw runtime::OutOfMemory(
        "Conv2dCuda: no engine's workspace fits in half the device's free "
        "memory to time it",
        least->workspace, total - free, cap);
  }
  ranked.erase(std::remove_if(ranked.begin(), ranked.end(), beyond), ranked.end());
  std::size_t workspace = 1;
  for (const ConvCandidate& c : ranked) workspace = std::max(workspace, c.workspace);
  const DeviceBuffer x(problem.x_bytes);
  const DeviceBuffer w(problem.w_bytes);
  const DeviceBuffer y(problem.y_bytes);
  const DeviceBuffer scratch(workspace);
  VDNN_CHECK_CUDA(cudaMemsetAsync(x.as<void>(), 0, problem.x_bytes, stream));
  VDNN_CHECK_CUDA(cudaMemsetAsync(w.as<void>(), 0, problem.w_bytes, stream));
  VDNN_CHECK_CUDA(cudaMemsetAsync(y.as<void>(), 0, problem.y_bytes, stream));
  runtime::cuda::CudaEvent start(runtime::cuda::EventTiming::kEnabled);
  runtime::cuda::CudaEvent end(runtime::cuda::EventTiming::kEnabled);
  for (ConvCandidate& c : ranked) {
    const ConvPlan& plan = c.plan(false);
    plan.run(handle, x.as<void>(), w.as<void>(), y.as<void>(), scratch.as<void>());  // warm-up
    start.record(stream);
    for (int r = 0; r < kTimedRuns; ++r) {
      plan.run(handle, x.as<void>(), w.as<void>(), y.as<void>(), scratch.as<void>());
    }
    end.record(stream);
    end.synchronize();
    c.seconds = runtime::cuda::elapsed_ms(start, end) * 1e-3 / kTimedRuns;
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.seconds < b.seconds; });
}

// The problem timing runs on: the first (fewest chunks) within kTimedBytes, else the last.
const ConvProblem& problem_to_time(const std::vector<ConvProblem>& problems) {
  for (const ConvProblem& p : problems) {
    if (std::max(p.x_bytes, p.y_bytes) <= kTimedBytes) return p;
  }
  return problems.back();
}

// The ranking `timed` of a problem of `timed_chunks` chunks carried to `problem`: the same
// engines in the same order, each with its plans and workspace there (those cuDNN refuses there
// left out) and its time for the whole batch.
ConvCandidates carried(cudnnHandle_t handle, ConvDirection direction, const ConvProblem& problem,
                       const ConvCandidates& timed, std::int64_t timed_chunks) {
  ConvCandidates out;
  for (const ConvCandidate& t : timed.ranked) {
    std::optional<ConvCandidate> c = candidate_on(handle, direction, problem, t.choice);
    if (!c) continue;
    c->seconds = t.seconds * static_cast<double>(timed_chunks);
    out.ranked.push_back(std::move(*c));
  }
  if (out.ranked.empty()) {
    throw runtime::CudaError(std::string("Conv2dCuda: cuDNN runs no ") + direction_name(direction) +
                             " engine it ranked on a batch chunk on the batch of " +
                             std::to_string(problem.chunks) + " chunks");
  }
  return out;
}

}  // namespace

std::vector<ConvProblem> conv_problems(cudnnHandle_t handle, const Conv2dSpec& spec,
                                       const Shape& x_shape, const Shape& w_shape,
                                       const Shape& y_shape, runtime::Layout layout,
                                       runtime::DType dtype) {
  std::vector<ConvProblem> problems;
  problems.push_back(make_problem(handle, spec, x_shape, w_shape, y_shape, layout, dtype, 1));
  for (const std::int64_t chunks : kChunkCounts) {
    if (x_shape.n() % chunks != 0) continue;
    Shape x = x_shape;
    Shape y = y_shape;
    x[0] = y[0] = x_shape.n() / chunks;
    problems.push_back(make_problem(handle, spec, x, w_shape, y, layout, dtype, chunks));
  }
  return problems;
}

const ConvPlan& ConvCandidate::plan(bool accumulate) const {
  if (!accumulate) return plans->overwrite;
  VDNN_EXPECTS(plans->accumulate.has_value(),
               "ConvCandidate: this pass has no plan that adds into its output");
  return *plans->accumulate;
}

const ConvCandidate& ConvCandidates::pick(std::size_t limit) const {
  const ConvCandidate* smallest = &ranked.front();
  for (const ConvCandidate& c : ranked) {
    if (c.workspace <= limit) return c;
    if (c.workspace < smallest->workspace) smallest = &c;
  }
  return *smallest;
}

ConvCandidates search_candidates(cudnnHandle_t handle, cudaStream_t stream, ConvDirection direction,
                                 const std::vector<ConvProblem>& problems,
                                 const SearchPolicy& policy) {
  const ConvProblem& timed = policy.measure ? problem_to_time(problems) : problems.front();
  ConvCandidates ranking = heuristic_candidates(handle, direction, timed, policy);
  if (policy.measure) measure(handle, stream, timed, ranking);
  const auto ranked_for = [&](const ConvProblem& problem) {
    if (policy.measure) return carried(handle, direction, problem, ranking, timed.chunks);
    return &problem == &timed ? ranking : heuristic_candidates(handle, direction, problem, policy);
  };
  ConvCandidates whole = ranked_for(problems.front());
  if (whole.ranked.front().workspace <= kChunkFromBytes) return whole;
  // Measured: by time, every chunking of an engine taking the same time, fewer chunks first.
  // Heuristics: the i-th of any problem's ranking before the (i+1)-th, fewer chunks first.
  std::vector<std::pair<std::size_t, ConvCandidate>> ranked;  // (rank in its problem, candidate)
  for (const ConvProblem& problem : problems) {
    const ConvCandidates part = problem.chunks == 1 ? whole : ranked_for(problem);
    for (std::size_t r = 0; r < part.ranked.size(); ++r) ranked.emplace_back(r, part.ranked[r]);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [&policy](const auto& a, const auto& b) {
    return policy.measure ? a.second.seconds < b.second.seconds : a.first < b.first;
  });
  ConvCandidates out;
  for (auto& entry : ranked) out.ranked.push_back(std::move(entry.second));
  return out;
}

std::optional<ConvCandidates> restore_candidates(cudnnHandle_t handle, ConvDirection direction,
                                                 const std::vector<ConvProblem>& problems,
                                                 const std::vector<StoredAlgo>& list,
                                                 std::string& why) {
  ConvCandidates out;
  for (const StoredAlgo& s : list) {
    const std::string entry = std::string(direction_name(direction)) + " engine " +
                              std::to_string(s.engine) + " in " + std::to_string(s.chunks) +
                              " chunks";
    const auto problem = std::find_if(problems.begin(), problems.end(),
                                      [&s](const ConvProblem& p) { return p.chunks == s.chunks; });
    if (problem == problems.end()) {
      why = entry + ": no such batch chunking";
      return std::nullopt;
    }
    std::optional<ConvCandidate> c = candidate_on(handle, direction, *problem, {s.engine, s.knobs});
    if (!c) {
      why = entry + ": cuDNN does not run it here";
      return std::nullopt;
    }
    if (c->workspace != s.workspace) {
      why = entry + ": workspace " + std::to_string(c->workspace) + " bytes, stored " +
            std::to_string(s.workspace);
      return std::nullopt;
    }
    c->seconds = s.seconds;
    out.ranked.push_back(std::move(*c));
  }
  return out;
}

std::vector<StoredAlgo> stored(const ConvCandidates& candidates) {
  std::vector<StoredAlgo> list;
  for (const ConvCandidate& c : candidates.ranked) {
    list.push_back({c.choice.engine, c.choice.knobs, c.workspace, c.seconds, c.chunks});
  }
  return list;
}

}  // namespace vdnn::layers::cuda
