// Gradient buckets and their all-reduce at the point of the backward pass that completes them.
#include "graph/GradientSync.hpp"

#include <cstddef>
#include <string>

namespace vdnn::graph {

std::vector<NodeId> backward_order(const Plan& plan) {
  std::vector<NodeId> order;
  for (const Action& a : plan.actions) {
    if (a.op == Op::Backward) order.push_back(a.tensor);
  }
  return order;
}

std::vector<GradientBucket> cut_buckets(const ParameterStore& params, const BucketCaps& caps) {
  VDNN_EXPECTS(!params.flat_gradients().empty() || params.trainable_count() == 0,
               "gradient buckets need a parameter store with a flat gradient buffer");
  VDNN_EXPECTS(caps.first_bytes > 0 && caps.bytes > 0, "a gradient bucket's cap is positive");
  const auto* base = static_cast<const std::byte*>(params.flat_gradients().data());
  const std::size_t total = params.flat_gradients().bytes();
  std::vector<GradientBucket> buckets;
  GradientBucket open;
  for (const std::size_t index : params.gradient_order()) {
    const Parameter& p = params.all()[index];
    // Each gradient's range runs to the next one's start (the padding goes with it).
    const auto start =
        static_cast<std::size_t>(static_cast<const std::byte*>(p.grad.data()) - base);
    const std::size_t end =
        std::min(total, start + runtime::MemoryResource::align_up(p.grad.bytes()));
    open.bytes = end - open.offset;
    open.ready_after = p.node;
    if (open.bytes >= (buckets.empty() ? caps.first_bytes : caps.bytes)) {
      buckets.push_back(open);
      open = {end, 0, 0};
    }
  }
  if (open.bytes > 0) buckets.push_back(open);
  return buckets;
}

GradientSync::GradientSync(runtime::Communicator& communicator, const ParameterStore& params,
                           const BucketCaps& caps)
    : communicator_(communicator),
      flat_(static_cast<float*>(params.flat_gradients().data())),
      buckets_(cut_buckets(params, caps)) {}

void GradientSync::broadcast_parameters(runtime::Stream& stream, const ParameterStore& params) {
  for (const Parameter& p : params.all()) {
    communicator_.broadcast(stream, p.value.data(), p.value.bytes());
  }
  stream.synchronize();
}

void GradientSync::after_backward(runtime::Stream& stream, NodeId node) {
  for (; next_ < buckets_.size() && buckets_[next_].ready_after == node; ++next_) {
    const GradientBucket& b = buckets_[next_];
    communicator_.all_reduce(stream, flat_ + b.offset / sizeof(float), b.bytes / sizeof(float),
                             runtime::Reduction::Mean);
  }
}

void GradientSync::check_all_reduced() const {
  VDNN_EXPECTS(next_ == buckets_.size(), "a step all-reduced " + std::to_string(next_) + " of " +
                                             std::to_string(buckets_.size()) + " gradient buckets");
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
