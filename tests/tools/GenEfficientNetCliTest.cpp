// `vdnn gen efficientnet` run as a process: the presets print the shipped configs, a custom width,
// depth and resolution prints a network of that shape, and bad arguments exit 2 naming the rule.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "tools/CliRun.hpp"

namespace {

using vdnn::test::CliRun;
using vdnn::test::config;
using vdnn::test::vdnn;

std::string shipped_text(const std::string& name) {
  std::ifstream in(config(name), std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Exit 2 and `message` in the output of `vdnn gen ARGS`.
void expect_usage_error(const std::string& args, const std::string& message) {
  const CliRun run = vdnn("gen " + args);
  EXPECT_EQ(run.code, 2) << args << "\n" << run.output;
  EXPECT_NE(run.output.find(message), std::string::npos) << args << "\n" << run.output;
}

TEST(CliGenEfficientNet, PresetsPrintTheShippedConfigs) {
  for (const char* preset : {"b0", "b7"}) {
    const CliRun run = vdnn("gen efficientnet --preset " + std::string(preset));
    ASSERT_EQ(run.code, 0) << run.output;
    EXPECT_EQ(run.output, shipped_text("efficientnet_" + std::string(preset) + ".json"));
  }
}

TEST(CliGenEfficientNet, WidthDepthAndResolutionShapeTheNetwork) {
  const CliRun run = vdnn(
      "gen efficientnet --width 1.0 --depth 1.0 --resolution 256 --dropout 0.3 --num-classes 10");
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("\"name\": \"efficientnet_w1p0_d1p0\""), std::string::npos);
  EXPECT_NE(run.output.find("\"height\": 256, \"width\": 256"), std::string::npos);
  EXPECT_NE(run.output.find("made by `vdnn gen efficientnet --width 1.0 --depth 1.0 --resolution "
                            "256 --dropout 0.3 --num-classes 10`"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("\"type\": \"dropout\", \"p\": 0.3"), std::string::npos);
  // B0's layers with a 10-class classifier: 5,288,548 - 1281 * 990.
  EXPECT_NE(run.output.find("; 4,020,358 parameters."), std::string::npos) << run.output;
}

TEST(CliGenEfficientNet, APresetTakesOverrides) {
  const CliRun run = vdnn("gen efficientnet --preset b7 --resolution 300");
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("\"name\": \"efficientnet_b7\""), std::string::npos);
  EXPECT_NE(run.output.find("\"height\": 300, \"width\": 300"), std::string::npos);
  EXPECT_NE(run.output.find("`vdnn gen efficientnet --preset b7 --resolution 300`"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("\"eps\": 0.001, \"momentum\": 0.01"), std::string::npos);
}

TEST(CliGenEfficientNet, BadArgumentsExitWith2AndNameTheRule) {
  expect_usage_error("efficientnet --width 0 --depth 1 --resolution 224",
                     "width must be in (0, 8]; 0.0 is not");
  expect_usage_error("efficientnet --width 1 --depth 9 --resolution 224",
                     "depth must be in (0, 8]");
  expect_usage_error("efficientnet --width 1 --depth 1 --resolution 16",
                     "resolution must be in [32, 2048] pixels; 16 is not");
  expect_usage_error("efficientnet --preset b0 --dropout 1", "dropout must be in [0, 1)");
  expect_usage_error("efficientnet --preset b0 --num-classes 1", "num_classes");
  expect_usage_error("efficientnet --width 1 --depth 1",
                     "needs --preset b0..b7, or --width, --depth and --resolution");
  expect_usage_error("efficientnet --preset b3 --width 2", "--width (the preset sets it)");
  expect_usage_error("efficientnet --preset b0 --input imagenet", "--input does not apply");
  expect_usage_error("efficientnet --preset b9", "b9");
  expect_usage_error("resnet --depth 50 --input imagenet --width 2", "--width does not apply");
  expect_usage_error("resnet --depth 50.5 --input imagenet", "whole number");
  expect_usage_error("densenet --depth 121", "needs --depth and --input");
}

}  // namespace
