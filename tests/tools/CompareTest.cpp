// `vdnn compare`: the three files and their cells, the searches, the trace, and bad input (the
// documented exit codes, and cells already measured never lost).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "tests/tools/CliRun.hpp"
#include "tools/cli/ExitCode.hpp"

namespace vdnn::tools {
namespace {

using nlohmann::json;

json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return json::parse(in);
}

std::size_t lines_of(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

std::string resnet20() { return " --config " + test::config("resnet20-cifar.json"); }

TEST(Compare, MatrixWritesEveryCellToTheThreeFiles) {
  const auto dir = test::temp_dir("compare-matrix");
  const auto run = test::vdnn("compare" + resnet20() +
                              " --device cpu --policies baseline,vdnn-all,uvm-prefetch "
                              "--batches 2,4 --warmup 1 --iters 2 --out " +
                              dir.string());
  ASSERT_EQ(run.code, kExitOk) << run.output;
  EXPECT_NE(run.output.find("cell 6/6"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("(0 left after it)"), std::string::npos);
  const json r = read_json(dir / "results.json");
  EXPECT_EQ(r["mode"], "matrix");
  ASSERT_EQ(r["cells"].size(), 6U);
  std::set<std::string> policies;
  for (const json& c : r["cells"]) {
    EXPECT_EQ(c["status"], "ok") << c.dump();
    EXPECT_EQ(c["precision"], "fp32");
    EXPECT_GT(c["images_per_s"].get<double>(), 0.0);
    EXPECT_EQ(c["measured_peak_bytes"], c["predicted_peak_bytes"]);
    policies.insert(c["policy"].get<std::string>());
    if (c["policy"] == "vdnn-all") {
      EXPECT_GT(c["offloaded_bytes"].get<double>(), 0.0);
    }
    if (c["policy"] == "uvm-prefetch") {
      EXPECT_GT(c["migrated_bytes"].get<double>(), 0.0);
    }
  }
  EXPECT_EQ(policies.size(), 3U);
  EXPECT_EQ(r["timeline"]["policy"], "vdnn-all");
  EXPECT_EQ(r["timeline"]["batch"], 4);
  EXPECT_EQ(lines_of(dir / "results.csv"), 7U);
  std::ifstream html(dir / "report.html");
  const std::string page((std::istreambuf_iterator<char>(html)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("<svg"), std::string::npos);
  EXPECT_NE(page.find("uvm-prefetch"), std::string::npos);
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// --precisions fp32,bf16: every (policy, batch) cell in each precision, the precision a column of
// every file, and bf16's feature maps at half the bytes.
TEST(Compare, PrecisionsRunEveryCellInEachPrecision) {
  const auto dir = test::temp_dir("compare-precisions");
  const auto run = test::vdnn("compare" + resnet20() +
                              " --device cpu --policies baseline,vdnn-all --batches 4 "
                              "--precisions fp32,bf16 --warmup 0 --iters 1 --out " +
                              dir.string());
  ASSERT_EQ(run.code, kExitOk) << run.output;
  EXPECT_NE(run.output.find("cell 4/4: vdnn-all bf16 batch 4"), std::string::npos) << run.output;
  const json r = read_json(dir / "results.json");
  EXPECT_EQ(r["precisions"], (json{"fp32", "bf16"}));
  ASSERT_EQ(r["cells"].size(), 4U);
  std::map<std::pair<std::string, std::string>, json> cells;
  for (const json& c : r["cells"]) {
    EXPECT_EQ(c["status"], "ok") << c.dump();
    EXPECT_EQ(c["measured_peak_bytes"], c["predicted_peak_bytes"]) << c.dump();
    cells[{c["policy"].get<std::string>(), c["precision"].get<std::string>()}] = c;
  }
  ASSERT_EQ(cells.size(), 4U);
  for (const std::string policy : {"baseline", "vdnn-all"}) {
    const json& fp32 = cells.at({policy, "fp32"});
    const json& bf16 = cells.at({policy, "bf16"});
    EXPECT_LT(bf16["predicted_peak_bytes"], fp32["predicted_peak_bytes"]) << policy;
  }
  // vdnn-all offloads every map: bf16 moves about half the bytes (the input stays fp32).
  const auto offloaded = [&](const char* precision) {
    return cells.at({"vdnn-all", precision})["offloaded_bytes"].get<double>();
  };
  EXPECT_GT(offloaded("bf16"), 0.45 * offloaded("fp32"));
  EXPECT_LT(offloaded("bf16"), 0.55 * offloaded("fp32"));
  EXPECT_EQ(r["timeline"]["precision"], "fp32");

  const std::string csv = read_text(dir / "results.csv");
  EXPECT_EQ(csv.rfind("network,policy,precision,batch,", 0), 0U) << csv;
  EXPECT_EQ(lines_of(dir / "results.csv"), 5U);
  EXPECT_NE(csv.find(",vdnn-all,bf16,4,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",baseline,fp32,4,"), std::string::npos) << csv;
  const std::string page = read_text(dir / "report.html");
  EXPECT_NE(page.find(">vdnn-all bf16</text>"), std::string::npos);
  EXPECT_NE(page.find(">baseline fp32</text>"), std::string::npos);
}

TEST(Compare, PrecisionAloneSetsEveryCellsPrecision) {
  const auto dir = test::temp_dir("compare-bf16");
  const auto run = test::vdnn("compare" + resnet20() +
                              " --device cpu --policies baseline --batches 2 --precision bf16 "
                              "--warmup 0 --iters 1 --out " +
                              dir.string());
  ASSERT_EQ(run.code, kExitOk) << run.output;
  const json r = read_json(dir / "results.json");
  ASSERT_EQ(r["cells"].size(), 1U);
  EXPECT_EQ(r["cells"][0]["precision"], "bf16");
  EXPECT_EQ(r["cells"][0]["status"], "ok");
  // One precision: the legends name the policy alone.
  EXPECT_NE(read_text(dir / "report.html").find(">baseline</text>"), std::string::npos);
}

// Max-batch per precision: bf16's maps take half the bytes, so a larger batch fits.
TEST(Compare, MaxBatchSearchesEachPrecision) {
  const auto dir = test::temp_dir("compare-max-batch-precisions");
  const auto run = test::vdnn("compare" + resnet20() +
                              " --device cpu --policies baseline --max-batch --mem-budget 24MiB "
                              "--precisions fp32,bf16 --warmup 0 --iters 1 --out " +
                              dir.string());
  ASSERT_EQ(run.code, kExitOk) << run.output;
  const json r = read_json(dir / "results.json");
  ASSERT_EQ(r["searches"].size(), 2U);
  EXPECT_EQ(r["searches"][0]["precision"], "fp32");
  EXPECT_EQ(r["searches"][1]["precision"], "bf16");
  const std::int64_t fp32 = r["searches"][0]["value"];
  const std::int64_t bf16 = r["searches"][1]["value"];
  EXPECT_GT(fp32, 0);
  EXPECT_GT(bf16, fp32 * 3 / 2) << r.dump();
  bool confirmed = false;
  for (const json& c : r["cells"]) {
    if (c["precision"] == "bf16" && c["batch"] == bf16 && c["status"] == "ok") {
      confirmed = c["measured_peak_bytes"].get<std::uint64_t>() <= std::uint64_t{24} << 20;
    }
  }
  EXPECT_TRUE(confirmed) << r.dump();
}

TEST(Compare, ACellThatDoesNotFitIsRecordedAndTheRunGoesOn) {
  // 12 MiB: baseline needs ~16 MiB at batch 8, vdnn-all ~6 MiB.
  const auto dir = test::temp_dir("compare-mixed");
  const auto run = test::vdnn("compare" + resnet20() +
                              " --device cpu --policies baseline,vdnn-all --batches 8 "
                              "--mem-budget none,12MiB --warmup 0 --iters 1 --out " +
                              dir.string());
  ASSERT_EQ(run.code, kExitOk) << run.output;
  const json r = read_json(dir / "results.json");
  ASSERT_EQ(r["cells"].size(), 4U);
  EXPECT_EQ(r["cells"][0]["status"], "ok");  // no budget
  EXPECT_EQ(r["cells"][0]["budget_bytes"], 0);
  EXPECT_EQ(r["cells"][2]["status"], "does-not-fit");
  EXPECT_NE(r["cells"][2]["message"].get<std::string>().find("short by"), std::string::npos);
  EXPECT_EQ(r["cells"][3]["status"], "ok");
  EXPECT_LE(r["cells"][3]["measured_peak_bytes"].get<std::uint64_t>(), std::uint64_t{12} << 20);
}

TEST(Compare, ABudgetBelowEveryPolicysNeedExitsWith3AndKeepsTheFiles) {
  const auto dir = test::temp_dir("compare-none-fit");
  const auto run = test::vdnn("compare" + resnet20() +
                              " --device cpu --policies baseline,vdnn-all --batches 4 "
                              "--mem-budget 64KiB --warmup 0 --iters 1 --out " +
                              dir.string());
  EXPECT_EQ(run.code, kExitDoesNotFit) << run.output;
  EXPECT_NE(run.output.find("no cell fits"), std::string::npos) << run.output;
  const json r = read_json(dir / "results.json");
  ASSERT_EQ(r["cells"].size(), 2U);
  for (const json& c : r["cells"]) EXPECT_EQ(c["status"], "does-not-fit");
  EXPECT_TRUE(std::filesystem::exists(dir / "report.html"));
}

TEST(Compare, BadUsageExitsWith2BeforeAnyCell) {
  const auto dir = test::temp_dir("compare-usage");
  const std::string base = "compare" + resnet20() + " --device cpu --iters 1 ";
  const auto unknown = test::vdnn(base + "--policies baseline,vdnn-none --out " + dir.string());
  EXPECT_EQ(unknown.code, kExitUsage);
  EXPECT_NE(unknown.output.find("vdnn-none"), std::string::npos) << unknown.output;
  const auto zero = test::vdnn(base + "--batches 4,0 --out " + dir.string());
  EXPECT_EQ(zero.code, kExitUsage) << zero.output;
  EXPECT_EQ(test::vdnn(base + "--mem-budget 0 --out " + dir.string()).code, kExitUsage);
  EXPECT_EQ(test::vdnn(base + "--max-batch --out " + dir.string()).code, kExitUsage);
  std::ofstream(dir / "file") << "not a directory";
  EXPECT_EQ(test::vdnn(base + "--precisions fp32,fp16 --out " + dir.string()).code, kExitUsage);
  const auto twice = test::vdnn(base + "--precisions bf16,bf16 --out " + dir.string());
  EXPECT_EQ(twice.code, kExitUsage) << twice.output;
  EXPECT_NE(twice.output.find("bf16 twice"), std::string::npos) << twice.output;
  EXPECT_EQ(test::vdnn(base + "--precision bf16 --precisions fp32,bf16 --out " + dir.string()).code,
            kExitUsage);
  const auto unwritable = test::vdnn(base + "--out " + (dir / "file").string());
  EXPECT_EQ(unwritable.code, kExitUsage);
  EXPECT_NE(unwritable.output.find((dir / "file").string()), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "results.json"));
}

TEST(Compare, MaxBatchFindsALargerBatchForVdnnAllConfirmedByARealRun) {
  const auto dir = test::temp_dir("compare-max-batch");
  const auto run = test::vdnn("compare" + resnet20() +
                              " --device cpu --policies baseline,vdnn-all --max-batch "
                              "--mem-budget 48MiB --warmup 0 --iters 1 --out " +
                              dir.string());
  ASSERT_EQ(run.code, kExitOk) << run.output;
  const json r = read_json(dir / "results.json");
  EXPECT_EQ(r["mode"], "max-batch");
  ASSERT_EQ(r["searches"].size(), 2U);
  const std::int64_t baseline = r["searches"][0]["value"];
  const std::int64_t vdnn_all = r["searches"][1]["value"];
  EXPECT_GT(baseline, 0);
  EXPECT_GE(vdnn_all, 3 * baseline);
  // The answer is a cell that trained under the budget.
  bool confirmed = false;
  for (const json& c : r["cells"]) {
    if (c["policy"] == "vdnn-all" && c["batch"] == vdnn_all && c["status"] == "ok") {
      confirmed = c["measured_peak_bytes"].get<std::uint64_t>() <= std::uint64_t{48} << 20;
    }
  }
  EXPECT_TRUE(confirmed) << r.dump();
}

TEST(Compare, DepthSweepTrainsADeeperResNetWithVdnnAll) {
  const auto dir = test::temp_dir("compare-depth");
  const auto run = test::vdnn(
      "compare --depth-sweep resnet --input cifar --device cpu --policies baseline,vdnn-all "
      "--batches 2 --mem-budget 40MiB --max-depth 400 --warmup 0 --iters 1 --out " +
      dir.string());
  ASSERT_EQ(run.code, kExitOk) << run.output;
  const json r = read_json(dir / "results.json");
  EXPECT_EQ(r["mode"], "depth-sweep");
  ASSERT_EQ(r["searches"].size(), 2U);
  const std::int64_t baseline = r["searches"][0]["value"];
  const std::int64_t vdnn_all = r["searches"][1]["value"];
  EXPECT_GE(baseline, 11);
  EXPECT_GT(vdnn_all, baseline);
  EXPECT_EQ((vdnn_all - 2) % 3, 0);  // a depth `vdnn gen` accepts
}

TEST(Compare, TraceHasAProcessPerCellWithItsStreams) {
  const auto dir = test::temp_dir("compare-trace");
  const auto run = test::vdnn("compare" + resnet20() +
                              " --device cpu --policies baseline,vdnn-all --batches 2 "
                              "--warmup 0 --iters 1 --out " +
                              dir.string() + " --trace " + (dir / "trace.json").string());
  ASSERT_EQ(run.code, kExitOk) << run.output;
  const json trace = read_json(dir / "trace.json");
  std::set<int> processes;
  std::set<int> offload_events;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes.insert(e["pid"].get<int>());
    if (e["ph"] == "X" && e["cat"] == "offload") offload_events.insert(e["pid"].get<int>());
  }
  EXPECT_EQ(processes, (std::set<int>{1, 2}));
  EXPECT_EQ(offload_events, std::set<int>{2});  // only vdnn-all offloads
}

}  // namespace
}  // namespace vdnn::tools
