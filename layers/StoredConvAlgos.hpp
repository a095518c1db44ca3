// StoredConvAlgos: a convolution's ranked algorithm choices as text, for the setup cache
// (runtime/DiskCache.hpp), and the checks a stored text must pass before a layer uses it. No cuDNN
// here: the CUDA layer maps its enums to these integers and asks cuDNN itself whether each stored
// workspace still holds (layers/cuda/Conv2dCuda.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vdnn::layers {

/// One ranked candidate of one direction: the algorithm and math type (cuDNN's enum values), its
/// exact workspace, its measured seconds (negative when ranked by heuristics) and the batch chunks
/// it runs in (Note [Batch chunks]).
struct StoredAlgo {
  int algo = 0;
  int math = 0;
  std::uint64_t workspace = 0;
  double seconds = -1.0;
  std::int64_t chunks = 1;

  friend bool operator==(const StoredAlgo& a, const StoredAlgo& b) {
    return a.algo == b.algo && a.math == b.math && a.workspace == b.workspace &&
           a.chunks == b.chunks && (a.seconds == b.seconds || (a.seconds < 0 && b.seconds < 0));
  }
};

/// The three directions' candidates, each fastest first.
struct StoredConvAlgos {
  std::vector<StoredAlgo> forward;
  std::vector<StoredAlgo> backward_data;
  std::vector<StoredAlgo> backward_filter;
};

/// The text form: a header line, then per direction its name and count and one line per
/// candidate ("algo math workspace seconds chunks", seconds in the shortest form that reads back
/// exactly). Deterministic: equal choices, equal text.
std::string to_text(const StoredConvAlgos& algos);

/// Parses to_text's form. nullopt, with `why` saying what is wrong, for anything else (another
/// header, a missing or extra line or field, a number that does not read whole). Never throws.
std::optional<StoredConvAlgos> parse_conv_algos(const std::string& text, std::string& why);

/// What a search could have produced for the layer at hand.
struct ConvAlgoLimits {
  int forward_algos = 0;  // valid algo values are [0, count)
  int backward_data_algos = 0;
  int backward_filter_algos = 0;
  int math_types = 0;                // valid math values are [0, math_types)
  std::optional<int> only_math;      // e.g. FMA math when TF32 is not allowed
  std::vector<std::int64_t> chunks;  // the batch chunkings that exist (1 included)
  bool measured = false;             // seconds are times (>= 0), else negative (heuristic ranks)
};

/// Why `algos` cannot be what a search under `limits` produced (empty direction, algo or math out
/// of range, a chunking that does not exist, seconds of the other ranking, a workspace beyond
/// size_t); empty when every entry is plausible. Never throws.
std::string check_conv_algos(const StoredConvAlgos& algos, const ConvAlgoLimits& limits);

}  // namespace vdnn::layers
