// Signal handlers that turn SIGINT/SIGTERM into a graceful stop, and a second one into _exit.
#include "tools/cli/StopSignal.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>

namespace vdnn::tools {
namespace {

// Signal handlers can reach only static storage; lock-free atomics are async-signal-safe.
std::atomic<int> g_signal{0};
struct sigaction g_previous_int {};
struct sigaction g_previous_term {};

extern "C" void on_stop_signal(int signal) {
  int expected = 0;
  if (!g_signal.compare_exchange_strong(expected, signal)) _exit(128 + signal);
}

}  // namespace

StopSignal::StopSignal() {
  g_signal.store(0);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
}

StopSignal::~StopSignal() {
  // Stopping: the run is on its way out (checkpoint, teardown), and a second signal must still
  // exit at once with 128 + signal rather than meet the default disposition.
  if (requested()) return;
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
}

bool StopSignal::requested() const noexcept { return g_signal.load() != 0; }

std::string StopSignal::name() const {
  switch (g_signal.load()) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "";
  }
}

}  // namespace vdnn::tools
