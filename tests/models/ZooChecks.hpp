// Checks shared by the zoo config tests: a network's state_dict keys as a checkpoint of it holds
// them, torchvision's keys written out module by module, and a few training steps on the CPU.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "graph/Graph.hpp"

namespace vdnn::test {

/// The keys of the state_dict a checkpoint of `g` holds besides the optimizer's: "<layer>.<param>"
/// and, per batch norm, "<layer>.num_batches_tracked" (models/train/Checkpoint.cpp).
std::set<std::string> state_dict_keys(const graph::Graph& g);

/// A bias-free convolution's key: "<name>.weight".
void add_conv(std::set<std::string>& keys, const std::string& name);
/// A module with weight and bias (a convolution with bias, a linear, a layer norm).
void add_weight_and_bias(std::set<std::string>& keys, const std::string& name);
/// A BatchNorm2d's keys: weight, bias, running_mean, running_var, num_batches_tracked.
void add_bn(std::set<std::string>& keys, const std::string& name);

/// Builds configs/<config> at `resolution` x `resolution` and trains it `steps` steps on the CPU
/// at batch `batch` (synthetic data), expecting every loss finite (gtest failures, no throw).
void expect_trains_on_the_cpu(const std::string& config, std::int64_t resolution,
                              std::int64_t batch, int steps);

}  // namespace vdnn::test
