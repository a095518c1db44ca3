// Precision: the element type of a network's feature maps as data in its graph (Note [Precision]):
// the rewrite that makes a graph bf16, and the names a user writes.
#pragma once

#include <optional>
#include <string_view>

#include "graph/Graph.hpp"
#include "runtime/Shape.hpp"

namespace vdnn::graph {

/// Name of the cast node the bf16 rewrite puts after the network input (a name no config can
/// give: configs' top-level names have no dots, and expanded ones start with a block's name).
inline constexpr const char* kInputCastName = "input.bf16";

/// "fp32" (DType::F32) or "bf16" (DType::BF16); nullopt for anything else.
std::optional<runtime::DType> parse_precision(std::string_view name);
/// "fp32" or "bf16".
const char* precision_name(runtime::DType maps) noexcept;

/// `graph` with feature maps of `maps`: for BF16, a cast node (layers::CastSpec, named
/// kInputCastName) reads the network input and every former reader of the input reads the cast
/// instead, so every feature map and its gradient is bf16 (layers::output_dtype) but the loss's
/// FP32 output. A graph that takes image bytes has its normalize node write `maps` instead (Note
/// [Image input]). F32, or a graph that already has the cast, is returned unchanged. Throws
/// InvalidArgument for other types.
Graph with_precision(const Graph& graph, runtime::DType maps);

/// The element type of `graph`'s feature maps: the type its first node gives (F32 without a cast).
runtime::DType precision_of(const Graph& graph);

}  // namespace vdnn::graph
