// Fuzz target of the command line: newline-separated arguments -> the `vdnn` parser (CLI11 with
// vdnn's validators) -> the value parsers each command applies before setup (sizes, policies,
// schedules), never running a command; and the first line alone through runtime::parse_bytes.
// Every rejection must be a CLI::ParseError or one of vdnn's typed errors.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/LrSchedule.hpp"
#include "graph/Plan.hpp"
#include "runtime/ByteSize.hpp"
#include "tools/cli/CommandLine.hpp"

namespace {

constexpr std::size_t kMaxArguments = 64;

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines(1);
  for (const char c : text) {
    if (c == '\n') {
      if (lines.size() == kMaxArguments) break;
      lines.emplace_back();
    } else {
      lines.back() += c;
    }
  }
  return lines;
}

// What each command reads from its options before it loads anything.
void check_values(const vdnn::tools::CommandLine& cli) {
  using namespace vdnn;
  const auto budget = [](const std::string& text) {
    if (!text.empty()) static_cast<void>(runtime::format_bytes(runtime::parse_bytes(text)));
  };
  if (cli.train_chosen()) {
    static_cast<void>(graph::parse_policy(cli.train().policy));
    static_cast<void>(graph::parse_lr_policy(cli.train().run.schedule));
    budget(cli.train().mem_budget);
    budget(cli.train().run.debug_device_free);
  }
  if (cli.plan_chosen()) {
    static_cast<void>(graph::parse_policy(cli.plan().policy));
    budget(cli.plan().mem_budget);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string> lines =
      split_lines(std::string(reinterpret_cast<const char*>(data), size));
  try {
    static_cast<void>(vdnn::runtime::parse_bytes(lines.front()));
  } catch (const vdnn::runtime::Error&) {
  }
  std::vector<const char*> argv{"vdnn"};
  for (const std::string& line : lines) argv.push_back(line.c_str());
  vdnn::tools::CommandLine cli;
  try {
    cli.parse(static_cast<int>(argv.size()), argv.data());
    check_values(cli);
  } catch (const CLI::ParseError&) {
  } catch (const vdnn::runtime::Error&) {
  }
  return 0;
}
