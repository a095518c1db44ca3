// One training step over the DAG: forward in topological order, backward in reverse, then SGD.
// Buffers follow Note [Tensor lifetime] (docs/ARCHITECTURE.md).
#include "graph/Executor.hpp"

#include <algorithm>
#include <cstring>

#include "layers/Registry.hpp"

namespace vdnn::graph {

using runtime::Buffer;
using runtime::DType;
using runtime::TensorView;

struct Executor::NodeRun {
  std::unique_ptr<layers::Layer> layer;
  layers::BackwardNeeds needs;
  std::vector<NodeId> distinct_inputs;  // each input tensor once, for reference counting
};

Executor::Executor(const Graph& graph, runtime::MemoryResource& memory,
                   const ExecutorOptions& options)
    : graph_(graph),
      memory_(memory),
      options_(options),
      liveness_(graph),
      params_(graph, memory, options.seed),
      sgd_(layers::make_sgd_update(options.backend)) {
  VDNN_EXPECTS(memory.host_accessible(), "the executor's memory must be host accessible");
  std::size_t workspace_bytes = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(graph.nodes().size()); ++id) {
    const Node& node = graph.node(id);
    NodeRun run;
    run.layer = layers::make_layer(options.backend, node.spec, graph.input_shapes(id),
                                   layers::LayerOptions{DType::F32, options.seed + 1 + id});
    run.needs = layers::backward_needs(node.spec);
    run.distinct_inputs = node.inputs;
    std::sort(run.distinct_inputs.begin(), run.distinct_inputs.end());
    run.distinct_inputs.erase(std::unique(run.distinct_inputs.begin(), run.distinct_inputs.end()),
                              run.distinct_inputs.end());
    workspace_bytes = std::max(workspace_bytes, run.layer->workspace_bytes());
    runs_.push_back(std::move(run));
  }
  input_ = Buffer(memory, graph.input_shape().bytes(DType::F32));
  workspace_ = Buffer(memory, workspace_bytes);
  loss_grad_ = Buffer(memory, sizeof(float));
  *static_cast<float*>(loss_grad_.data()) = 1.0f;
  values_.resize(graph.nodes().size());
  grads_.resize(graph.nodes().size());
}

Executor::~Executor() = default;

TensorView Executor::value(NodeId tensor) const {
  if (tensor == kNetworkInput) return {input_.data(), graph_.input_shape(), DType::F32};
  return {values_[static_cast<std::size_t>(tensor)].data(), graph_.node(tensor).output_shape,
          DType::F32};
}

TensorView Executor::workspace_view() const {
  if (workspace_.empty()) return {};
  return {workspace_.data(),
          runtime::Shape{static_cast<std::int64_t>(workspace_.bytes() / sizeof(float))},
          DType::F32};
}

void Executor::release_value(NodeId tensor) {
  // The network input stays: it is the staging buffer of the next batch.
  if (tensor != kNetworkInput) values_[static_cast<std::size_t>(tensor)].reset();
}

