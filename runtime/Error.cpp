// Out-of-line helpers for runtime/Error.hpp, so the check macros stay small at every call site.
#include "runtime/Error.hpp"

namespace vdnn::runtime::detail {

void throw_invalid_argument(const char* condition, const std::string& message, const char* file,
                            int line) {
  throw InvalidArgument(message + " (" + condition + " failed at " + file + ":" +
                        std::to_string(line) + ")");
}

}  // namespace vdnn::runtime::detail
