// Brace expansion of WebDataset shard patterns: the pattern is parsed into a tree of literals,
// alternatives and ranges, its size counted with saturating arithmetic, then expanded.
#include "models/data/image/BracePattern.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>
#include <utility>

#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

// Counts saturate here: far above every limit, far below overflow.
constexpr std::uint64_t kSaturated = std::uint64_t{1} << 62;
constexpr std::size_t kMaxRangeDigits = 18;

std::uint64_t add_sat(std::uint64_t a, std::uint64_t b) { return std::min(a + b, kSaturated); }
std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kSaturated / b ? kSaturated : a * b;
}

struct Node;
using Sequence = std::vector<Node>;

// One piece of a pattern: literal text, alternatives, or a range of integers or letters.
struct Node {
  enum class Kind { Literal, Alternatives, IntRange, CharRange };
  Kind kind = Kind::Literal;
  std::string literal;
  std::vector<Sequence> alternatives;
  std::int64_t first = 0;  // ranges: first value, step with its direction, number of values
  std::int64_t step = 1;
  std::uint64_t count = 1;
  std::size_t width = 0;  // integer ranges: zero-padded width (0: none)
};

Node literal_node(std::string text) {
  Node node;
  node.literal = std::move(text);
  return node;
}

// The number of strings and an upper bound on their bytes.
struct Size {
  std::uint64_t count = 1;
  std::uint64_t bytes = 0;
};

std::string format_int(std::int64_t value, std::size_t width) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  const std::size_t sign = value < 0 ? 1 : 0;
  if (digits.size() + sign < width) digits.insert(0, width - digits.size() - sign, '0');
  return value < 0 ? "-" + digits : digits;
}

std::string node_value(const Node& node, std::uint64_t i) {
  const std::int64_t value = node.first + static_cast<std::int64_t>(i) * node.step;
  if (node.kind == Node::Kind::CharRange) {
    return std::string(1, static_cast<char>(value < 26 ? 'A' + value : 'a' + (value - 26)));
  }
  return format_int(value, node.width);
}

class Parser {
 public:
  explicit Parser(const std::string& pattern) : pattern_(pattern) {}

  Sequence parse() { return parse_sequence(0, pattern_.size(), 0); }

 private:
  [[noreturn]] void fail(const std::string& what, std::size_t position) const {
    throw runtime::InvalidArgument("brace pattern \"" + pattern_ + "\": " + what + " at position " +
                                   std::to_string(position));
  }

  // The position of the `}` closing the `{` at `open`.
  std::size_t matching_brace(std::size_t open, std::size_t end) const {
    int depth = 0;
    for (std::size_t pos = open; pos < end; ++pos) {
      if (pattern_[pos] == '\\') {
        ++pos;
      } else if (pattern_[pos] == '{') {
        ++depth;
      } else if (pattern_[pos] == '}' && --depth == 0) {
        return pos;
      }
    }
    fail("unbalanced '{'", open);
  }

