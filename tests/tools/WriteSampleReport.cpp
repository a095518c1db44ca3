// vdnn_sample_report OUT.html [TIMELINE_POINTS]: writes the sample compare report, for the
// screenshot check (report_screenshot.py) that CTest runs as report_renders_in_chromium.
#include <cstdio>
#include <fstream>
#include <string>

#include "tools/SampleCompareResults.hpp"
#include "tools/compare/ReportHtml.hpp"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: vdnn_sample_report OUT.html [TIMELINE_POINTS]\n");
    return 2;
  }
  const std::size_t points = argc == 3 ? std::stoul(argv[2]) : 300;
  std::ofstream out(argv[1], std::ios::binary);
  out << vdnn::tools::render_report_html(vdnn::test::sample_compare_results(points));
  out.close();
  if (!out) {
    std::fprintf(stderr, "vdnn_sample_report: cannot write %s\n", argv[1]);
    return 1;
  }
  std::printf("%s\n", argv[1]);
  return 0;
}
