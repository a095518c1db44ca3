// The boundary between the library's internal error types and the public ones of vdnn/Error.hpp.
#pragma once

#include <utility>

namespace vdnn::api {

/// Rethrows the exception being handled as its public vdnn::Error counterpart (the same message).
/// Call only inside a catch block.
[[noreturn]] void rethrow_public();

/// Runs `f`, translating internal errors with rethrow_public().
template <class F>
decltype(auto) translate_errors(F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (...) {
    rethrow_public();
  }
}

}  // namespace vdnn::api
