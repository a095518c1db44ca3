// Entry point of the `vdnn` command line: parses the subcommand and maps errors to exit codes.
#include "tools/cli/CommandLine.hpp"
#include "tools/cli/ExitCode.hpp"

int main(int argc, char** argv) {
  using namespace vdnn::tools;
  CommandLine cli;
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli.exit(e);
  }
  try {
    return cli.run();
  } catch (...) {
    return report_error(std::current_exception());
  }
}
