// Executor: runs training steps of a Graph (forward, loss, backward, SGD update) on one backend,
// allocating each feature map when produced and freeing it when its reference count says that no
// one needs it any more. See Note [Tensor lifetime] in docs/ARCHITECTURE.md.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "graph/Graph.hpp"
#include "graph/Liveness.hpp"
#include "graph/ParameterStore.hpp"
#include "layers/Layer.hpp"
#include "layers/SgdUpdate.hpp"
#include "runtime/MemoryResource.hpp"

namespace vdnn::graph {

struct ExecutorOptions {
  layers::Backend backend = layers::Backend::Cpu;
  std::uint64_t seed = 0;  // parameter initialization and dropout masks
  double momentum = 0.9;
  double weight_decay = 5e-4;
};

/// What one training step reports.
struct StepResult {
  double loss = 0.0;
  double accuracy = 0.0;
};

/// Owns the layers, parameters, feature maps and gradients of one graph. Every byte comes from
/// the memory resource given at construction (which must outlive the executor), so a
/// StatisticsAdaptor there measures the true peak. Not thread-safe.
class Executor {
 public:
  /// Builds every layer and allocates parameters. Throws OutOfMemory, InvalidArgument.
  Executor(const Graph& graph, runtime::MemoryResource& memory, const ExecutorOptions& options);
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;
  Executor(Executor&&) = delete;
  Executor& operator=(Executor&&) = delete;
  ~Executor();

  /// One step on a batch: `images` holds graph.input_shape() floats (NCHW), `labels`
  /// graph.batch() class indices, both in host memory. Throws OutOfMemory (the executor stays
  /// usable), InvalidArgument for labels out of range.
  StepResult train_step(const float* images, const std::int32_t* labels, double lr);

  /// Forward in inference mode only; returns the loss and accuracy on the batch.
  StepResult evaluate(const float* images, const std::int32_t* labels);

  const Graph& graph() const noexcept { return graph_; }
  const ParameterStore& parameters() const noexcept { return params_; }
  ParameterStore& parameters() noexcept { return params_; }
  /// Steps taken so far.
  std::int64_t steps() const noexcept { return step_; }

 private:
  struct NodeRun;

  StepResult forward(const float* images, const std::int32_t* labels, bool training);
  void backward(const std::int32_t* labels);
  void update(double lr);
  runtime::TensorView value(NodeId tensor) const;
  /// The shared scratch buffer, as raw memory (layers cast it to their element type).
  runtime::TensorView workspace_view() const;
  void release_value(NodeId tensor);

  const Graph& graph_;
  runtime::MemoryResource& memory_;
  ExecutorOptions options_;
  Liveness liveness_;
  ParameterStore params_;
  std::unique_ptr<layers::SgdUpdate> sgd_;
  std::vector<NodeRun> runs_;
  runtime::Buffer input_;
  runtime::Buffer workspace_;
  runtime::Buffer loss_grad_;
  std::vector<runtime::Buffer> values_;  // per node output, live between produce and last use
  std::vector<runtime::Buffer> grads_;   // per node output gradient
  std::vector<int> forward_pending_;     // forward consumers still to run, per tensor
  std::vector<int> backward_pending_;    // backward readers still to run, per tensor
  std::int64_t step_ = 0;
};

}  // namespace vdnn::graph
