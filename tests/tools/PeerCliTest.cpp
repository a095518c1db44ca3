// The peer tier on the command line (Note [Peer tier]): --offload-peer and --peer-budget for plan,
// train and compare on the CPU backend's emulated peer; bytes per tier and per-link busy fractions
// in summary.json and results.json, a trace track per link, and the refusals.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/tools/CliRun.hpp"
#include "tools/cli/ExitCode.hpp"

namespace vdnn::tools {
namespace {

using nlohmann::json;

std::string resnet20() { return " --config " + test::config("resnet20-cifar.json"); }

// Small enough that vdnn-all at batch 4 sends some maps to the peer and the rest to the host.
const std::string kPeer = " --offload-peer 1 --peer-budget 256KiB";

json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return json::parse(in);
}

TEST(PeerCli, PlanShowsTheTierPerOffloadAndBytesPerTier) {
  const auto text = test::vdnn("plan" + resnet20() + " --batch 4 --policy vdnn-all" + kPeer);
  ASSERT_EQ(text.code, kExitOk) << text.output;
  EXPECT_NE(text.output.find(" @peer"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("offloaded to peer GPU 1:"), std::string::npos) << text.output;
  const auto run = test::vdnn("plan" + resnet20() + " --batch 4 --policy vdnn-all --json" + kPeer);
  ASSERT_EQ(run.code, kExitOk) << run.output;
  const json plan = json::parse(run.output);
  EXPECT_EQ(plan["peer_device"], 1);
  EXPECT_EQ(plan["peer_budget_bytes"], 256U << 10);
  EXPECT_GT(plan["peer_offloaded_bytes"].get<double>(), 0.0);
  EXPECT_GT(plan["host_offloaded_bytes"].get<double>(), 0.0);
  std::map<std::string, int> tiers;
  for (const json& a : plan["actions"]) {
    if (a["op"] == "offload") ++tiers[a["tier"].get<std::string>()];
  }
  EXPECT_GT(tiers["peer"], 0);
  EXPECT_GT(tiers["host"], 0);
}

TEST(PeerCli, TrainReportsBytesPerTierEachLinksBusyFractionAndATrackPerLink) {
  const auto dir = test::temp_dir("peer-train");
  const auto run = test::vdnn("train" + resnet20() +
                              " --batch 4 --iters 2 --device cpu --policy vdnn-all --out " +
                              dir.string() + " --trace " + (dir / "trace.json").string() + kPeer);
  ASSERT_EQ(run.code, kExitOk) << run.output;
  const json summary = read_json(dir / "summary.json");
  EXPECT_GT(summary["peer_offloaded_bytes"].get<double>(), 0.0);
  EXPECT_GT(summary["host_offloaded_bytes"].get<double>(), 0.0);
  EXPECT_EQ(summary["peer_offloaded_bytes_median"], summary["peer_offloaded_bytes"]);
  for (const char* link : {"peer_offload_busy_median", "host_offload_busy_median",
                           "peer_prefetch_busy_median", "host_prefetch_busy_median"}) {
    EXPECT_GE(summary[link].get<double>(), 0.0) << link;
  }
  std::map<int, std::string> threads;
  int peer_copies = 0;
  const json trace = read_json(dir / "trace.json");
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") threads[e["tid"]] = e["args"]["name"];
    if (e["ph"] == "X" && e["tid"] == 4) ++peer_copies;
  }
  EXPECT_EQ(threads[4], "peer offload");
  EXPECT_EQ(threads[5], "peer prefetch");
  EXPECT_GT(peer_copies, 0);
  std::filesystem::remove_all(dir);
}

TEST(PeerCli, CompareReportsBytesPerTierAndEachLinksBusyFraction) {
  const auto dir = test::temp_dir("peer-compare");
  const auto run = test::vdnn("compare" + resnet20() +
                              " --device cpu --policies vdnn-all --batches 4 --warmup 1 --iters 2 "
                              "--out " +
                              dir.string() + kPeer);
  ASSERT_EQ(run.code, kExitOk) << run.output;
  const json cells = read_json(dir / "results.json")["cells"];
  ASSERT_EQ(cells.size(), 1U);
  EXPECT_GT(cells[0]["peer_offloaded_bytes"].get<double>(), 0.0);
  EXPECT_GT(cells[0]["host_offloaded_bytes"].get<double>(), 0.0);
  EXPECT_TRUE(cells[0].contains("peer_offload_busy"));
  EXPECT_TRUE(cells[0].contains("host_prefetch_busy"));
  std::filesystem::remove_all(dir);
}

TEST(PeerCli, RefusesAPeerWithoutABudgetSeveralPeersAndAnUnknownPeer) {
  const std::string plan = "plan" + resnet20() + " --batch 4 --policy vdnn-all";
  const auto alone = test::vdnn(plan + " --offload-peer 1");
  EXPECT_EQ(alone.code, kExitUsage) << alone.output;
  EXPECT_NE(alone.output.find("go together"), std::string::npos) << alone.output;
  const auto two = test::vdnn(plan + " --offload-peer 1,2 --peer-budget 1MiB");
  EXPECT_EQ(two.code, kExitUsage) << two.output;
  EXPECT_NE(two.output.find("one peer GPU"), std::string::npos) << two.output;
  const auto dir = test::temp_dir("peer-refused");
  const auto unknown =
      test::vdnn("train" + resnet20() + " --batch 4 --iters 1 --device cpu --policy vdnn-all " +
                 "--offload-peer 3 --peer-budget 1MiB --out " + dir.string());
  EXPECT_NE(unknown.code, kExitOk) << unknown.output;
  EXPECT_NE(unknown.output.find("no GPU 3"), std::string::npos) << unknown.output;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vdnn::tools
