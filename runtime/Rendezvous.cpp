// The launch environment and the TCP rendezvous: each rank connects to rank 0 and says its rank (4
// bytes, little-endian); rank 0 answers every rank with the payload's length (4 bytes) and the
// payload, once all have come. Every wait is bounded by the caller's deadline.
#include "runtime/Rendezvous.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>

namespace vdnn::runtime {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxPayload = std::size_t{64} << 10;
constexpr int kMaxWorld = 65536;
constexpr auto kRetry = std::chrono::milliseconds(50);

// Owns one file descriptor (-1: none).
class Fd {
 public:
  explicit Fd(int fd = -1) noexcept : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const noexcept { return fd_; }
  /// Gives up ownership.
  int release() noexcept { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// Milliseconds left until `deadline` for poll (0 once it has passed).
int left_ms(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1 << 30));
}

// Whether `fd` became readable before `deadline`.
bool readable(int fd, Clock::time_point deadline) {
  pollfd p{fd, POLLIN, 0};
  int ready = 0;
  do {
    ready = ::poll(&p, 1, left_ms(deadline));
  } while (ready < 0 && errno == EINTR);
  return ready > 0;
}

// Reads exactly `n` bytes before `deadline`; false on timeout, end of stream or error.
bool read_exact(int fd, void* out, std::size_t n, Clock::time_point deadline) {
  auto* at = static_cast<char*>(out);
  while (n > 0) {
    if (!readable(fd, deadline)) return false;
    const ssize_t got = ::recv(fd, at, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    at += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

bool write_all(int fd, const void* data, std::size_t n) {
  const auto* at = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t sent = ::send(fd, at, n, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    at += sent;
    n -= static_cast<std::size_t>(sent);
  }
  return true;
}

std::array<unsigned char, 4> le32(std::uint32_t v) {
  return {static_cast<unsigned char>(v), static_cast<unsigned char>(v >> 8),
          static_cast<unsigned char>(v >> 16), static_cast<unsigned char>(v >> 24)};
}

std::uint32_t from_le32(const std::array<unsigned char, 4>& b) {
  return std::uint32_t{b[0]} | std::uint32_t{b[1]} << 8 | std::uint32_t{b[2]} << 16 |
         std::uint32_t{b[3]} << 24;
}

// Environment variable `name` as a whole number in [low, high]; nullopt when unset.
std::optional<int> number(const std::function<const char*(const char*)>& env, const char* name,
                          int low, int high) {
  const char* text = env(name);
  if (text == nullptr) return std::nullopt;
  int value = 0;
  const char* end = text + std::strlen(text);
  const auto [ptr, error] = std::from_chars(text, end, value);
  if (error != std::errc() || ptr != end || ptr == text || value < low || value > high) {
    throw InvalidArgument(std::string(name) + "=\"" + text + "\": expected a whole number in [" +
                          std::to_string(low) + ", " + std::to_string(high) + "]");
  }
  return value;
}

// A connected socket to addr:port, or an empty Fd when the connection is refused for now.
Fd try_connect(const std::string& addr, int port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int resolved = ::getaddrinfo(addr.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (resolved != 0) {
    throw RendezvousError("rendezvous: cannot resolve " + addr + ": " + ::gai_strerror(resolved));
  }
  Fd fd(::socket(found->ai_family, found->ai_socktype, found->ai_protocol));
  const bool connected =
      fd.get() >= 0 && ::connect(fd.get(), found->ai_addr, found->ai_addrlen) == 0;
  ::freeaddrinfo(found);
  return connected ? std::move(fd) : Fd();
}

std::string missing_ranks(const std::vector<Fd>& ranks) {
  std::string out;
  for (std::size_t r = 1; r < ranks.size(); ++r) {
    if (ranks[r].get() < 0) out += (out.empty() ? "" : ", ") + std::to_string(r);
  }
  return out;
}

}  // namespace

std::optional<LaunchConfig> launch_from_env(const std::function<const char*(const char*)>& env) {
  const std::function<const char*(const char*)> get =
      env ? env : [](const char* name) -> const char* { return std::getenv(name); };
  const bool torchrun = get("RANK") != nullptr;
  if (!torchrun && get("OMPI_COMM_WORLD_RANK") == nullptr) return std::nullopt;
  const char* rank_name = torchrun ? "RANK" : "OMPI_COMM_WORLD_RANK";
  const char* size_name = torchrun ? "WORLD_SIZE" : "OMPI_COMM_WORLD_SIZE";
  const char* local_name = torchrun ? "LOCAL_RANK" : "OMPI_COMM_WORLD_LOCAL_RANK";
  LaunchConfig c;
  const std::optional<int> world = number(get, size_name, 1, kMaxWorld);
  if (!world)
    throw InvalidArgument(std::string(rank_name) + " is set but " + size_name + " is not");
  c.world_size = *world;
  c.rank = *number(get, rank_name, 0, c.world_size - 1);
  c.local_rank = number(get, local_name, 0, c.world_size - 1).value_or(0);
  if (const char* addr = get("MASTER_ADDR"); addr != nullptr && *addr != '\0') c.master_addr = addr;
  c.master_port = number(get, "MASTER_PORT", 1, 65535).value_or(c.master_port);
  return c;
}

int free_port() {
  const Fd probe(::socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(at);
  if (probe.get() < 0 || ::bind(probe.get(), reinterpret_cast<sockaddr*>(&at), sizeof(at)) != 0 ||
      ::getsockname(probe.get(), reinterpret_cast<sockaddr*>(&at), &length) != 0) {
    throw RendezvousError(std::string("cannot find a free port: ") + std::strerror(errno));
  }
  return ntohs(at.sin_port);
}

RendezvousServer::RendezvousServer(int port, int world_size) : world_size_(world_size) {
  VDNN_EXPECTS(world_size >= 1 && world_size <= kMaxWorld && port >= 0 && port <= 65535,
               "RendezvousServer: a world of 1-65536 ranks on a port in 0-65535");
  Fd listener(::socket(AF_INET, SOCK_STREAM, 0));
  const int on = 1;
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_addr.s_addr = htonl(INADDR_ANY);
  at.sin_port = htons(static_cast<std::uint16_t>(port));
  socklen_t length = sizeof(at);
  if (listener.get() < 0 ||
      ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
      ::bind(listener.get(), reinterpret_cast<sockaddr*>(&at), sizeof(at)) != 0 ||
      ::listen(listener.get(), std::min(world_size, 4096)) != 0 ||
      ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&at), &length) != 0) {
    throw RendezvousError("rendezvous: rank 0 cannot listen on port " + std::to_string(port) +
                          ": " + std::strerror(errno));
  }
  port_ = ntohs(at.sin_port);
  listener_ = listener.release();  // closed in the destructor
}

RendezvousServer::~RendezvousServer() {
  if (listener_ >= 0) ::close(listener_);
}

void RendezvousServer::broadcast(const std::vector<std::byte>& payload,
                                 std::chrono::milliseconds timeout) {
  VDNN_EXPECTS(payload.size() <= kMaxPayload, "rendezvous: a payload of at most 64 KiB");
  const Clock::time_point deadline = Clock::now() + timeout;
  std::vector<Fd> ranks(static_cast<std::size_t>(world_size_));
  for (int joined = 1; joined < world_size_;) {
    if (!readable(listener_, deadline)) {
      throw RendezvousError("rendezvous on port " + std::to_string(port_) + ": rank(s) " +
                            missing_ranks(ranks) + " of " + std::to_string(world_size_) +
                            " did not come within " + std::to_string(timeout.count()) + " ms");
    }
    Fd client(::accept(listener_, nullptr, nullptr));
    if (client.get() < 0) continue;
    std::array<unsigned char, 4> said{};
    if (!read_exact(client.get(), said.data(), said.size(), deadline)) continue;  // hung up
    const std::uint32_t rank = from_le32(said);
    if (rank == 0 || rank >= static_cast<std::uint32_t>(world_size_) || ranks[rank].get() >= 0) {
      throw RendezvousError(
          "rendezvous on port " + std::to_string(port_) + ": a process said " +
          (rank == 0 || rank >= static_cast<std::uint32_t>(world_size_)
               ? "rank " + std::to_string(rank) + ", outside 1-" + std::to_string(world_size_ - 1)
               : "rank " + std::to_string(rank) + " twice"));
    }
    ranks[rank] = std::move(client);
    ++joined;
  }
  const std::array<unsigned char, 4> length = le32(static_cast<std::uint32_t>(payload.size()));
  for (std::size_t r = 1; r < ranks.size(); ++r) {
    if (!write_all(ranks[r].get(), length.data(), length.size()) ||
        !write_all(ranks[r].get(), payload.data(), payload.size())) {
      throw RendezvousError("rendezvous on port " + std::to_string(port_) + ": rank " +
                            std::to_string(r) + " hung up before it had the payload");
    }
  }
}

std::vector<std::byte> rendezvous_receive(const std::string& addr, int port, int rank,
                                          std::chrono::milliseconds timeout) {
  VDNN_EXPECTS(rank >= 1 && port >= 1 && port <= 65535,
               "rendezvous_receive: a rank from 1 and a port in 1-65535");
  const Clock::time_point deadline = Clock::now() + timeout;
  const std::string where =
      "rank " + std::to_string(rank) + " at " + addr + ":" + std::to_string(port);
  Fd fd;
  while ((fd = try_connect(addr, port)).get() < 0) {
    if (Clock::now() >= deadline) {
      throw RendezvousError("rendezvous: " + where + ": rank 0 did not listen within " +
                            std::to_string(timeout.count()) + " ms");
    }
    std::this_thread::sleep_for(kRetry);
  }
  const std::array<unsigned char, 4> said = le32(static_cast<std::uint32_t>(rank));
  std::array<unsigned char, 4> length{};
  if (!write_all(fd.get(), said.data(), said.size()) ||
      !read_exact(fd.get(), length.data(), length.size(), deadline)) {
    throw RendezvousError("rendezvous: " + where + ": no payload from rank 0 within " +
                          std::to_string(timeout.count()) + " ms");
  }
  const std::uint32_t bytes = from_le32(length);
  if (bytes > kMaxPayload) {
    throw RendezvousError("rendezvous: " + where + ": rank 0 announced " + std::to_string(bytes) +
                          " bytes, more than 64 KiB");
  }
  std::vector<std::byte> payload(bytes);
  if (!read_exact(fd.get(), payload.data(), payload.size(), deadline)) {
    throw RendezvousError("rendezvous: " + where + ": the payload was cut short");
  }
  return payload;
}

}  // namespace vdnn::runtime
