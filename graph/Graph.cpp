// PLACEHOLDER
#include "graph/Graph.hpp"
