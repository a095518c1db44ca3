// Validators for option values that CLI11's built-in ones accept but vdnn must not.
#include "tools/cli/Validators.hpp"

#include <cmath>
#include <string>

namespace vdnn::tools {

CLI::Validator finite_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double value = 0.0;
        if (!CLI::detail::lexical_cast(text, value)) return "expected a number, got " + text;
        if (!std::isfinite(value)) return "expected a finite number, got " + text;
        return {};
      },
      "FINITE");
}

}  // namespace vdnn::tools
