// Inference from C++: a Predictor loads a checkpoint's weights into a network and gives the logits
// or class probabilities of images, without optimizer state or training data.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <vdnn/Export.hpp>
#include <vdnn/Network.hpp>
#include <vdnn/Trainer.hpp>

namespace vdnn {

/// How a Predictor runs: the TrainerConfig fields of the same names, with the same defaults and
/// meanings. It sets up as a Trainer of this config does (layout, fusion, algorithms, the setup
/// cache) but plans for inference only: the device holds the parameters and batch-norm
/// statistics, no gradients or optimizer state, and each feature map only until its last forward
/// consumer. The budget bounds that forward pass (a budget too small for it is DoesNotFit); a
/// policy's offloads and recomputations have nothing to do there (they keep maps for backward),
/// and "uvm*" policies take the pool from managed memory as in training.
struct PredictorConfig {
  std::int64_t batch = 32;  // images per forward pass; predict() runs ceil(count / batch) of them
  Backend backend = Backend::Auto;
  int device = 0;
  std::string policy = "baseline";  // one of policy_names()
  std::uint64_t memory_budget = 0;  // device bytes; 0: what the device has free
  bool deterministic = false;
  bool tf32 = true;
  bool fuse = true;
  std::string layout = "auto";
  std::string precision = "fp32";
  std::string cost_cache;
  bool cache = true;
};

/// Runs one network in inference mode (batch norm's running statistics, no dropout) on the weights
/// of a checkpoint: logits bitwise those the Trainer that saved it gives from predict() under the
/// same config. Not thread-safe: one thread drives a predictor; many may live side by side.
class VDNN_EXPORT Predictor {
 public:
  /// Plans `network` for `config` and loads the parameters and batch-norm statistics of
  /// `checkpoint` (a safetensors file as Trainer::save writes, or PyTorch's state_dict under the
  /// same names; optimizer state and counters are not read). Throws InvalidArgument (a bad config
  /// value), NetworkError, DoesNotFit, OutOfMemory, DeviceError, CheckpointError (unreadable,
  /// damaged, or a tensor missing or of another shape).
  Predictor(const Network& network, const std::string& checkpoint,
            const PredictorConfig& config = {});
  Predictor(Predictor&&) noexcept;
  Predictor& operator=(Predictor&&) noexcept;
  /// Waits for the run's queued device work; never throws.
  ~Predictor();

  /// The logits of `count` images (count x channels x height x width floats, NCHW, in host
  /// memory, normalized as in training): count x num_classes() values, a batch at a time (the
  /// last one padded, which changes no other image's logits). Throws InvalidArgument (null
  /// images, a count below 1), OutOfMemory, DeviceError.
  std::vector<float> predict(const float* images, std::int64_t count);
  /// The softmax of predict()'s logits per image (in double from the float logits): count x
  /// num_classes() probabilities, each row summing to 1. Throws as predict().
  std::vector<float> probabilities(const float* images, std::int64_t count);

  std::int64_t num_classes() const noexcept;
  /// The backend the predictor runs on (Backend::Auto resolved).
  Backend backend() const noexcept;
  /// Device and pinned host memory of the run, measured by its allocators (as Trainer::memory):
  /// device_peak counts the parameters and the largest forward pass so far. Throws nothing.
  MemoryStats memory() const;

 private:
  struct Run;
  std::unique_ptr<Run> run_;
};

}  // namespace vdnn