  // The positions of the commas at depth 0 of pattern_[begin, end).
  std::vector<std::size_t> top_level_commas(std::size_t begin, std::size_t end) const {
    std::vector<std::size_t> commas;
    int depth = 0;
    for (std::size_t pos = begin; pos < end; ++pos) {
      const char c = pattern_[pos];
      if (c == '\\') {
        ++pos;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}') {
        --depth;
      } else if (c == ',' && depth == 0) {
        commas.push_back(pos);
      }
    }
    return commas;
  }

  Sequence parse_sequence(std::size_t begin, std::size_t end, int depth) {
    if (depth > kMaxBraceDepth) fail("braces nested deeper than 32", begin);
    Sequence sequence;
    std::string text;
    const auto flush = [&] {
      if (!text.empty()) sequence.push_back(literal_node(std::move(text)));
      text.clear();
    };
    for (std::size_t pos = begin; pos < end; ++pos) {
      const char c = pattern_[pos];
      if (c == '\\' && pos + 1 < end) {
        text += pattern_[++pos];
      } else if (c == '}') {
        fail("unbalanced '}'", pos);
      } else if (c != '{') {
        text += c;
      } else {
        const std::size_t close = matching_brace(pos, end);
        flush();
        parse_group(pos, close, depth, sequence);
        pos = close;
      }
    }
    flush();
    return sequence;
  }

  // Appends the group pattern_[open, close] (both braces included) to `sequence`.
  void parse_group(std::size_t open, std::size_t close, int depth, Sequence& sequence) {
    const std::size_t begin = open + 1;
    const std::vector<std::size_t> commas = top_level_commas(begin, close);
    if (!commas.empty()) {
      Node node;
      node.kind = Node::Kind::Alternatives;
      std::size_t start = begin;
      for (const std::size_t comma : commas) {
        node.alternatives.push_back(parse_sequence(start, comma, depth + 1));
        start = comma + 1;
      }
      node.alternatives.push_back(parse_sequence(start, close, depth + 1));
      sequence.push_back(std::move(node));
      return;
    }
    const std::string_view body(pattern_.data() + begin, close - begin);
    if (body.find("..") != std::string_view::npos &&
        body.find_first_of("{}") == std::string_view::npos) {
      sequence.push_back(parse_range(body, open));
      return;
    }
    // Neither alternatives nor a range: literal braces around whatever the inside expands to.
    sequence.push_back(literal_node("{"));
    Sequence inside = parse_sequence(begin, close, depth + 1);
    sequence.insert(sequence.end(), std::make_move_iterator(inside.begin()),
                    std::make_move_iterator(inside.end()));
    sequence.push_back(literal_node("}"));
  }

  // An optionally negative integer of at most kMaxRangeDigits digits.
  static std::optional<std::int64_t> parse_int(std::string_view text) {
    const bool negative = !text.empty() && text[0] == '-';
    const std::string_view digits = text.substr(negative ? 1 : 0);
    if (digits.empty() || digits.size() > kMaxRangeDigits ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return std::nullopt;
    }
    const std::int64_t magnitude = std::stoll(std::string(digits));
    return negative ? -magnitude : magnitude;
  }

  // Letters count in braceexpand's alphabet, A..Z then a..z.
  static std::int64_t letter_index(char c) { return c <= 'Z' ? c - 'A' : 26 + (c - 'a'); }

  static bool is_letter(std::string_view text) {
    return text.size() == 1 &&
           ((text[0] >= 'a' && text[0] <= 'z') || (text[0] >= 'A' && text[0] <= 'Z'));
  }

  [[noreturn]] void bad_range(std::string_view body, std::size_t open) const {
    fail("bad range {" + std::string(body) +
             "} (expected {A..B} or {A..B..STEP}, A and B integers of at most 18 digits or "
             "single letters)",
         open);
  }

  // A leading zero asks for padding (braceexpand: "0" and "-0" alone do not).
  static bool zero_led(std::string_view text) {
    const std::string_view digits = text.substr(!text.empty() && text[0] == '-' ? 1 : 0);
    return digits.size() > 1 && digits[0] == '0';
  }

  // {A..B} or {A..B..S}, integers or single letters; `open` is the position of the `{`.
  Node parse_range(std::string_view body, std::size_t open) const {
    const std::size_t dots = body.find("..");
    const std::string_view left = body.substr(0, dots);
    std::string_view right = body.substr(dots + 2);
    std::int64_t step = 1;
    if (const std::size_t more = right.find(".."); more != std::string_view::npos) {
      std::string_view step_text = right.substr(more + 2);
      if (!step_text.empty() && step_text[0] == '-') step_text.remove_prefix(1);
      const std::optional<std::int64_t> parsed = parse_int(step_text);
      if (!parsed || step_text[0] == '-') bad_range(body, open);
      step = std::max<std::int64_t>(*parsed, 1);
      right = right.substr(0, more);
    }
    Node node;
    node.kind = Node::Kind::IntRange;
    std::int64_t last = 0;
    if (is_letter(left) && is_letter(right)) {
      node.kind = Node::Kind::CharRange;
      node.first = letter_index(left[0]);
      last = letter_index(right[0]);
    } else {
      const std::optional<std::int64_t> first = parse_int(left);
      const std::optional<std::int64_t> end = parse_int(right);
      if (!first || !end) bad_range(body, open);
      node.first = *first;
      last = *end;
      if (zero_led(left) || zero_led(right)) node.width = std::max(left.size(), right.size());
    }
    node.step = last < node.first ? -step : step;
    const std::uint64_t span =
        static_cast<std::uint64_t>(last < node.first ? node.first - last : last - node.first);
    node.count = span / static_cast<std::uint64_t>(step) + 1;
    return node;
  }

  const std::string& pattern_;
};

