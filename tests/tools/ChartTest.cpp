// The report's chart helpers: nice tick values, byte units, number formatting, XML escaping.
#include <gtest/gtest.h>

#include <vector>

#include "tools/compare/ByteUnits.hpp"
#include "tools/compare/Chart.hpp"
#include "tools/compare/Svg.hpp"

namespace {

using vdnn::tools::nice_ticks;

TEST(Chart, NiceTicksCoverTheRangeInRoundSteps) {
  EXPECT_EQ(nice_ticks(7.3), (std::vector<double>{0, 2, 4, 6, 8}));
  EXPECT_EQ(nice_ticks(10.0), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(nice_ticks(1210.0), (std::vector<double>{0, 250, 500, 750, 1000, 1250}));
  EXPECT_EQ(nice_ticks(0.0), (std::vector<double>{0, 1}));
  EXPECT_EQ(nice_ticks(-3.0), (std::vector<double>{0, 1}));
  const std::vector<double> small = nice_ticks(0.037);
  EXPECT_GE(small.back(), 0.037);
  EXPECT_LE(small.size(), 8U);
}

TEST(Chart, BytesInBinaryUnits) {
  EXPECT_EQ(vdnn::tools::format_bytes(0), "0 B");
  EXPECT_EQ(vdnn::tools::format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(vdnn::tools::format_bytes(4ULL << 30), "4 GiB");
  EXPECT_EQ(vdnn::tools::format_bytes(3610ULL << 20), "3.53 GiB");
  EXPECT_STREQ(vdnn::tools::byte_unit_for(900.0 * (1 << 20)).name, "MiB");
}

TEST(Chart, NumbersAndEscaping) {
  EXPECT_EQ(vdnn::tools::format_number(12.50, 2), "12.5");
  EXPECT_EQ(vdnn::tools::format_number(3.0, 1), "3");
  EXPECT_EQ(vdnn::tools::format_number(-0.01, 1), "0");
  EXPECT_EQ(vdnn::tools::escape_xml("a<b&\"c'>"), "a&lt;b&amp;&quot;c&#39;&gt;");
}

}  // namespace
