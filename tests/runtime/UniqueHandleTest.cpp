// UniqueHandle, tested once on the CPU with a fake integer handle whose deleter logs what it
// destroys; every CUDA owner is built on it.
#include "runtime/UniqueHandle.hpp"

#include <gtest/gtest.h>

#include <type_traits>
#include <utility>
#include <vector>

namespace vdnn::runtime {
namespace {

// Ids destroyed so far, in order; 0 is the null handle.
std::vector<int> destroyed_ids;

struct LoggingDeleter {
  static void destroy(int id) noexcept { destroyed_ids.push_back(id); }
};
using FakeHandle = UniqueHandle<int, LoggingDeleter>;

static_assert(!std::is_copy_constructible_v<FakeHandle>);
static_assert(!std::is_copy_assignable_v<FakeHandle>);
static_assert(std::is_nothrow_move_constructible_v<FakeHandle>);
static_assert(std::is_nothrow_move_assignable_v<FakeHandle>);

class UniqueHandleTest : public ::testing::Test {
 protected:
  void SetUp() override { destroyed_ids.clear(); }
};

TEST_F(UniqueHandleTest, NullHandleIsNeverDestroyed) {
  {
    FakeHandle empty;
    EXPECT_FALSE(empty);
    EXPECT_EQ(empty.get(), 0);
    FakeHandle adopted_null(0);
    EXPECT_FALSE(adopted_null);
    empty.reset();
  }
  EXPECT_TRUE(destroyed_ids.empty());
}

TEST_F(UniqueHandleTest, DestroysOwnedHandleExactlyOnce) {
  {
    FakeHandle handle(7);
    EXPECT_TRUE(handle);
    EXPECT_EQ(handle.get(), 7);
    EXPECT_TRUE(destroyed_ids.empty());
  }
  EXPECT_EQ(destroyed_ids, std::vector<int>{7});
}

TEST_F(UniqueHandleTest, MoveConstructionTransfersOwnership) {
  {
    FakeHandle source(3);
    FakeHandle target(std::move(source));
    EXPECT_FALSE(source);  // NOLINT(bugprone-use-after-move): a moved-from owner is empty
    EXPECT_EQ(target.get(), 3);
  }
  EXPECT_EQ(destroyed_ids, std::vector<int>{3});
}

TEST_F(UniqueHandleTest, MoveAssignmentDestroysThePreviousHandle) {
  {
    FakeHandle target(1);
    FakeHandle source(2);
    target = std::move(source);
    EXPECT_EQ(destroyed_ids, std::vector<int>{1});
    EXPECT_EQ(target.get(), 2);
    EXPECT_FALSE(source);  // NOLINT(bugprone-use-after-move): a moved-from owner is empty
  }
  EXPECT_EQ(destroyed_ids, (std::vector<int>{1, 2}));
}

TEST_F(UniqueHandleTest, SelfMoveAssignmentKeepsTheHandle) {
  {
    FakeHandle handle(9);
    FakeHandle& alias = handle;
    handle = std::move(alias);
    EXPECT_EQ(handle.get(), 9);
    EXPECT_TRUE(destroyed_ids.empty());
  }
  EXPECT_EQ(destroyed_ids, std::vector<int>{9});
}

TEST_F(UniqueHandleTest, ResetDestroysTheOldHandleAndAdoptsTheNew) {
  FakeHandle handle(4);
  handle.reset(5);
  EXPECT_EQ(destroyed_ids, std::vector<int>{4});
  EXPECT_EQ(handle.get(), 5);
  handle.reset();
  EXPECT_EQ(destroyed_ids, (std::vector<int>{4, 5}));
  EXPECT_FALSE(handle);
}

TEST_F(UniqueHandleTest, ReleaseGivesUpOwnershipWithoutDestroying) {
  {
    FakeHandle handle(6);
    EXPECT_EQ(handle.release(), 6);
    EXPECT_FALSE(handle);
  }
  EXPECT_TRUE(destroyed_ids.empty());
}

}  // namespace
}  // namespace vdnn::runtime
