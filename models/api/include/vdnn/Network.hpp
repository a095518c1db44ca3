// Networks for the public API: built in code with NetworkBuilder, or loaded from a JSON config
// (the format of configs/, documented in configs/schema/network.schema.json).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <vdnn/Export.hpp>

namespace vdnn {

/// A network definition: named layers with named inputs, ending in a softmax cross-entropy loss.
/// Immutable; copies share it. Thread-safe.
class VDNN_EXPORT Network {
 public:
  /// Reads the JSON config at `path`. Throws NetworkError naming the file and the JSON path.
  static Network from_file(const std::string& path);
  /// As from_file for config text in memory; `source_name` stands for the file in messages.
  static Network from_json(const std::string& json_text, const std::string& source_name);

  const std::string& name() const noexcept;
  /// Layer names in definition order (the loss layer last).
  std::vector<std::string> layer_names() const;
  /// Trainable parameters (weights and biases; not BatchNorm's running statistics).
  std::int64_t parameter_count() const;

  struct Definition;  // the library's representation; opaque to users
  explicit Network(std::shared_ptr<const Definition> definition) noexcept;
  const Definition& definition() const noexcept { return *definition_; }

 private:
  std::shared_ptr<const Definition> definition_;
};

/// A symbolic handle to a layer's output (or the network's input) while a network is built. It
/// holds no data; it is only valid with the builder that returned it.
struct Tensor {
  std::string layer;  // the producing layer's name, or "input"
};

/// Builds a network in code, one layer per call, in execution order:
///
///   vdnn::NetworkBuilder net("tiny", 3, 32, 32, 10);
///   vdnn::Tensor x = net.conv2d("conv1", net.input(), 16, 3, 1, 1);
///   x = net.relu("relu1", net.batchnorm2d("bn1", x));
///   x = net.linear("fc", net.flatten("flatten", net.global_avgpool("pool", x)), 10);
///   vdnn::Network network = net.softmax_cross_entropy("loss", x);
///
/// Names become checkpoint tensor names ("conv1.weight"), so PyTorch-style dotted names such as
/// "layer1.0.conv1" are allowed. Each call throws InvalidArgument for an empty or repeated name,
/// a handle this builder did not return, or a value out of range (a kernel of 0); shapes are
/// checked by softmax_cross_entropy(), which ends the network. Not thread-safe.
class VDNN_EXPORT NetworkBuilder {
 public:
  /// Input images of channels x height x width; labels in [0, num_classes). Throws
  /// InvalidArgument unless all are positive.
  NetworkBuilder(const std::string& name, std::int64_t channels, std::int64_t height,
                 std::int64_t width, std::int64_t num_classes);
  NetworkBuilder(const NetworkBuilder&) = delete;
  NetworkBuilder& operator=(const NetworkBuilder&) = delete;
  NetworkBuilder(NetworkBuilder&&) noexcept;
  NetworkBuilder& operator=(NetworkBuilder&&) noexcept;
  ~NetworkBuilder();

  /// The network's input images (NCHW).
  Tensor input() const;

  /// Square kernels, strides and zero padding; no bias unless `bias` (torchvision's CNNs have
  /// none before a batch norm).
  Tensor conv2d(const std::string& name, const Tensor& x, std::int64_t out_channels,
                std::int64_t kernel, std::int64_t stride, std::int64_t padding, bool bias = false);
  /// Per-channel batch normalization with learned scale and shift (eps 1e-5, momentum 0.1 as
  /// PyTorch).
  Tensor batchnorm2d(const std::string& name, const Tensor& x);
  Tensor relu(const std::string& name, const Tensor& x);
  Tensor maxpool2d(const std::string& name, const Tensor& x, std::int64_t kernel,
                   std::int64_t stride, std::int64_t padding);
  Tensor avgpool2d(const std::string& name, const Tensor& x, std::int64_t kernel,
                   std::int64_t stride, std::int64_t padding);
  /// Mean over height and width: N x C x 1 x 1.
  Tensor global_avgpool(const std::string& name, const Tensor& x);
  Tensor flatten(const std::string& name, const Tensor& x);
  /// Fully connected, with a bias.
  Tensor linear(const std::string& name, const Tensor& x, std::int64_t out_features);
  /// Drops each element with probability p in training (0 <= p < 1).
  Tensor dropout(const std::string& name, const Tensor& x, double p);
  /// Elementwise sum of two or more tensors of one shape.
  Tensor add(const std::string& name, const std::vector<Tensor>& xs);
  /// Concatenation along channels of two or more tensors of one height and width.
  Tensor concat(const std::string& name, const std::vector<Tensor>& xs);

  /// Ends the network with the mean softmax cross-entropy of `logits` (N x num_classes) and
  /// returns it. Throws NetworkError naming the layer whose shapes do not fit. Every later call
  /// of a layer method throws InvalidArgument.
  Network softmax_cross_entropy(const std::string& name, const Tensor& logits);

 private:
  struct State;
  State& state();  // throws InvalidArgument once the network is built
  std::unique_ptr<State> state_;
};

}  // namespace vdnn
