// The `vdnn` app: one subcommand required, parse errors mapped to the usage exit code.
#include "tools/cli/CommandLine.hpp"

#include "tools/cli/ExitCode.hpp"

namespace vdnn::tools {

CommandLine::CommandLine()
    : train_cmd_(add_train_command(app_, train_)),
      inspect_cmd_(add_inspect_command(app_, inspect_)),
      plan_cmd_(add_plan_command(app_, plan_)),
      gen_cmd_(add_gen_command(app_, gen_)),
      compare_cmd_(add_compare_command(app_, compare_)),
      make_images_cmd_(add_make_images_command(app_, make_images_)),
      data_bench_cmd_(add_data_bench_command(app_, data_bench_)) {
  app_.require_subcommand(1);
}

void CommandLine::parse(int argc, const char* const* argv) { app_.parse(argc, argv); }

int CommandLine::exit(const CLI::ParseError& error) {
  return app_.exit(error) == 0 ? kExitOk : kExitUsage;
}

int CommandLine::run() const {
  if (train_chosen()) return run_train(train_);
  if (inspect_chosen()) return run_inspect(inspect_);
  if (plan_chosen()) return run_plan(plan_);
  if (gen_chosen()) return run_gen(gen_);
  if (compare_chosen()) return run_compare(compare_);
  if (make_images_chosen()) return run_make_images(make_images_);
  if (data_bench_chosen()) return run_data_bench(data_bench_);
  return kExitUsage;
}

}  // namespace vdnn::tools
