// Typed errors thrown by vdnn library code, and the VDNN_EXPECTS precondition macro.
// Only tools/ turns an error into an exit code (see tools/ExitCode.hpp).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace vdnn::runtime {

/// Base of every error vdnn throws on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A caller broke a documented precondition (bad argument, bad state).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

/// Tensor shapes that do not fit a layer (thrown by shape inference and by layers).
class ShapeError : public Error {
 public:
  using Error::Error;
};

/// A memory resource could not satisfy a request. The resource stays usable.
class OutOfMemory : public Error {
 public:
  OutOfMemory(const std::string& what, std::size_t bytes_requested, std::size_t bytes_in_use,
              std::size_t bytes_limit)
      : Error(what),
        bytes_requested_(bytes_requested),
        bytes_in_use_(bytes_in_use),
        bytes_limit_(bytes_limit) {}
  std::size_t bytes_requested() const noexcept { return bytes_requested_; }
  std::size_t bytes_in_use() const noexcept { return bytes_in_use_; }
  std::size_t bytes_limit() const noexcept { return bytes_limit_; }

 private:
  std::size_t bytes_requested_;
  std::size_t bytes_in_use_;
  std::size_t bytes_limit_;
};

/// A CUDA, cuDNN or cuBLAS call failed; the message carries statement, file, line and error string.
class CudaError : public Error {
 public:
  using Error::Error;
};

/// Input data (datasets, checkpoints) is malformed or unreadable.
class DataError : public Error {
 public:
  using Error::Error;
};

namespace detail {
[[noreturn]] void throw_invalid_argument(const char* condition, const std::string& message,
                                         const char* file, int line);
}  // namespace detail

}  // namespace vdnn::runtime

/// Throws vdnn::runtime::InvalidArgument with the condition, the message and the location when
/// `cond` is false.
#define VDNN_EXPECTS(cond, message)                                                          \
  do {                                                                                       \
    if (!(cond))                                                                             \
      ::vdnn::runtime::detail::throw_invalid_argument(#cond, (message), __FILE__, __LINE__); \
  } while (false)
