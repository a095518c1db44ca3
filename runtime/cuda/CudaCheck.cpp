// Builds the messages behind the VDNN_CHECK_* macros: one format for the three libraries, thrown
// as CudaError or, on no-throw paths, printed to stderr without allocating.
#include "runtime/cuda/CudaCheck.hpp"

#include <cstdio>
#include <string>

namespace vdnn::runtime::cuda::detail {
namespace {

// What a failed status means, in the library's own words. `description` may be empty.
struct Failure {
  const char* library;
  const char* name;
  int code;
  const char* description;
};

// cudnnGetLastErrorString fills a caller buffer; this size fits its longest messages.
constexpr std::size_t kCudnnDetailSize = 512;

Failure describe(cudaError_t status) noexcept {
  // The failed call also set the thread's last-error; clear it so that it is reported once.
  static_cast<void>(cudaGetLastError());
  return {"CUDA", cudaGetErrorName(status), static_cast<int>(status), cudaGetErrorString(status)};
}

Failure describe(cudnnStatus_t status, char (&detail)[kCudnnDetailSize]) noexcept {
  detail[0] = '\0';
  cudnnGetLastErrorString(detail, kCudnnDetailSize);
  return {"cuDNN", cudnnGetErrorString(status), static_cast<int>(status), detail};
}

Failure describe(cublasStatus_t status) noexcept {
  return {"cuBLAS", cublasGetStatusName(status), static_cast<int>(status),
          cublasGetStatusString(status)};
}

[[noreturn]] void throw_failure(const Failure& failure, const char* statement, const char* file,
                                int line) {
  std::string message = std::string(statement) + " failed at " + file + ":" + std::to_string(line) +
                        ": " + failure.library + " error " + failure.name + " (" +
                        std::to_string(failure.code) + ")";
  if (failure.description[0] != '\0') message += std::string(": ") + failure.description;
  throw CudaError(message);
}

void log_failure(const Failure& failure, const char* statement, const char* file,
                 int line) noexcept {
  std::fprintf(stderr, "vdnn: %s failed at %s:%d: %s error %s (%d)%s%s\n", statement, file, line,
               failure.library, failure.name, failure.code,
               failure.description[0] != '\0' ? ": " : "", failure.description);
}

}  // namespace

void throw_error(cudaError_t status, const char* statement, const char* file, int line) {
  throw_failure(describe(status), statement, file, line);
}

void throw_error(cudnnStatus_t status, const char* statement, const char* file, int line) {
  char detail[kCudnnDetailSize];
  throw_failure(describe(status, detail), statement, file, line);
}

void throw_error(cublasStatus_t status, const char* statement, const char* file, int line) {
  throw_failure(describe(status), statement, file, line);
}

void log_error(cudaError_t status, const char* statement, const char* file, int line) noexcept {
  log_failure(describe(status), statement, file, line);
}

void log_error(cudnnStatus_t status, const char* statement, const char* file, int line) noexcept {
  char detail[kCudnnDetailSize];
  log_failure(describe(status, detail), statement, file, line);
}

void log_error(cublasStatus_t status, const char* statement, const char* file, int line) noexcept {
  log_failure(describe(status), statement, file, line);
}

}  // namespace vdnn::runtime::cuda::detail
