// Layout choice: which memory order a session's feature maps use (Note [Layout]).
#pragma once

#include <string>
#include <string_view>
#include <vector>

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
  std::string
      reason;  // e.g. "auto: a profiled step's layers take 40.1 ms in nhwc, 48.0 ms in nchw"
};

/// Resolves `choice` on `backend` without measuring. The CPU backend runs NCHW only
/// (Nhwc throws InvalidArgument, auto gives NCHW). Auto on CUDA takes NHWC when TF32 tensor cores
/// are allowed (cuDNN's tensor-core kernels are NHWC-native), else NCHW: the rule of deterministic
/// runs; other runs measure instead (Session, Note [Layout]).
LayoutDecision decide_layout(LayoutChoice choice, layers::Backend backend,
                             const layers::LayerOptions& options);

}  // namespace vdnn::graph
