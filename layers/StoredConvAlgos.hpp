// StoredConvAlgos: a convolution's ranked engine choices as text, for the setup cache
// (runtime/DiskCache.hpp), and the checks a stored text must pass before a layer uses it. No cuDNN
// here: the CUDA layer maps its engine configurations to these integers and asks cuDNN itself
// whether each stored plan and workspace still hold (layers/cuda/ConvSearch.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vdnn::layers {

/// One ranked candidate of one direction: cuDNN's global engine index and its knob settings
/// (knob type, value), its exact workspace, its measured seconds (negative when ranked by
/// heuristics) and the batch chunks it runs in (Note [Batch chunks]).
struct StoredAlgo {
  std::int64_t engine = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> knobs;
  std::uint64_t workspace = 0;
  double seconds = -1.0;
  std::int64_t chunks = 1;

  friend bool operator==(const StoredAlgo& a, const StoredAlgo& b) {
    return a.engine == b.engine && a.knobs == b.knobs && a.workspace == b.workspace &&
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
/// candidate ("engine workspace seconds chunks knobs type:value...", seconds in the shortest form
/// that reads back exactly). Deterministic: equal choices, equal text.
std::string to_text(const StoredConvAlgos& algos);

/// Parses to_text's form. nullopt, with `why` saying what is wrong, for anything else (another
/// header, a missing or extra line or field, a number that does not read whole). Never throws.
std::optional<StoredConvAlgos> parse_conv_algos(const std::string& text, std::string& why);

/// What a search could have produced for the layer at hand.
struct ConvAlgoLimits {
  std::int64_t knob_types = 0;       // valid knob types are [0, knob_types)
  std::vector<std::int64_t> chunks;  // the batch chunkings that exist (1 included)
  bool measured = false;             // seconds are times (>= 0), else negative (heuristic ranks)
};

/// Why `algos` cannot be what a search under `limits` produced (empty direction, a negative engine,
/// a knob type out of range, a chunking that does not exist, seconds of the other ranking, a
/// workspace beyond size_t); empty when every entry is plausible (cuDNN itself then says whether it
/// runs each one). Never throws.
std::string check_conv_algos(const StoredConvAlgos& algos, const ConvAlgoLimits& limits);

}  // namespace vdnn::layers
