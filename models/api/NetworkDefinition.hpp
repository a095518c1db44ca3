// What a public vdnn::Network holds: the graph layer's network definition.
#pragma once

#include <vdnn/Network.hpp>

#include <string>

#include "graph/NetworkDef.hpp"

namespace vdnn {

struct Network::Definition {
  graph::NetworkDef def;
  std::string config_json;  // the config text it was read from; empty when built in code
};

}  // namespace vdnn
