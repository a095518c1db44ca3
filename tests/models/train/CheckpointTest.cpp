// Checkpoints of a session: bitwise round trips, PyTorch names, hand-built files, corruption,
// mismatches listed in one error, weights-only loads and atomic writes.
#include "models/train/Checkpoint.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graph/SessionHarness.hpp"
#include "graph/TestNetworks.hpp"
#include "models/train/CheckpointHarness.hpp"
#include "models/train/SafetensorsBytes.hpp"

namespace vdnn::models {
namespace {

using testing::bitwise_equal;
using testing::load_error;
using testing::make_session;
using testing::raw_bytes;
using testing::snapshot;
using testing::Snapshot;
using testing::TempDir;
using testing::train;

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

const SafetensorsTensor& tensor(const SafetensorsFile& file, const std::string& name) {
  const auto it = std::find_if(file.tensors.begin(), file.tensors.end(),
                               [&](const SafetensorsTensor& t) { return t.name == name; });
  if (it == file.tensors.end()) throw std::runtime_error("no tensor " + name);
  return *it;
}

TEST(Checkpoint, ARoundTripIsBitwiseAndTrainingContinuesIdentically) {
  TempDir dir("checkpoint-roundtrip");
  const auto path = dir.path() / "model.safetensors";
  auto trained = make_session(3);
  train(*trained, 3);
  save_checkpoint(path, *trained, {3, 3, R"({"net":"small"})"});

  auto fresh = make_session(99);  // other initial values: everything must come from the file
  ASSERT_FALSE(bitwise_equal(snapshot(*fresh).values, snapshot(*trained).values));
  const CheckpointState state = load_checkpoint(path, *fresh);
  EXPECT_EQ(state.iteration, 3);
  EXPECT_EQ(state.seed, 3U);
  EXPECT_EQ(state.config_json, R"({"net":"small"})");
  EXPECT_EQ(fresh->executor().steps(), 3);
  const Snapshot a = snapshot(*trained);
  const Snapshot b = snapshot(*fresh);
  EXPECT_TRUE(bitwise_equal(a.values, b.values));  // includes BatchNorm running statistics
  EXPECT_TRUE(bitwise_equal(a.states, b.states));

  // The next steps use the loaded velocities (a fresh executor would restart them).
  std::vector<double> losses_a;
  std::vector<double> losses_b;
  train(*trained, 2, 7, 3, &losses_a);
  train(*fresh, 2, 7, 3, &losses_b);
  EXPECT_EQ(losses_a, losses_b);
  EXPECT_TRUE(bitwise_equal(snapshot(*trained).values, snapshot(*fresh).values));
}

TEST(Checkpoint, TensorsHavePyTorchNames) {
  TempDir dir("checkpoint-names");
  const auto path = dir.path() / "model.safetensors";
  auto session = make_session(3);
  train(*session, 2);
  save_checkpoint(path, *session, {2, 3, "{}"});
  const SafetensorsFile file = read_safetensors(path, true);
  EXPECT_EQ(tensor(file, "stem.weight").shape, (std::vector<std::int64_t>{8, 3, 3, 3}));
  EXPECT_EQ(tensor(file, "bn.running_mean").shape, (std::vector<std::int64_t>{8}));
  EXPECT_EQ(tensor(file, "b.bn1.running_var").dtype, TensorDType::F32);
  const SafetensorsTensor& tracked = tensor(file, "b.bn1.num_batches_tracked");
  EXPECT_EQ(tracked.dtype, TensorDType::I64);
  EXPECT_TRUE(tracked.shape.empty());
  EXPECT_EQ(tracked.data, raw_bytes(std::vector<std::int64_t>{2}));
  EXPECT_EQ(tensor(file, "optimizer.fc.weight.momentum_buffer").shape,
            (std::vector<std::int64_t>{4, 8}));
  EXPECT_THROW(tensor(file, "optimizer.bn.running_mean.momentum_buffer"), std::runtime_error);
  EXPECT_EQ(file.metadata.at("vdnn.iteration"), "2");
  EXPECT_EQ(file.metadata.at("vdnn.seed"), "3");
  EXPECT_EQ(file.metadata.at("vdnn.config"), "{}");
}

// pool -> fc: two parameters, small enough to write by hand as PyTorch's safetensors would.
graph::NetworkDef pooled_linear_net() {
  layers::LinearSpec fc;
  fc.out_features = 3;
  return testing::network({testing::layer("pool", layers::GlobalAvgPoolSpec{}, {"input"}),
                           testing::layer("fc", fc, {"pool"}),
                           testing::layer("loss", layers::SoftmaxCrossEntropySpec{}, {"fc"})},
                          2, 4, 3);
}

TEST(Checkpoint, AHandBuiltSafetensorsFileLoadsWeightsOnly) {
  TempDir dir("checkpoint-hand");
  const auto path = dir.path() / "torch.safetensors";
  const std::vector<float> bias{0.5F, -1.0F, 2.0F};
  const std::vector<float> weight{1, 2, 3, 4, 5, 6};
  std::vector<std::byte> data = raw_bytes(bias);
  const std::vector<std::byte> w = raw_bytes(weight);
  data.insert(data.end(), w.begin(), w.end());
  testing::write_bytes(path,
                       testing::safetensors_bytes(
                           R"({"__metadata__":{"format":"pt"},)"
                           R"("fc.bias":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},)"
                           R"("fc.weight":{"dtype":"F32","shape":[3,2],"data_offsets":[12,36]}})",
                           data));
  auto session = make_session(3, pooled_linear_net());
  EXPECT_CONTAINS(load_error(path, *session), "no \"vdnn.checksum\"");  // not a resumable file
  const CheckpointState state = load_checkpoint(path, *session, {/*weights_only=*/true});
  EXPECT_EQ(state.iteration, 0);
  EXPECT_EQ(session->executor().steps(), 0);
  const Snapshot s = snapshot(*session);
  ASSERT_EQ(s.values.size(), 2U);  // fc.weight, fc.bias
  EXPECT_EQ(s.values[0], weight);
  EXPECT_EQ(s.values[1], bias);
}

TEST(Checkpoint, AFlippedBitInHeaderOrDataIsDetected) {
  TempDir dir("checkpoint-flip");
  const auto path = dir.path() / "model.safetensors";
  auto session = make_session(3);
  train(*session, 1);
  save_checkpoint(path, *session, {1, 3, "{}"});
  const std::vector<std::byte> good = testing::read_bytes(path);

  std::vector<std::byte> bad = good;
  bad[bad.size() - 100] ^= std::byte{0x01};  // a velocity's mantissa
  testing::write_bytes(path, bad);
  EXPECT_CONTAINS(load_error(path, *session), "checksum mismatch");
  EXPECT_CONTAINS(load_error(path, *session, {true}), "checksum mismatch");

  bad = good;
  const std::string text(reinterpret_cast<const char*>(good.data()), good.size());
  const std::size_t shape = text.find(R"("shape":[8,3,3,3])");
  ASSERT_NE(shape, std::string::npos);
  bad[shape + 9] ^= std::byte{0x01};  // stem.weight's shape [8, ...] -> [9, ...]
  testing::write_bytes(path, bad);
  const std::string what = load_error(path, *session);
  EXPECT_CONTAINS(what, path.string());
  EXPECT_TRUE(what.find("checksum mismatch") != std::string::npos) << what;
}

TEST(Checkpoint, AMismatchListsEveryDifferenceAndLoadsNothing) {
  TempDir dir("checkpoint-mismatch");
  const auto path = dir.path() / "model.safetensors";
  auto session = make_session(3);
  train(*session, 1);
  save_checkpoint(path, *session, {1, 3, "{}"});
  SafetensorsFile file = read_safetensors(path, true);
  auto drop = [&](const std::string& name) {
    file.tensors.erase(std::find_if(file.tensors.begin(), file.tensors.end(),
                                    [&](const SafetensorsTensor& t) { return t.name == name; }));
  };
  drop("b.conv2.weight");
  drop("optimizer.fc.bias.momentum_buffer");
  file.tensors.push_back(
      {"head.weight", TensorDType::F32, {2}, raw_bytes(std::vector<float>{1, 2})});
  for (SafetensorsTensor& t : file.tensors) {
    if (t.name == "fc.weight") t.shape = {8, 4};
    if (t.name == "bn.num_batches_tracked") {
      t = {t.name, TensorDType::F64, {}, raw_bytes(std::vector<double>{1.0})};
    }
  }
  write_safetensors(path, file);

  auto target = make_session(5);
  const Snapshot before = snapshot(*target);
  const std::string what = load_error(path, *target);
  EXPECT_CONTAINS(what, "does not match the network (5 differences)");
  EXPECT_CONTAINS(what, "missing b.conv2.weight (expected F32 [8, 8, 3, 3])");
  EXPECT_CONTAINS(what, "missing optimizer.fc.bias.momentum_buffer (expected F32 [4])");
  EXPECT_CONTAINS(what, "mismatched fc.weight: expected F32 [4, 8], found F32 [8, 4]");
  EXPECT_CONTAINS(what, "mismatched bn.num_batches_tracked: expected I64 [], found F64 []");
  EXPECT_CONTAINS(what, "unexpected head.weight (found F32 [2])");
  EXPECT_TRUE(bitwise_equal(snapshot(*target).values, before.values));
  EXPECT_EQ(target->executor().steps(), 0);
}

TEST(Checkpoint, WeightsOnlyIgnoresOptimizerState) {
  TempDir dir("checkpoint-weights");
  const auto path = dir.path() / "model.safetensors";
  auto trained = make_session(3);
  train(*trained, 2);
  save_checkpoint(path, *trained, {2, 3, "{}"});

  auto target = make_session(5);
  train(*target, 1, 11);
  const Snapshot before = snapshot(*target);
  load_checkpoint(path, *target, {/*weights_only=*/true});
  EXPECT_TRUE(bitwise_equal(snapshot(*target).values, snapshot(*trained).values));
  EXPECT_TRUE(bitwise_equal(snapshot(*target).states, before.states));
  EXPECT_EQ(target->executor().steps(), 1);

  SafetensorsFile file = read_safetensors(path, true);
  file.tensors.erase(std::remove_if(file.tensors.begin(), file.tensors.end(),
                                    [](const SafetensorsTensor& t) {
                                      return t.name.rfind("optimizer.", 0) == 0 ||
                                             t.name.find("num_batches") != std::string::npos;
                                    }),
                     file.tensors.end());
  write_safetensors(path, file);
  EXPECT_CONTAINS(load_error(path, *target), "missing optimizer.stem.weight.momentum_buffer");
  EXPECT_CONTAINS(load_error(path, *target, {true}), "no error");
}

TEST(Checkpoint, AFailedWriteKeepsThePreviousCheckpointAndNoTempFile) {
  TempDir dir("checkpoint-atomic");
  const auto path = dir.path() / "model.safetensors";
  auto session = make_session(3);
  train(*session, 1);
  save_checkpoint(path, *session, {1, 3, "{}"});
  const Snapshot saved = snapshot(*session);
  train(*session, 1);

  struct InjectedFailure {};
  bool called = false;
  EXPECT_THROW(save_checkpoint(path, *session, {2, 3, "{}"},
                               [&](std::size_t written) {
                                 called = true;
                                 EXPECT_GT(written, 0U);
                                 throw InjectedFailure{};
                               }),
               InjectedFailure);
  EXPECT_TRUE(called);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"model.safetensors"});
  auto fresh = make_session(5);
  EXPECT_EQ(load_checkpoint(path, *fresh).iteration, 1);
  EXPECT_TRUE(bitwise_equal(snapshot(*fresh).values, saved.values));
}

TEST(Checkpoint, AFailedRenameOrMissingDirectoryLeavesNothingBehind) {
  TempDir dir("checkpoint-rename");
  const auto blocker = dir.path() / "model.safetensors";
  std::filesystem::create_directories(blocker / "not-empty");
  auto session = make_session(3);
  try {
    save_checkpoint(blocker, *session, {0, 3, "{}"});
    FAIL() << "expected CheckpointError";
  } catch (const CheckpointError& e) {
    EXPECT_CONTAINS(e.what(), "cannot rename");
  }
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"model.safetensors"});
  EXPECT_TRUE(std::filesystem::is_directory(blocker));
  try {
    save_checkpoint(dir.path() / "missing" / "model.safetensors", *session, {0, 3, "{}"});
    FAIL() << "expected CheckpointError";
  } catch (const CheckpointError& e) {
    EXPECT_CONTAINS(e.what(), "cannot create");
  }
  EXPECT_CONTAINS(load_error(dir.path() / "absent.safetensors", *session), "cannot open");
}

}  // namespace
}  // namespace vdnn::models
