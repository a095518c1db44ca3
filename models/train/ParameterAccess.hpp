// ParameterAccess: a session's parameters, buffers and gradients by their PyTorch names, read and
// written in PyTorch's element order from and to the caller's host memory (issue 26's
// named_parameters, get_parameter and set_parameter, and the gradients between backward and the
// update).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/Session.hpp"

namespace vdnn::models {

/// One parameter or buffer as PyTorch names it: "layer1.0.conv1.weight" with shape [64, 64, 3, 3]
/// (PyTorch's order whatever layout the run keeps it in); buffers (batch norm's running
/// statistics) are not trainable.
struct NamedTensor {
  std::string name;
  std::vector<std::int64_t> shape;
  bool trainable = false;
};

/// Which of a parameter's tensors: its value, or its gradient from the last backward pass (F32,
/// trainable parameters only; accumulated over the step's batch).
enum class ParameterPart : std::uint8_t { Value, Gradient };

/// Every parameter and buffer of the session's network, in graph order (a node's in its layer's
/// order), as save_checkpoint names them.
std::vector<NamedTensor> named_tensors(graph::Session& session);

/// Copies `part` of parameter `name` into `out` (`count` floats, its element count) in PyTorch's
/// order, after the work queued on the compute stream (which it synchronizes). Throws
/// runtime::InvalidArgument for an unknown name (naming it), a count that is not the tensor's, or
/// the gradient of a buffer.
void read_parameter(graph::Session& session, const std::string& name, ParameterPart part,
                    float* out, std::size_t count);

/// Copies `count` floats from `values` (PyTorch's order) into `part` of parameter `name`, ordered
/// after the compute stream's queued work and done when it returns. Throws as read_parameter.
void write_parameter(graph::Session& session, const std::string& name, ParameterPart part,
                     const float* values, std::size_t count);

}  // namespace vdnn::models