Size sequence_size(const Sequence& sequence);

Size node_size(const Node& node) {
  switch (node.kind) {
    case Node::Kind::Literal:
      return {1, node.literal.size()};
    case Node::Kind::Alternatives: {
      Size size{0, 0};
      for (const Sequence& alternative : node.alternatives) {
        const Size part = sequence_size(alternative);
        size.count = add_sat(size.count, part.count);
        size.bytes = add_sat(size.bytes, part.bytes);
      }
      return size;
    }
    case Node::Kind::IntRange:
    case Node::Kind::CharRange:
      break;
  }
  const std::size_t widest =
      std::max(node_value(node, 0).size(), node_value(node, node.count - 1).size());
  return {node.count, mul_sat(node.count, widest)};
}

// Every string of a sequence is one string of each node, concatenated.
Size sequence_size(const Sequence& sequence) {
  Size size;
  for (const Node& node : sequence) {
    const Size part = node_size(node);
    size.bytes = add_sat(mul_sat(size.bytes, part.count), mul_sat(part.bytes, size.count));
    size.count = mul_sat(size.count, part.count);
  }
  return size;
}

std::vector<std::string> expand_sequence(const Sequence& sequence);

std::vector<std::string> expand_node(const Node& node) {
  std::vector<std::string> values;
  if (node.kind == Node::Kind::Literal) {
    values.push_back(node.literal);
  } else if (node.kind == Node::Kind::Alternatives) {
    for (const Sequence& alternative : node.alternatives) {
      std::vector<std::string> part = expand_sequence(alternative);
      values.insert(values.end(), std::make_move_iterator(part.begin()),
                    std::make_move_iterator(part.end()));
    }
  } else {
    values.reserve(static_cast<std::size_t>(node.count));
    for (std::uint64_t i = 0; i < node.count; ++i) values.push_back(node_value(node, i));
  }
  return values;
}

// The cartesian product of the nodes' values, the first node varying slowest.
std::vector<std::string> expand_sequence(const Sequence& sequence) {
  std::vector<std::string> prefixes{std::string()};
  for (const Node& node : sequence) {
    const std::vector<std::string> values = expand_node(node);
    std::vector<std::string> next;
    next.reserve(prefixes.size() * values.size());
    for (const std::string& prefix : prefixes) {
      for (const std::string& value : values) next.push_back(prefix + value);
    }
    prefixes = std::move(next);
  }
  return prefixes;
}

}  // namespace

std::vector<std::string> expand_braces(const std::string& pattern) {
  const auto refuse = [&](const std::string& why) {
    throw runtime::InvalidArgument("brace pattern \"" + pattern.substr(0, 200) +
                                   (pattern.size() > 200 ? "...\"" : "\"") + ": " + why);
  };
  if (pattern.empty()) refuse("empty");
  if (pattern.size() > kMaxBracePatternBytes) {
    refuse(std::to_string(pattern.size()) + " bytes, at most " +
           std::to_string(kMaxBracePatternBytes) + " accepted");
  }
  const Sequence sequence = Parser(pattern).parse();
  const Size size = sequence_size(sequence);
  if (size.count > kMaxBraceExpansions) {
    refuse("expands to " + (size.count == kSaturated ? "over 2^62" : std::to_string(size.count)) +
           " names, at most " + std::to_string(kMaxBraceExpansions) + " accepted");
  }
  if (size.bytes > kMaxBraceExpandedBytes) {
    refuse("expands to up to " + std::to_string(size.bytes) + " bytes of names, at most " +
           std::to_string(kMaxBraceExpandedBytes) + " accepted");
  }
  return expand_sequence(sequence);
}

}  // namespace vdnn::models
