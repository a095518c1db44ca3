// Layout choice: which memory order a session's feature maps use (Note [Layout]).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "graph/Graph.hpp"
#include "layers/Layer.hpp"

namespace vdnn::graph {

/// What the user asks for: a fixed layout, or auto (measured on CUDA).
enum class LayoutChoice : std::uint8_t { Nchw, Nhwc, Auto };

/// "nchw", "nhwc", "auto".
const std::vector<std::string>& layout_choice_names();
/// The choice of a name above; InvalidArgument listing them otherwise.
LayoutChoice parse_layout_choice(std::string_view name);

/// The layout a session runs in, and why.
struct LayoutDecision {
  runtime::Layout layout = runtime::Layout::Nchw;
  std::string reason;  // e.g. "auto: convolutions 21.4 ms in nhwc, 30.2 ms in nchw (cudnnFind)"
};

/// Resolves `choice` for `graph` on `backend`. The CPU backend runs NCHW only (Nhwc throws
/// InvalidArgument). Auto on CUDA builds the graph's convolutions in both layouts with `options`
/// and takes the layout whose fastest algorithms' times (cudnnFind, forward and backward) add up
/// to less; without measured times (options.deterministic) it takes NHWC when TF32 tensor cores
/// are allowed (cuDNN's tensor-core kernels are NHWC-native), else NCHW.
LayoutDecision decide_layout(const Graph& graph, LayoutChoice choice, layers::Backend backend,
                             const layers::LayerOptions& options);

}  // namespace vdnn::graph
