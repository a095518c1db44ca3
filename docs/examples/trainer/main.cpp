// A custom trainer on vdnn's public API: a small ResNet defined in code, trained with every
// feature map offloaded (vdnn-all) on the GPU when there is one, else on the CPU.
//   vdnn_example_trainer [--steps N] [--policy NAME] [--checkpoint FILE]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vdnn/vdnn.hpp>

namespace {

// torchvision's ResNet basic block: conv-bn-relu-conv-bn, plus the block's input, then relu.
vdnn::Tensor basic_block(vdnn::NetworkBuilder& net, const std::string& name, vdnn::Tensor x,
                         std::int64_t width) {
  vdnn::Tensor y = net.conv2d(name + ".conv1", x, width, 3, 1, 1);
  y = net.relu(name + ".relu1", net.batchnorm2d(name + ".bn1", y));
  y = net.batchnorm2d(name + ".bn2", net.conv2d(name + ".conv2", y, width, 3, 1, 1));
  return net.relu(name + ".relu2", net.add(name + ".add", {y, x}));
}

vdnn::Network small_resnet() {
  vdnn::NetworkBuilder net("example-resnet", 3, 32, 32, 10);
  vdnn::Tensor x = net.conv2d("conv1", net.input(), 16, 3, 1, 1);
  x = net.relu("relu", net.batchnorm2d("bn1", x));
  for (int i = 0; i < 3; ++i) x = basic_block(net, "layer1." + std::to_string(i), x, 16);
  x = net.flatten("flatten", net.global_avgpool("avgpool", x));
  return net.softmax_cross_entropy("loss", net.linear("fc", x, 10));
}

struct Args {
  int steps = 10;
  std::string policy = "vdnn-all";
  std::string checkpoint;
};

Args parse(int argc, char** argv) {
  Args args;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--steps") {
      args.steps = std::atoi(argv[i + 1]);
    } else if (flag == "--policy") {
      args.policy = argv[i + 1];
    } else if (flag == "--checkpoint") {
      args.checkpoint = argv[i + 1];
    } else {
      throw vdnn::InvalidArgument("unknown flag " + flag);
    }
  }
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args args = parse(argc, argv);
    const vdnn::Network network = small_resnet();
    vdnn::TrainerConfig config;
    config.batch = 32;
    config.policy = args.policy;
    config.total_steps = args.steps;
    vdnn::Trainer trainer(network, config);
    std::printf("vdnn %s: %s, %lld parameters, %s backend, policy %s\n", VDNN_VERSION_STRING,
                network.name().c_str(), static_cast<long long>(network.parameter_count()),
                trainer.backend() == vdnn::Backend::Cuda ? "cuda" : "cpu", args.policy.c_str());
    trainer.on_step([](const vdnn::StepStats& s) {
      std::printf("step %3lld  loss %.4f  %8.1f img/s  offloaded %llu bytes\n",
                  static_cast<long long>(s.iteration), s.loss, s.images_per_second,
                  static_cast<unsigned long long>(s.offloaded_bytes));
    });
    for (int i = 0; i < args.steps; ++i) trainer.step();
    const vdnn::MemoryStats memory = trainer.memory();
    std::printf("peak device memory %llu of %llu bytes\n",
                static_cast<unsigned long long>(memory.device_peak),
                static_cast<unsigned long long>(memory.device_capacity));
    if (!args.checkpoint.empty()) trainer.save(args.checkpoint);
    return 0;
  } catch (const vdnn::Error& e) {
    std::fprintf(stderr, "vdnn_example_trainer: %s\n", e.what());
    return 1;
  }
}
