// Runs the built vdnn command line (or any shell command) as a process, for the CLI tests.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace vdnn::test {

struct CliRun {
  int code = -1;       // the exit status; -1 when the process did not exit normally
  std::string output;  // stdout and stderr together
};

/// Runs `command` through the shell and waits for it.
inline CliRun shell(const std::string& command) {
  CliRun run;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> chunk{};
  while (std::fgets(chunk.data(), static_cast<int>(chunk.size()), pipe) != nullptr) {
    run.output += chunk.data();
  }
  const int status = pclose(pipe);
  run.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

/// Runs `vdnn ARGS` through the shell and waits for it.
inline CliRun vdnn(const std::string& args) {
  return shell(std::string(VDNN_CLI_PATH) + " " + args);
}

/// The shipped config `name` (e.g. "resnet20-cifar.json").
inline std::string config(const std::string& name) {
  return std::string(VDNN_SOURCE_DIR) + "/configs/" + name;
}

/// An empty directory of its own under the system's temporary directory.
inline std::filesystem::path temp_dir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("vdnn-cli-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace vdnn::test
