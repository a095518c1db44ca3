// The peer link's rate in measured costs (Note [Peer tier]): measured at setup with a peer tier,
// kept in the setup cache in an entry of its own and read back.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "models/ConfigLoader.hpp"
#include "models/train/Trainer.hpp"

namespace vdnn::models {
namespace {

namespace fs = std::filesystem;

TrainerOptions auto_options(const fs::path& cache, int peer) {
  TrainerOptions o;
  o.session.policy = graph::Policy::Auto;
  o.session.executor.seed = 5;
  o.session.peer_device = peer;
  o.session.peer_budget_bytes = peer >= 0 ? std::uint64_t{1} << 30 : 0;
  o.cache_dir = cache;
  return o;
}

TEST(PeerCostCache, MeasuresThePeerLinkAndKeepsItInAnEntryOfItsOwn) {
  const fs::path dir =
      fs::temp_directory_path() / ("vdnn-test-peer-costs-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const graph::NetworkDef def = load_network(VDNN_SOURCE_DIR "/configs/resnet20-cifar.json");
  double measured = 0.0;
  double latency = 0.0;
  {
    Trainer first(def, 2, auto_options(dir, 1));
    EXPECT_EQ(first.session().costs().source, "measured");
    measured = first.session().costs().peer_link;
    latency = first.session().costs().peer_copy_latency;
    EXPECT_GT(measured, 0.0);
    EXPECT_GE(latency, 0.0);
  }
  {
    Trainer again(def, 2, auto_options(dir, 1));
    EXPECT_EQ(again.session().costs().source.rfind("cache ", 0), 0U);
    EXPECT_DOUBLE_EQ(again.session().costs().peer_link, measured);
    EXPECT_DOUBLE_EQ(again.session().costs().peer_copy_latency, latency);
  }
  Trainer host_only(def, 2, auto_options(dir, -1));  // another key: measured, without a peer
  EXPECT_EQ(host_only.session().costs().source, "measured");
  EXPECT_EQ(host_only.session().costs().peer_link, 0.0);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace vdnn::models
