// Brace patterns for WebDataset shard lists (`shards-{000..146}.tar`), expanded as the Python
// braceexpand package that WebDataset uses does it, with limits so a hostile pattern stays small.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace vdnn::models {

/// Longest pattern expand_braces accepts, in bytes.
inline constexpr std::size_t kMaxBracePatternBytes = 4096;
/// Most strings one pattern may expand to.
inline constexpr std::size_t kMaxBraceExpansions = 1'000'000;
/// Most bytes all the expanded strings together may hold.
inline constexpr std::size_t kMaxBraceExpandedBytes = std::size_t{256} << 20;
/// Deepest nesting of braces accepted.
inline constexpr int kMaxBraceDepth = 32;

/// Expands `pattern` as braceexpand.braceexpand does:
/// - `{A..B}` and `{A..B..S}` with integers A, B (optionally negative) count from A to B in
///   steps of S (default 1; its sign is ignored; 0 means 1), downwards when B < A; when A or B is
///   written with a leading zero (`{000..146}`), every number is zero-padded to the longer of the
///   two widths, the sign counted in the width (`%0Nd`).
/// - `{a..e}` (single ASCII letters, optional step) counts the same way through the alphabet
///   A..Z a..z (`{Y..b}` is Y, Z, a, b).
/// - `{x,y,z}` is each alternative in turn; alternatives may be empty and may hold groups.
/// - Several groups in one pattern give their cartesian product, the leftmost group varying
///   slowest; groups nest (`{a,b{1..2}}` is a, b1, b2).
/// - A group with neither a top-level comma nor a range (`{x}`, `{}`) stays literal, braces and
///   all (groups inside it still expand). A backslash makes the next character literal and is
///   dropped from the result (a trailing one stays); unlike braceexpand, which drops backslashes
///   again at each nesting level, it escapes exactly once.
/// Stricter than braceexpand, which would keep these literal: a group without a top-level comma
/// or inner braces whose text has `..` but is no valid range (`{1..x}`, `{1..}`, integers over 18
/// digits) is an error. The result is in expansion order; duplicates are kept.
/// Throws runtime::InvalidArgument naming the pattern and the 0-based byte position for an
/// unbalanced `{` or `}`, a bad range, nesting deeper than kMaxBraceDepth, and, naming only the
/// pattern, for an empty pattern, one longer than kMaxBracePatternBytes, or one that would give
/// more than kMaxBraceExpansions strings or more than kMaxBraceExpandedBytes (an upper bound over
/// the ranges' widths): both are counted before anything is expanded.
std::vector<std::string> expand_braces(const std::string& pattern);

}  // namespace vdnn::models
