// Resolving the layout choice where no measurement decides (Session measures auto on CUDA).
#include "graph/Layout.hpp"

#include <algorithm>

#include "runtime/Error.hpp"

namespace vdnn::graph {

const std::vector<std::string>& layout_choice_names() {
  static const std::vector<std::string> kNames = {"nchw", "nhwc", "auto"};
  return kNames;
}

LayoutChoice parse_layout_choice(std::string_view name) {
  const auto& names = layout_choice_names();
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) {
    throw runtime::InvalidArgument("unknown layout '" + std::string(name) +
                                   "'; expected nchw, nhwc or auto");
  }
  return static_cast<LayoutChoice>(it - names.begin());
}

LayoutDecision decide_layout(LayoutChoice choice, layers::Backend backend,
                             const layers::LayerOptions& options) {
  using runtime::Layout;
  if (backend == layers::Backend::Cpu) {
    if (choice == LayoutChoice::Nhwc) {
      throw runtime::InvalidArgument(
          "layout nhwc: the CPU backend runs NCHW only; expected --layout nchw or auto");
    }
    return {Layout::Nchw, choice == LayoutChoice::Auto ? "auto: the CPU backend runs NCHW" : ""};
  }
  if (choice != LayoutChoice::Auto) {
    return {choice == LayoutChoice::Nhwc ? Layout::Nhwc : Layout::Nchw, "asked for"};
  }
  return options.allow_tf32
             ? LayoutDecision{Layout::Nhwc, "auto: TF32 tensor cores run NHWC natively"}
             : LayoutDecision{Layout::Nchw, "auto: FP32 math without tensor cores"};
}

}  // namespace vdnn::graph
