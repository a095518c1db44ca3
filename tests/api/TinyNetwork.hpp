// A small residual network built with the public builder, and the CPU run the API tests train it
// in.
#pragma once

#include <string>
#include <vdnn/Network.hpp>
#include <vdnn/Trainer.hpp>

namespace vdnn::testing {

/// conv-bn-relu stem (8 channels), one residual block of two 3x3 convolutions, global pooling
/// and a 10-class classifier, on 3 x 8 x 8 inputs.
inline Network tiny_resnet(const std::string& name) {
  NetworkBuilder net(name, 3, 8, 8, 10);
  Tensor x = net.relu("relu", net.batchnorm2d("bn1", net.conv2d("conv1", net.input(), 8, 3, 1, 1)));
  Tensor y = net.relu("layer1.0.relu",
                      net.batchnorm2d("layer1.0.bn1", net.conv2d("layer1.0.conv1", x, 8, 3, 1, 1)));
  y = net.batchnorm2d("layer1.0.bn2", net.conv2d("layer1.0.conv2", y, 8, 3, 1, 1));
  x = net.relu("layer1.0.relu2", net.add("layer1.0.add", {y, x}));
  x = net.flatten("flatten", net.global_avgpool("avgpool", x));
  return net.softmax_cross_entropy("loss", net.linear("fc", x, 10));
}

/// Batch 4 on the CPU backend, seed 7; the other fields `vdnn train`'s defaults.
inline TrainerConfig tiny_cpu_config() {
  TrainerConfig config;
  config.batch = 4;
  config.backend = Backend::Cpu;
  config.seed = 7;
  return config;
}

}  // namespace vdnn::testing
