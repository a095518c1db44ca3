// expand_braces: braceexpand's ranges, padding, lists, products and nesting, and the errors and
// limits a hostile pattern meets.
#include "models/data/image/BracePattern.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

using Names = std::vector<std::string>;

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

// The message of the InvalidArgument that expanding `pattern` throws.
std::string expand_error(const std::string& pattern) {
  try {
    expand_braces(pattern);
  } catch (const runtime::InvalidArgument& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected InvalidArgument for " << pattern.substr(0, 80);
  return {};
}

TEST(BracePatternTest, PatternWithoutBracesIsItself) {
  EXPECT_EQ(expand_braces("data/shard.tar"), Names{"data/shard.tar"});
}

TEST(BracePatternTest, ZeroPaddedRangeKeepsItsWidth) {
  EXPECT_EQ(expand_braces("shards-{000..003}.tar"),
            (Names{"shards-000.tar", "shards-001.tar", "shards-002.tar", "shards-003.tar"}));
  EXPECT_EQ(expand_braces("{08..11}"), (Names{"08", "09", "10", "11"}));
  // One padded end is enough; the width is the longer one's.
  EXPECT_EQ(expand_braces("{9..011}"), (Names{"009", "010", "011"}));
}

TEST(BracePatternTest, UnpaddedRangesCountUpDownAndInSteps) {
  EXPECT_EQ(expand_braces("{8..11}"), (Names{"8", "9", "10", "11"}));
  EXPECT_EQ(expand_braces("{3..1}"), (Names{"3", "2", "1"}));
  EXPECT_EQ(expand_braces("{0..10..5}"), (Names{"0", "5", "10"}));
  EXPECT_EQ(expand_braces("{10..0..-4}"), (Names{"10", "6", "2"}));
  EXPECT_EQ(expand_braces("{1..3..0}"), (Names{"1", "2", "3"}));  // step 0 is 1
  EXPECT_EQ(expand_braces("{5..5}"), Names{"5"});
  // "0" and "-0" alone ask for no padding (braceexpand's rule).
  EXPECT_EQ(expand_braces("{-0..10..5}"), (Names{"0", "5", "10"}));
}

TEST(BracePatternTest, NegativeRangesPadWithTheSignCounted) {
  EXPECT_EQ(expand_braces("{-1..1}"), (Names{"-1", "0", "1"}));
  EXPECT_EQ(expand_braces("{-01..1}"), (Names{"-01", "000", "001"}));
}

TEST(BracePatternTest, LetterRanges) {
  EXPECT_EQ(expand_braces("x{a..c}"), (Names{"xa", "xb", "xc"}));
  EXPECT_EQ(expand_braces("{e..a..2}"), (Names{"e", "c", "a"}));
  // Through braceexpand's alphabet A..Z a..z, not ASCII.
  EXPECT_EQ(expand_braces("{Y..b}"), (Names{"Y", "Z", "a", "b"}));
  EXPECT_EQ(expand_braces("{b..A..26}"), (Names{"b", "B"}));
}

TEST(BracePatternTest, CommaListsKeepTheirOrderAndEmptyAlternatives) {
  EXPECT_EQ(expand_braces("{b,a,c}.tar"), (Names{"b.tar", "a.tar", "c.tar"}));
  EXPECT_EQ(expand_braces("x{,y}"), (Names{"x", "xy"}));
}

TEST(BracePatternTest, GroupsMultiplyLeftmostSlowest) {
  EXPECT_EQ(expand_braces("{a,b}-{1..2}-{x,y}"),
            (Names{"a-1-x", "a-1-y", "a-2-x", "a-2-y", "b-1-x", "b-1-y", "b-2-x", "b-2-y"}));
}

TEST(BracePatternTest, GroupsNest) {
  EXPECT_EQ(expand_braces("{a,b{1..2}}c"), (Names{"ac", "b1c", "b2c"}));
  EXPECT_EQ(expand_braces("{{a,b},{c,{d,e}}}"), (Names{"a", "b", "c", "d", "e"}));
}

TEST(BracePatternTest, GroupsWithoutCommaOrRangeStayLiteral) {
  EXPECT_EQ(expand_braces("a{x}b"), Names{"a{x}b"});
  EXPECT_EQ(expand_braces("{}"), Names{"{}"});
  EXPECT_EQ(expand_braces("{x{1,2}}"), (Names{"{x1}", "{x2}"}));
  EXPECT_EQ(expand_braces("{{1..2}}"), (Names{"{1}", "{2}"}));
}

TEST(BracePatternTest, BackslashEscapesAndIsDropped) {
  EXPECT_EQ(expand_braces("a\\{b,c\\}"), Names{"a{b,c}"});
  EXPECT_EQ(expand_braces("{a\\,b,c}"), (Names{"a,b", "c"}));
  EXPECT_EQ(expand_braces("a\\\\b"), Names{"a\\b"});
  EXPECT_EQ(expand_braces("end\\"), Names{"end\\"});
}

TEST(BracePatternTest, UnbalancedBracesNameThePatternAndPosition) {
  const std::string open = expand_error("shards-{000..146.tar");
  EXPECT_CONTAINS(open, "shards-{000..146.tar");
  EXPECT_CONTAINS(open, "unbalanced '{' at position 7");
  EXPECT_CONTAINS(expand_error("a}b"), "unbalanced '}' at position 1");
  EXPECT_CONTAINS(expand_error("{a,b}}"), "unbalanced '}' at position 5");
  EXPECT_CONTAINS(expand_error("{a,{b}"), "unbalanced '{' at position 0");
}

TEST(BracePatternTest, BadRangesAreErrors) {
  for (const std::string pattern :
       {"s-{1..x}.tar", "s-{1..}.tar", "s-{..3}.tar", "s-{a..5}.tar", "s-{1..5..x}.tar",
        "s-{0..1234567890123456789}.tar", "s-{1..3..--1}.tar"}) {
    const std::string message = expand_error(pattern);
    EXPECT_CONTAINS(message, pattern);
    EXPECT_CONTAINS(message, "bad range");
    EXPECT_CONTAINS(message, "at position 2");
  }
}

TEST(BracePatternTest, EmptyAndOverlongPatternsAreRefused) {
  EXPECT_CONTAINS(expand_error(""), "empty");
  EXPECT_CONTAINS(expand_error(std::string(kMaxBracePatternBytes + 1, 'a')), "at most 4096");
}

TEST(BracePatternTest, TooManyExpansionsAreRefusedBeforeExpanding) {
  EXPECT_CONTAINS(expand_error("{0..999}{0..999}{0..9}"), "expands to 10000000 names");
  EXPECT_CONTAINS(expand_error("{0..999999999999999999}{0..999999999999999999}"),
                  "expands to over 2^62 names");
  // Exactly at the limit is fine.
  EXPECT_EQ(expand_braces("{0..999}{0..999}").size(), kMaxBraceExpansions);
}

TEST(BracePatternTest, TooManyBytesAreRefusedBeforeExpanding) {
  // 100000 names of about 3000 bytes: 300 MB, over the 256 MiB limit.
  EXPECT_CONTAINS(expand_error(std::string(3000, 'a') + "{0..99999}"), "bytes of names");
}

TEST(BracePatternTest, DeepNestingIsRefused) {
  std::string pattern;
  for (int i = 0; i <= kMaxBraceDepth + 1; ++i) pattern += "{a,";
  pattern += "b";
  for (int i = 0; i <= kMaxBraceDepth + 1; ++i) pattern += "}";
  EXPECT_CONTAINS(expand_error(pattern), "nested deeper than 32");
}

}  // namespace
}  // namespace vdnn::models
