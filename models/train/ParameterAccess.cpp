// ParameterAccess: lookups by name in the executor's ParameterStore, copies through the compute
// stream, KRSC convolution weights reordered to and from PyTorch's KCRS (graph::ParameterStore).
#include "models/train/ParameterAccess.hpp"

#include <cstring>

#include "runtime/Error.hpp"
#include "runtime/Shape.hpp"

namespace vdnn::models {
namespace {

const graph::Parameter& find(graph::Session& session, const std::string& name) {
  for (const graph::Parameter& p : session.executor().parameters().all()) {
    if (p.name == name) return p;
  }
  throw runtime::InvalidArgument("no parameter or buffer named '" + name +
                                 "' in this network (named_parameters() lists them)");
}

// The part's device (or host, on the CPU backend) memory, checked against the caller's count.
void* storage(const graph::Parameter& p, ParameterPart part, std::size_t count) {
  const auto numel = static_cast<std::size_t>(p.spec.shape.numel());
  if (count != numel) {
    throw runtime::InvalidArgument("parameter '" + p.name + "' holds " + std::to_string(numel) +
                                   " values, not " + std::to_string(count));
  }
  if (part == ParameterPart::Value) return p.value.data();
  if (!p.trainable()) {
    throw runtime::InvalidArgument("'" + p.name + "' is a buffer: it has no gradient");
  }
  return p.grad.data();
}

}  // namespace

std::vector<NamedTensor> named_tensors(graph::Session& session) {
  std::vector<NamedTensor> out;
  for (const graph::Parameter& p : session.executor().parameters().all()) {
    NamedTensor& t = out.emplace_back();
    t.name = p.name;
    for (int axis = 0; axis < p.spec.shape.rank(); ++axis) t.shape.push_back(p.spec.shape[axis]);
    t.trainable = p.trainable();
  }
  return out;
}

void read_parameter(graph::Session& session, const std::string& name, ParameterPart part,
                    float* out, std::size_t count) {
  const graph::Parameter& p = find(session, name);
  const void* from = storage(p, part, count);
  runtime::Stream& compute = session.context().compute();
  std::vector<float> stored(count);
  compute.copy_async(stored.data(), from, count * sizeof(float));
  compute.synchronize();
  if (p.spec.layout != runtime::Layout::Nchw) {
    stored = runtime::relayout(stored, p.spec.shape, p.spec.layout, runtime::Layout::Nchw);
  }
  std::memcpy(out, stored.data(), count * sizeof(float));
}

void write_parameter(graph::Session& session, const std::string& name, ParameterPart part,
                     const float* values, std::size_t count) {
  const graph::Parameter& p = find(session, name);
  void* to = storage(p, part, count);
  std::vector<float> stored(values, values + count);
  if (p.spec.layout != runtime::Layout::Nchw) {
    stored = runtime::relayout(stored, p.spec.shape, runtime::Layout::Nchw, p.spec.layout);
  }
  runtime::Stream& compute = session.context().compute();
  compute.copy_async(to, stored.data(), count * sizeof(float));
  compute.synchronize();  // `stored` is the copy's source
}

}  // namespace vdnn::models
