// CommandLine: the `vdnn` app with its subcommands, shared by main() and the CLI fuzz target.
#pragma once

#include <CLI/CLI.hpp>

#include "tools/cli/CompareCommand.hpp"
#include "tools/cli/DataBenchCommand.hpp"
#include "tools/cli/GenCommand.hpp"
#include "tools/cli/InspectCommand.hpp"
#include "tools/cli/MakeImagesCommand.hpp"
#include "tools/cli/PlanCommand.hpp"
#include "tools/cli/TrainCommand.hpp"

namespace vdnn::tools {

/// The parser of `vdnn train|plan|inspect|gen|compare|make-images|data-bench` and the options it
/// fills. Neither copyable nor movable (CLI11 holds pointers to the option fields). Not
/// thread-safe.
class CommandLine {
 public:
  CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;
  CommandLine(CommandLine&&) = delete;
  CommandLine& operator=(CommandLine&&) = delete;
  ~CommandLine() = default;

  /// Parses `argv` (argv[0] is the program). Throws CLI::ParseError for bad usage, and its
  /// CLI::CallForHelp subclass for --help; touches no file.
  void parse(int argc, const char* const* argv);
  /// Prints `error` as CLI11 does (the help for --help) and returns the exit code for it.
  int exit(const CLI::ParseError& error);
  /// Runs the parsed subcommand and returns its exit code. Throws the library's typed errors.
  int run() const;

  const TrainOptions& train() const noexcept { return train_; }
  const PlanOptions& plan() const noexcept { return plan_; }
  const InspectOptions& inspect() const noexcept { return inspect_; }
  const GenOptions& gen() const noexcept { return gen_; }
  const CompareOptions& compare() const noexcept { return compare_; }
  const MakeImagesOptions& make_images() const noexcept { return make_images_; }
  const DataBenchOptions& data_bench() const noexcept { return data_bench_; }
  /// Whether parse() chose the subcommand.
  bool train_chosen() const { return train_cmd_->parsed(); }
  bool plan_chosen() const { return plan_cmd_->parsed(); }
  bool inspect_chosen() const { return inspect_cmd_->parsed(); }
  bool gen_chosen() const { return gen_cmd_->parsed(); }
  bool compare_chosen() const { return compare_cmd_->parsed(); }
  bool make_images_chosen() const { return make_images_cmd_->parsed(); }
  bool data_bench_chosen() const { return data_bench_cmd_->parsed(); }

 private:
  CLI::App app_{"vdnn: train very deep CNNs in a fraction of the GPU memory they need"};
  TrainOptions train_;
  InspectOptions inspect_;
  PlanOptions plan_;
  GenOptions gen_;
  CompareOptions compare_;
  MakeImagesOptions make_images_;
  DataBenchOptions data_bench_;
  CLI::App* train_cmd_ = nullptr;
  CLI::App* inspect_cmd_ = nullptr;
  CLI::App* plan_cmd_ = nullptr;
  CLI::App* gen_cmd_ = nullptr;
  CLI::App* compare_cmd_ = nullptr;
  CLI::App* make_images_cmd_ = nullptr;
  CLI::App* data_bench_cmd_ = nullptr;
};

}  // namespace vdnn::tools
