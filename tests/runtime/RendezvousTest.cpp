// Rendezvous: the launch read from torchrun's and Open MPI's variables, bad values named; rank 0
// hands every rank the same bytes over TCP whatever order they come in; a missing, duplicate or
// out-of-range rank and a silent master end in a RendezvousError within the deadline.
#include "runtime/Rendezvous.hpp"

#include <gtest/gtest.h>

#include <future>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace vdnn::runtime {
namespace {

using std::chrono::milliseconds;

std::function<const char*(const char*)> environment(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(Rendezvous, TheLaunchComesFromTorchrunOrOpenMpiVariables) {
  EXPECT_FALSE(launch_from_env(environment({})).has_value());
  const auto torchrun = launch_from_env(environment({{"RANK", "3"},
                                                     {"WORLD_SIZE", "8"},
                                                     {"LOCAL_RANK", "1"},
                                                     {"MASTER_ADDR", "node0"},
                                                     {"MASTER_PORT", "1234"}}));
  ASSERT_TRUE(torchrun.has_value());
  EXPECT_EQ(torchrun->rank, 3);
  EXPECT_EQ(torchrun->world_size, 8);
  EXPECT_EQ(torchrun->local_rank, 1);
  EXPECT_EQ(torchrun->master_addr, "node0");
  EXPECT_EQ(torchrun->master_port, 1234);
  const auto mpi =
      launch_from_env(environment({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}}));
  ASSERT_TRUE(mpi.has_value());
  EXPECT_EQ(mpi->rank, 1);
  EXPECT_EQ(mpi->local_rank, 0);
  EXPECT_EQ(mpi->master_addr, "127.0.0.1");
  EXPECT_EQ(mpi->master_port, 29500);
}

TEST(Rendezvous, BadLaunchVariablesAreNamed) {
  const auto message = [](std::map<std::string, std::string> vars) {
    try {
      launch_from_env(environment(std::move(vars)));
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({{"RANK", "0"}}).find("WORLD_SIZE"), std::string::npos);
  EXPECT_NE(message({{"RANK", "4"}, {"WORLD_SIZE", "4"}}).find("RANK=\"4\""), std::string::npos);
  EXPECT_NE(message({{"RANK", "-1"}, {"WORLD_SIZE", "4"}}).find("RANK"), std::string::npos);
  EXPECT_NE(message({{"RANK", "1x"}, {"WORLD_SIZE", "4"}}).find("RANK"), std::string::npos);
  EXPECT_NE(message({{"RANK", "0"}, {"WORLD_SIZE", "0"}}).find("WORLD_SIZE"), std::string::npos);
  EXPECT_NE(
      message({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}}).find("MASTER_PORT"),
      std::string::npos);
  EXPECT_NE(message({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "2"}}).find("LOCAL_RANK"),
            std::string::npos);
}

TEST(Rendezvous, EveryRankGetsRankZerosBytesInAnyOrder) {
  constexpr int kWorld = 5;
  RendezvousServer server(0, kWorld);
  ASSERT_GT(server.port(), 0);
  std::vector<std::byte> id(128);
  for (std::size_t i = 0; i < id.size(); ++i) id[i] = static_cast<std::byte>(i * 7 + 1);
  std::vector<std::future<std::vector<std::byte>>> ranks;
  for (int r = kWorld - 1; r >= 1; --r) {  // the last rank first
    ranks.push_back(std::async(std::launch::async, [&server, r] {
      return rendezvous_receive("127.0.0.1", server.port(), r, milliseconds(10000));
    }));
  }
  server.broadcast(id, milliseconds(10000));
  for (auto& r : ranks) EXPECT_EQ(r.get(), id);
}

TEST(Rendezvous, AMissingRankIsNamedAtTheDeadline) {
  RendezvousServer server(0, 3);
  auto one = std::async(std::launch::async, [&server] {
    return rendezvous_receive("127.0.0.1", server.port(), 1, milliseconds(5000));
  });
  try {
    server.broadcast({}, milliseconds(300));
    FAIL() << "expected RendezvousError";
  } catch (const RendezvousError& e) {
    EXPECT_NE(std::string(e.what()).find("rank(s) 2 of 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(one.get(), RendezvousError);  // the server closed without the payload
}

TEST(Rendezvous, ADuplicateOrOutOfRangeRankIsRefused) {
  EXPECT_THROW(rendezvous_receive("127.0.0.1", 29500, 0, milliseconds(100)), InvalidArgument);
  for (const int bad : {2, 9}) {  // rank 2 twice; rank 9 of 3
    RendezvousServer server(0, 3);
    auto first = std::async(std::launch::async, [&server] {
      return rendezvous_receive("127.0.0.1", server.port(), 2, milliseconds(3000));
    });
    std::this_thread::sleep_for(milliseconds(100));  // rank 2 connects first
    auto second = std::async(std::launch::async, [&server, bad] {
      return rendezvous_receive("127.0.0.1", server.port(), bad, milliseconds(3000));
    });
    EXPECT_THROW(server.broadcast({}, milliseconds(3000)), RendezvousError) << bad;
    EXPECT_THROW(first.get(), RendezvousError);
    EXPECT_THROW(second.get(), RendezvousError);
  }
}

TEST(Rendezvous, ASilentMasterEndsInARendezvousError) {
  // A port nobody listens on: bind one, note it, close it.
  int port = 0;
  {
    RendezvousServer probe(0, 2);
    port = probe.port();
  }
  EXPECT_THROW(rendezvous_receive("127.0.0.1", port, 1, milliseconds(200)), RendezvousError);
}

TEST(Rendezvous, AFreePortCanBeListenedOn) {
  const int port = free_port();
  EXPECT_GT(port, 0);
  EXPECT_LE(port, 65535);
  const RendezvousServer server(port, 1);
  EXPECT_EQ(server.port(), port);
}

}  // namespace
}  // namespace vdnn::runtime
