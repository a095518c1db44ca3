// Rendezvous: where a process stands in a multi-process run (its rank, the world, the master's
// address) as torchrun or mpirun tell it, and the small TCP exchange by which rank 0 hands every
// rank the same bytes (NCCL's unique id) before the ranks meet in NCCL (issue 27).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/Error.hpp"

namespace vdnn::runtime {

/// A rank that did not come, hung up or spoke out of turn, or a master that could not be reached
/// or listened on, within the deadline: the message names the ranks and the address.
class RendezvousError : public Error {
 public:
  using Error::Error;
};

/// One process's place in a run of `world_size` processes.
struct LaunchConfig {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;  // the process's GPU on its host (cudaSetDevice)
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
};

/// The launch as the environment gives it, read through `env` (std::getenv by default): torchrun's
/// RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT, else Open MPI's
/// OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE and OMPI_COMM_WORLD_LOCAL_RANK (with MASTER_ADDR and
/// MASTER_PORT, default 127.0.0.1:29500). nullopt when neither RANK nor OMPI_COMM_WORLD_RANK is
/// set (a single process). Throws InvalidArgument naming the variable for a value that is not a
/// whole number in range (0 <= rank < world_size <= 65536, 0 <= local_rank < world_size, port
/// 1-65535) or a rank without its world size.
std::optional<LaunchConfig> launch_from_env(
    const std::function<const char*(const char*)>& env = nullptr);

/// A TCP port free on this host now, for a master port (`vdnn train --gpus N`): bound on the
/// loopback and released, so another process may still take it first. Throws RendezvousError
/// when no socket can be bound.
int free_port();

/// Rank 0's side of the exchange: it listens on `port` (0: any free port, see port()) from
/// construction, so that it can be made before the other ranks start.
class RendezvousServer {
 public:
  /// Throws RendezvousError when it cannot listen on the port.
  explicit RendezvousServer(int port, int world_size);
  RendezvousServer(const RendezvousServer&) = delete;
  RendezvousServer& operator=(const RendezvousServer&) = delete;
  ~RendezvousServer();
  /// The port it listens on.
  int port() const noexcept { return port_; }
  /// Waits until ranks 1 .. world_size - 1 have each connected and said their rank once, then
  /// sends each of them `payload` (at most 64 KiB) and returns. Throws RendezvousError naming the
  /// ranks still missing at `timeout`, or a rank said twice or out of range.
  void broadcast(const std::vector<std::byte>& payload, std::chrono::milliseconds timeout);

 private:
  int listener_ = -1;
  int port_ = 0;
  int world_size_;
};

/// A rank's side: connects to addr:port (retrying until the server listens), says its rank and
/// returns the payload rank 0 sends. Throws RendezvousError at `timeout`, or when the server hangs
/// up or sends more than 64 KiB.
std::vector<std::byte> rendezvous_receive(const std::string& addr, int port, int rank,
                                          std::chrono::milliseconds timeout);

}  // namespace vdnn::runtime