StepResult Executor::forward(const float* images, const std::int32_t* labels, bool training) {
  // A step that threw (OutOfMemory, bad labels) may have left buffers behind.
  for (Buffer& b : values_) b.reset();
  for (Buffer& b : grads_) b.reset();
  std::memcpy(input_.data(), images, input_.bytes());
  const std::size_t n = graph_.nodes().size();
  forward_pending_.assign(n + 1, 0);  // slot n: the network input
  backward_pending_.assign(n + 1, 0);
  auto slot = [n](NodeId t) { return t == kNetworkInput ? n : static_cast<std::size_t>(t); };
  for (NodeId t = kNetworkInput; t < static_cast<NodeId>(n); ++t) {
    forward_pending_[slot(t)] = liveness_.of(t).forward_consumers;
    backward_pending_[slot(t)] =
        training ? static_cast<int>(liveness_.of(t).backward_readers.size()) : 0;
  }

  StepResult result;
  for (NodeId id = 0; id < static_cast<NodeId>(n); ++id) {
    const Node& node = graph_.node(id);
    NodeRun& run = runs_[static_cast<std::size_t>(id)];
    values_[static_cast<std::size_t>(id)] = Buffer(memory_, node.output_shape.bytes(DType::F32));

    layers::ForwardArgs args;
    for (NodeId in : node.inputs) args.inputs.push_back(value(in));
    for (std::size_t p : params_.of_node(id)) {
      args.params.push_back(params_.all()[p].value_view(DType::F32));
    }
    args.output = value(id);
    args.workspace = workspace_view();
    args.training = training;
    args.step = static_cast<std::uint64_t>(step_);
    layers::LossStats stats;
    if (id == graph_.loss_node()) {
      args.labels = labels;
      args.loss_stats = &stats;
    }
    run.layer->forward(args);
    if (id == graph_.loss_node()) result = {stats.loss, stats.accuracy};

    for (NodeId in : node.inputs) {
      if (--forward_pending_[slot(in)] == 0 && backward_pending_[slot(in)] == 0) {
        release_value(in);
      }
    }
    if (forward_pending_[slot(id)] == 0 && backward_pending_[slot(id)] == 0) release_value(id);
  }
  return result;
}

void Executor::backward(const std::int32_t* labels) {
  const std::size_t n = graph_.nodes().size();
  auto slot = [n](NodeId t) { return t == kNetworkInput ? n : static_cast<std::size_t>(t); };
  for (NodeId id = static_cast<NodeId>(n) - 1; id >= 0; --id) {
    const Node& node = graph_.node(id);
    NodeRun& run = runs_[static_cast<std::size_t>(id)];

    layers::BackwardArgs args;
    for (NodeId in : node.inputs) {
      args.inputs.push_back(run.needs.inputs ? value(in) : TensorView{});
      layers::GradTarget target;
      if (liveness_.of(in).needs_grad) {
        Buffer& grad = grads_[static_cast<std::size_t>(in)];
        target.accumulate = !grad.empty();
        if (grad.empty()) grad = Buffer(memory_, graph_.node(in).output_shape.bytes(DType::F32));
        target.tensor = {grad.data(), graph_.node(in).output_shape, DType::F32};
      }
      args.grad_inputs.push_back(target);
    }
    if (run.needs.output) args.output = value(id);
    args.grad_output = id == graph_.loss_node()
                           ? TensorView{loss_grad_.data(), node.output_shape, DType::F32}
                           : TensorView{grads_[static_cast<std::size_t>(id)].data(),
                                        node.output_shape, DType::F32};
    for (std::size_t p : params_.of_node(id)) {
      const Parameter& param = params_.all()[p];
      args.params.push_back(param.value_view(DType::F32));
      if (param.trainable()) args.grad_params.push_back(param.grad_view(DType::F32));
    }
    args.workspace = workspace_view();
    args.step = static_cast<std::uint64_t>(step_);
    if (id == graph_.loss_node()) args.labels = labels;
    run.layer->backward(args);

    grads_[static_cast<std::size_t>(id)].reset();
    if (run.needs.inputs) {
      for (NodeId in : run.distinct_inputs) {
        if (--backward_pending_[slot(in)] == 0) release_value(in);
      }
    }
    if (run.needs.output && --backward_pending_[slot(id)] == 0) release_value(id);
  }
}

void Executor::update(double lr) {
  for (Parameter& p : params_.all()) {
    if (!p.trainable()) continue;
    sgd_->apply(p.value_view(DType::F32), p.grad_view(DType::F32), p.velocity_view(DType::F32),
                layers::SgdHyper{lr, options_.momentum, options_.weight_decay, step_ == 0});
  }
}

StepResult Executor::train_step(const float* images, const std::int32_t* labels, double lr) {
  const StepResult result = forward(images, labels, /*training=*/true);
  backward(labels);
  update(lr);
  ++step_;
  return result;
}

StepResult Executor::evaluate(const float* images, const std::int32_t* labels) {
  return forward(images, labels, /*training=*/false);
}

}  // namespace vdnn::graph
