// `vdnn inspect --devices`: the GPUs and their peer links, or that there are none.
#include <gtest/gtest.h>

#include <string>

#include "runtime/Device.hpp"
#include "runtime/Error.hpp"
#include "tests/tools/CliRun.hpp"
#include "tools/cli/ExitCode.hpp"

namespace vdnn::tools {
namespace {

TEST(InspectDevices, ListsTheGpusAndTheirPeerLinksOrSaysThereAreNone) {
  const auto run = test::vdnn("inspect --devices");
  ASSERT_EQ(run.code, kExitOk) << run.output;
  const int gpus = runtime::cuda_device_count();
  if (gpus == 0) {
    EXPECT_NE(run.output.find("no CUDA GPUs here"), std::string::npos) << run.output;
  } else {
    EXPECT_NE(run.output.find("GPU 0: "), std::string::npos) << run.output;
    EXPECT_EQ(run.output.find("peer access") != std::string::npos, gpus > 1) << run.output;
  }
}

TEST(InspectDevices, InspectWithoutAConfigOrDevicesIsAUsageError) {
  const auto run = test::vdnn("inspect");
  EXPECT_EQ(run.code, kExitUsage) << run.output;
  EXPECT_NE(run.output.find("--devices"), std::string::npos) << run.output;
}

TEST(InspectDevices, LinkKindFollowsAccessAndAtomics) {
  EXPECT_STREQ(runtime::link_kind({false, false, 0}), "none");
  EXPECT_STREQ(runtime::link_kind({true, false, 1}), "PCIe");
  EXPECT_STREQ(runtime::link_kind({true, true, 0}), "NVLink");
  EXPECT_THROW(runtime::cuda_peer_link(0, 0), runtime::InvalidArgument);
}

}  // namespace
}  // namespace vdnn::tools
