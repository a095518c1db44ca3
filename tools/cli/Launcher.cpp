// fork/exec of the ranks, and the watch that stops them all when one fails.
#include "tools/cli/Launcher.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/Error.hpp"
#include "runtime/Rendezvous.hpp"
#include "tools/cli/ExitCode.hpp"
#include "tools/cli/StopSignal.hpp"

namespace vdnn::tools {
namespace {

std::vector<std::string> own_arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<std::string> args;
  for (std::size_t at = 0; at < all.size();) {
    const std::size_t end = all.find('\0', at);
    args.push_back(all.substr(at, end - at));
    at = end == std::string::npos ? all.size() : end + 1;
  }
  if (args.empty()) throw runtime::Error("cannot read this process's arguments");
  return args;
}

// This process's environment with the rank's place in the run, as torchrun sets it.
std::vector<std::string> rank_environment(int rank, int world, int port) {
  const std::vector<std::pair<std::string, std::string>> place{
      {"RANK", std::to_string(rank)},
      {"LOCAL_RANK", std::to_string(rank)},
      {"WORLD_SIZE", std::to_string(world)},
      {"MASTER_ADDR", "127.0.0.1"},
      {"MASTER_PORT", std::to_string(port)}};
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [n, v] : place) replaced = replaced || n == name;
    if (!replaced) env.push_back(entry);
  }
  for (const auto& [name, value] : place) env.push_back(name + "=" + value);
  return env;
}

std::string how_it_ended(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "ended with status " + std::to_string(status);
}

// The children still running, by rank (pid 0: ended).
class Ranks {
 public:
  ~Ranks() { stop(); }
  Ranks() = default;
  Ranks(const Ranks&) = delete;
  Ranks& operator=(const Ranks&) = delete;

  void start(const std::vector<std::string>& args, int rank, int world, int port) {
    // Everything the child needs is made before fork: after it, only exec and _exit.
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const std::vector<std::string> env = rank_environment(rank, world, port);
    std::vector<char*> envp;
    for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) throw runtime::Error("cannot start rank " + std::to_string(rank));
    if (pid == 0) {
      // A group of its own, so that a terminal's Ctrl-C reaches the launcher alone (which passes
      // it on once); SIGTERM when the launcher dies, so that no rank outlives it.
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(127);  // it died before prctl
      ::execve("/proc/self/exe", argv.data(), envp.data());
      ::_exit(127);
    }
    pids_.push_back(pid);
  }

  // Waits for the next child to end: its rank and status; rank -1 when a signal came first.
  std::pair<int, int> wait_one() {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    return {forget(pid), status};
  }

  void signal_all(int signal) noexcept {
    for (const pid_t pid : pids_) {
      if (pid != 0) ::kill(pid, signal);
    }
  }

  bool running() const {
    for (const pid_t pid : pids_) {
      if (pid != 0) return true;
    }
    return false;
  }

  // SIGTERM to the rest, SIGKILL after the grace period, every child reaped.
  void stop() noexcept {
    signal_all(SIGTERM);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(kLaunchGraceSeconds);
    while (running() && std::chrono::steady_clock::now() < deadline) {
      reap_ended();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    signal_all(SIGKILL);
    for (pid_t& pid : pids_) {
      if (pid != 0) ::waitpid(pid, nullptr, 0);
      pid = 0;
    }
  }

 private:
  int forget(pid_t pid) {
    for (std::size_t r = 0; r < pids_.size(); ++r) {
      if (pids_[r] == pid && pid > 0) {
        pids_[r] = 0;
        return static_cast<int>(r);
      }
    }
    return -1;
  }

  void reap_ended() noexcept {
    for (pid_t& pid : pids_) {
      if (pid != 0 && ::waitpid(pid, nullptr, WNOHANG) == pid) pid = 0;
    }
  }

  std::vector<pid_t> pids_;
};

}  // namespace

int launch_local_ranks(int ranks) {
  const std::vector<std::string> args = own_arguments();
  const int port = runtime::free_port();
  Ranks children;
  for (int r = 0; r < ranks; ++r) children.start(args, r, ranks, port);
  const StopSignal stop;
  bool passed_on = false;
  while (children.running()) {
    const auto [rank, status] = children.wait_one();
    if (stop.requested() && !passed_on) {  // each rank checkpoints (rank 0) and exits 5
      children.signal_all(stop.name() == "SIGINT" ? SIGINT : SIGTERM);
      passed_on = true;
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (rank < 0 || code == kExitOk || (passed_on && code == kExitInterrupted)) continue;
    std::cerr << "vdnn: rank " << rank << " of " << ranks << " " << how_it_ended(status)
              << "; stopping the other ranks\n";
    children.stop();
    return kExitRankFailed;
  }
  if (!passed_on) return kExitOk;
  throw Interrupted(stop.name() +
                    ": every rank stopped after its step; rank 0 wrote a "
                    "checkpoint (continue with --resume latest)");
}

}  // namespace vdnn::tools
