// Entry point of the `vdnn` command line: parses the subcommand and maps errors to exit codes.
#include <CLI/CLI.hpp>

#include "tools/cli/ExitCode.hpp"
#include "tools/cli/InspectCommand.hpp"
#include "tools/cli/PlanCommand.hpp"
#include "tools/cli/TrainCommand.hpp"

int main(int argc, char** argv) {
  using namespace vdnn::tools;
  CLI::App app{"vdnn: train very deep CNNs in a fraction of the GPU memory they need"};
  app.require_subcommand(1);
  TrainOptions train;
  InspectOptions inspect;
  PlanOptions plan;
  CLI::App* train_cmd = add_train_command(app, train);
  CLI::App* inspect_cmd = add_inspect_command(app, inspect);
  CLI::App* plan_cmd = add_plan_command(app, plan);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  try {
    if (train_cmd->parsed()) return run_train(train);
    if (inspect_cmd->parsed()) return run_inspect(inspect);
    if (plan_cmd->parsed()) return run_plan(plan);
  } catch (...) {
    return report_error(std::current_exception());
  }
  return kExitUsage;
}
