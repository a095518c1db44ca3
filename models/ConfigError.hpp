// ConfigError: a network config that cannot be read, with the file and the JSON path at fault.
#pragma once

#include <string>
#include <utility>

#include "runtime/Error.hpp"

namespace vdnn::models {

/// A config file is unreadable, malformed JSON, or not a valid network. what() is
/// "SOURCE at LOCATION: MESSAGE" (or "SOURCE: MESSAGE" when the problem has no location), where
/// LOCATION is a JSON Pointer, followed for template layers by "(expanded as NAME)".
class ConfigError : public runtime::Error {
 public:
  ConfigError(std::string source, std::string location, const std::string& message)
      : Error(source + (location.empty() ? "" : " at " + location) + ": " + message),
        source_(std::move(source)),
        location_(std::move(location)) {}

  const std::string& source() const noexcept { return source_; }
  const std::string& location() const noexcept { return location_; }

 private:
  std::string source_;
  std::string location_;
};

}  // namespace vdnn::models
