// StoredConvAlgos: a convolution's engine choices survive the text form exactly, and a stored
// text that a search could not have produced (or that does not parse) is refused with a reason.
#include "layers/StoredConvAlgos.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace vdnn::layers {
namespace {

StoredConvAlgos sample(bool measured) {
  const double t = measured ? 1.0 : -1.0;
  StoredConvAlgos a;
  a.forward = {{62, {{1, 3}, {17, -1}}, 4096, t * 1.2345678901234567e-4, 1},
               {0, {}, 0, t * 0.1 / 3.0, 1}};
  a.backward_data = {{5, {{3, 0}}, std::uint64_t{6} << 30, t * 2e-3, 8}, {1, {}, 123, t * 4e-3, 1}};
  a.backward_filter = {{0, {{2, 8}, {4, 1}, {9, 0}}, 0, t * 7.5e-6, 16}};
  return a;
}

ConvAlgoLimits limits(bool measured) {
  ConvAlgoLimits l;
  l.knob_types = 44;
  l.chunks = {1, 2, 4, 8, 16};
  l.measured = measured;
  return l;
}

void expect_same(const StoredConvAlgos& a, const StoredConvAlgos& b) {
  EXPECT_EQ(a.forward, b.forward);
  EXPECT_EQ(a.backward_data, b.backward_data);
  EXPECT_EQ(a.backward_filter, b.backward_filter);
  for (std::size_t i = 0; i < a.forward.size(); ++i) {
    EXPECT_EQ(a.forward[i].seconds, b.forward[i].seconds);  // bit for bit, not approximately
  }
}

TEST(StoredConvAlgos, TextRoundTripsExactly) {
  for (const bool measured : {true, false}) {
    const StoredConvAlgos a = sample(measured);
    std::string why;
    const std::optional<StoredConvAlgos> back = parse_conv_algos(to_text(a), why);
    ASSERT_TRUE(back.has_value()) << why;
    expect_same(a, *back);
    EXPECT_EQ(to_text(*back), to_text(a));
    EXPECT_EQ(check_conv_algos(*back, limits(measured)), "");
  }
}

TEST(StoredConvAlgos, MalformedTextIsRefusedWithAReason) {
  const std::string good = to_text(sample(true));
  const auto refused = [](const std::string& text) {
    std::string why;
    const bool parsed = parse_conv_algos(text, why).has_value();
    EXPECT_FALSE(parsed) << text;
    EXPECT_FALSE(why.empty());
    return why;
  };
  refused("");
  refused("garbage\n");
  refused(good.substr(0, good.size() / 2));  // truncated
  refused(good + "extra\n");
  std::string text = good;
  text.replace(text.find("4096"), 4, "40x6");
  refused(text);
  text = good;
  text.replace(text.find("forward 2"), 9, "forward 3");
  EXPECT_NE(refused(text).find("forward"), std::string::npos);
  text = good;
  text.replace(text.find("backward_data 2"), 15, "backward_filter 2");
  refused(text);
  text = good;
  text.replace(text.find(" 1 0\n"), 5, " 1 0 9\n");  // a field after the knobs
  refused(text);
  text = good;
  text.replace(text.find(" 17:-1"), 6, " 17-1");  // a knob without its colon
  refused(text);
  text = good;
  text.replace(text.find(" 2 1:3"), 6, " 3 1:3");  // one knob fewer than its count says
  refused(text);
}

TEST(StoredConvAlgos, EntriesASearchCouldNotHaveMadeAreRefused) {
  const auto check = [](StoredConvAlgos a, const ConvAlgoLimits& l) {
    return check_conv_algos(a, l);
  };
  StoredConvAlgos a = sample(true);
  a.backward_filter[0].engine = -1;
  EXPECT_NE(check(a, limits(true)).find("engine out of range"), std::string::npos);
  a = sample(true);
  a.backward_data[0].knobs[0].first = 44;  // CUDNN_KNOB_TYPE_COUNTS
  EXPECT_NE(check(a, limits(true)).find("knob out of range"), std::string::npos);
  a = sample(true);
  a.forward[0].knobs[1].first = -2;
  EXPECT_NE(check(a, limits(true)).find("knob out of range"), std::string::npos);
  a = sample(true);
  a.backward_data[0].chunks = 3;
  EXPECT_NE(check(a, limits(true)).find("no problem of 3 chunks"), std::string::npos);
  a = sample(true);
  ConvAlgoLimits odd = limits(true);
  odd.chunks = {1};  // a batch that no chunking divides
  EXPECT_NE(check(a, odd).find("chunks"), std::string::npos);
  EXPECT_NE(check(sample(true), limits(false)).find("measured"), std::string::npos);
  EXPECT_NE(check(sample(false), limits(true)).find("not measured"), std::string::npos);
  a = sample(true);
  a.forward[1].seconds = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(check(a, limits(true)).find("seconds"), std::string::npos);
  a = sample(true);
  a.backward_filter.clear();
  EXPECT_NE(check(a, limits(true)).find("no candidate"), std::string::npos);
}

}  // namespace
}  // namespace vdnn::layers
