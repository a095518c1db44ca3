// Gradient buckets and their all-reduce at the point of the backward pass that completes them.
#include "graph/GradientSync.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "layers/LayerSpec.hpp"
#include "runtime/MemoryResource.hpp"

namespace vdnn::graph {

std::vector<NodeId> backward_order(const Plan& plan) {
  std::vector<NodeId> order;
  for (const Action& a : plan.actions) {
    if (a.op == Op::Backward) order.push_back(a.tensor);
  }
  return order;
}

std::vector<GradientSpan> gradient_spans(const Graph& graph, const Plan& plan) {
  std::vector<GradientSpan> spans;
  for (const NodeId node : backward_order(plan)) {
    for (const layers::ParamSpec& spec :
         layers::param_specs(graph.node(node).spec, graph.input_shapes(node))) {
      if (spec.kind != layers::ParamKind::Trainable) continue;
      spans.push_back(
          {node, runtime::MemoryResource::align_up(spec.shape.bytes(runtime::DType::F32))});
    }
  }
  return spans;
}

std::vector<GradientBucket> cut_buckets(const std::vector<GradientSpan>& spans,
                                        const BucketCaps& caps) {
  VDNN_EXPECTS(caps.first_bytes > 0 && caps.bytes > 0, "a gradient bucket's cap is positive");
  std::vector<GradientBucket> buckets;
  GradientBucket open;
  std::size_t end = 0;
  for (const GradientSpan& span : spans) {
    end += span.bytes;
    open.bytes = end - open.offset;
    open.ready_after = span.node;
    if (open.bytes >= (buckets.empty() ? caps.first_bytes : caps.bytes)) {
      buckets.push_back(open);
      open = {end, 0, 0};
    }
  }
  if (open.bytes > 0) buckets.push_back(open);
  return buckets;
}

// Each gradient's range runs to the next one's start (the padding goes with it).
std::vector<GradientBucket> cut_buckets(const ParameterStore& params, const BucketCaps& caps) {
  VDNN_EXPECTS(!params.flat_gradients().empty() || params.trainable_count() == 0,
               "gradient buckets need a parameter store with a flat gradient buffer");
  const auto* base = static_cast<const std::byte*>(params.flat_gradients().data());
  const std::size_t total = params.flat_gradients().bytes();
  std::vector<GradientSpan> spans;
  std::size_t start = 0;
  for (const std::size_t index : params.gradient_order()) {
    const Parameter& p = params.all()[index];
    VDNN_EXPECTS(static_cast<const std::byte*>(p.grad.data()) == base + start,
                 "the flat gradient buffer holds its gradients back to back, in order");
    const std::size_t end =
        std::min(total, start + runtime::MemoryResource::align_up(p.grad.bytes()));
    spans.push_back({p.node, end - start});
    start = end;
  }
  return cut_buckets(spans, caps);
}

GradientSync::GradientSync(runtime::Communicator& communicator, const ParameterStore& params,
                           const BucketCaps& caps, runtime::ExecutionContext& context)
    : communicator_(communicator),
      flat_(static_cast<float*>(params.flat_gradients().data())),
      buckets_(cut_buckets(params, caps)),
      stream_(context.make_stream("communication")),
      backward_done_(context.make_event(/*timing=*/true)),
      waited_(context.make_event(/*timing=*/true)) {
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    written_.push_back(context.make_event());
    reduced_.push_back(context.make_event());
  }
  check_layout(params);
}

GradientSync::~GradientSync() { drain(); }

namespace {

// FNV-1a over the gradients' names and sizes in flat order and the buckets' bounds.
std::uint64_t layout_fingerprint(const ParameterStore& params,
                                 const std::vector<GradientBucket>& buckets) {
  std::uint64_t hash = 14695981039346656037ull;
  const auto mix = [&hash](const std::string& text) {
    for (const char c : text) {
      hash ^= static_cast<unsigned char>(c);
      hash *= 1099511628211ull;
    }
  };
  for (const std::size_t index : params.gradient_order()) {
    const Parameter& p = params.all()[index];
    mix(p.name + ":" + std::to_string(p.grad.bytes()) + ";");
  }
  for (const GradientBucket& b : buckets) {
    mix(std::to_string(b.offset) + "+" + std::to_string(b.bytes) + ";");
  }
  return hash;
}

}  // namespace

// Rank 0's fingerprint travels through the flat buffer's first bytes (zeroed again after), the
// one memory of the stream's kind at hand.
void GradientSync::check_layout(const ParameterStore& params) {
  if (params.flat_gradients().bytes() < sizeof(std::uint64_t)) return;
  const std::uint64_t mine = layout_fingerprint(params, buckets_);
  const std::uint64_t zero = 0;
  std::uint64_t theirs = 0;
  stream_->copy_async(flat_, &mine, sizeof(mine));
  communicator_.broadcast(*stream_, flat_, sizeof(mine));
  stream_->copy_async(&theirs, flat_, sizeof(theirs));
  stream_->copy_async(flat_, &zero, sizeof(zero));
  stream_->synchronize();
  communicator_.raise_if_failed();  // a watchdog's abort completes the stream too
  if (theirs == mine) return;
  const std::string why = "rank " + std::to_string(communicator_.rank()) +
                          "'s gradient layout (parameters, backward order, buckets) differs "
                          "from rank 0's: the ranks run different networks or plans";
  communicator_.abort(why);
  throw runtime::CommunicatorError(why, communicator_.rank());
}

void GradientSync::broadcast_parameters(runtime::Stream& compute, const ParameterStore& params) {
  compute.synchronize();  // the initial values are there (setup: no event needed)
  for (const Parameter& p : params.all()) {
    communicator_.broadcast(*stream_, p.value.data(), p.value.bytes());
  }
  stream_->synchronize();
  communicator_.raise_if_failed();
}

void GradientSync::after_backward(runtime::Stream& compute, NodeId node) {
  for (; next_ < buckets_.size() && buckets_[next_].ready_after == node; ++next_) {
    const GradientBucket& b = buckets_[next_];
    written_[next_]->record(compute);
    stream_->wait(*written_[next_]);
    communicator_.all_reduce(*stream_, flat_ + b.offset / sizeof(float), b.bytes / sizeof(float),
                             runtime::Reduction::Mean);
    reduced_[next_]->record(*stream_);
  }
}

void GradientSync::before_update(runtime::Stream& compute) {
  VDNN_EXPECTS(next_ == buckets_.size(), "a step all-reduced " + std::to_string(next_) + " of " +
                                             std::to_string(buckets_.size()) + " gradient buckets");
  backward_done_->record(compute);
  for (const std::unique_ptr<runtime::Event>& reduced : reduced_) compute.wait(*reduced);
  waited_->record(compute);
}

void GradientSync::drain() noexcept {
  try {
    stream_->synchronize();
  } catch (...) {  // the error that ended the step is already on its way to the caller
  }
}

void GradientSync::raise_other_ranks_failure() {
  try {
    communicator_.raise_if_failed();
  } catch (const runtime::CommunicatorError& e) {
    if (e.failed_rank() != communicator_.rank()) throw;
  }
}

void GradientSync::abort(const std::exception_ptr& error) noexcept {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    communicator_.abort(e.what());
  } catch (...) {
    communicator_.abort("an unknown error");
  }
}

}  // namespace vdnn::graph
