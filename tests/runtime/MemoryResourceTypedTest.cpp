// Memory resource stacks as one typed suite (zero bytes, exact fit, fragmentation and coalescing,
// out of memory, alignment, overlap, random sequences against a model, deferred frees across
// streams), then what only the pool or the limiting adaptor promises.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "runtime/Error.hpp"
#include "runtime/MemoryResource.hpp"
#include "runtime/Stream.hpp"
#include "runtime/memory/HostMemoryResource.hpp"
#include "runtime/memory/LimitingAdaptor.hpp"
#include "runtime/memory/PoolMemoryResource.hpp"
#include "runtime/memory/StatisticsAdaptor.hpp"

namespace vdnn::runtime {
namespace {

constexpr std::size_t kCapacity = std::size_t{64} * 1024;

bool is_aligned(const void* ptr) {
  return reinterpret_cast<std::uintptr_t>(ptr) % MemoryResource::kAlignment == 0;
}

// An event whose completion the test controls. synchronize() completes it, as if the caller had
// waited for the work behind it; the calls are counted so a test can tell whether anyone waited.
class ManualEvent final : public Event {
 public:
  void record(Stream& /*stream*/) override {}
  bool query() const override { return complete_; }
  void synchronize() const override {
    ++synchronize_calls_;
    complete_ = true;
  }
  double seconds_since(const Event& /*earlier*/) const override { return 0.0; }
  void complete() { complete_ = true; }
  int synchronize_calls() const { return synchronize_calls_; }

 private:
  mutable bool complete_ = false;
  mutable int synchronize_calls_ = 0;
};

// One allocation filled with a byte pattern, so that overlapping allocations show up as damage.
struct Allocation {
  void* ptr;
  std::size_t bytes;
  unsigned char pattern;

  void fill() const { std::memset(ptr, pattern, bytes); }
  bool intact() const {
    const auto* first = static_cast<const unsigned char*>(ptr);
    return std::all_of(first, first + bytes, [&](unsigned char b) { return b == pattern; });
  }
  bool overlaps(const void* other, std::size_t other_bytes) const {
    const auto begin = reinterpret_cast<std::uintptr_t>(ptr);
    const auto other_begin = reinterpret_cast<std::uintptr_t>(other);
    return begin < other_begin + other_bytes && other_begin < begin + bytes;
  }
};

// Resource stacks of capacity kCapacity. Each names its top resource `top` and says how it counts
// bytes in use (`in_use`, `charge`), whether a request must succeed now (`fits`), whether
// deallocate_after() defers reuse instead of waiting at once, and whether free bytes can be
// fragmented (one contiguous block underneath).
struct LimitingOverHost {
  static constexpr const char* kName = "LimitingOverHost";
  static constexpr bool kDefersFrees = false;
  static constexpr bool kFragments = false;
  HostMemoryResource host;
  LimitingAdaptor top{host, kCapacity};

  std::size_t in_use() const { return top.bytes_in_use(); }
  static std::size_t charge(std::size_t bytes) { return MemoryResource::align_up(bytes); }
  bool fits(std::size_t bytes) const {
    return MemoryResource::align_up(bytes) <= kCapacity - in_use();
  }
};

struct StatisticsOverLimitingOverHost {
  static constexpr const char* kName = "StatisticsOverLimitingOverHost";
  static constexpr bool kDefersFrees = false;
  static constexpr bool kFragments = false;
  HostMemoryResource host;
  LimitingAdaptor limit{host, kCapacity};
  StatisticsAdaptor top{limit};

  std::size_t in_use() const { return top.stats().current_bytes; }
  static std::size_t charge(std::size_t bytes) { return bytes; }
  bool fits(std::size_t bytes) const {
    return MemoryResource::align_up(bytes) <= kCapacity - limit.bytes_in_use();
  }
};

struct PoolOverHost {
  static constexpr const char* kName = "PoolOverHost";
  static constexpr bool kDefersFrees = true;
  static constexpr bool kFragments = true;
  HostMemoryResource host;
  PoolMemoryResource top{host, kCapacity};

  std::size_t in_use() const { return top.bytes_in_use(); }
  static std::size_t charge(std::size_t bytes) { return MemoryResource::align_up(bytes); }
  bool fits(std::size_t bytes) const {
    return MemoryResource::align_up(bytes) <= top.largest_free_block();
  }
};

struct StatisticsOverPool {
  static constexpr const char* kName = "StatisticsOverPool";
  static constexpr bool kDefersFrees = true;
  static constexpr bool kFragments = true;
  HostMemoryResource host;
  PoolMemoryResource pool{host, kCapacity};
  StatisticsAdaptor top{pool};

  std::size_t in_use() const { return top.stats().current_bytes; }
  static std::size_t charge(std::size_t bytes) { return bytes; }
  bool fits(std::size_t bytes) const {
    return MemoryResource::align_up(bytes) <= pool.largest_free_block();
  }
};

// A budget below a roomier pool: the limit, not the pool's layout, decides.
struct LimitingOverPool {
  static constexpr const char* kName = "LimitingOverPool";
  static constexpr bool kDefersFrees = true;
  static constexpr bool kFragments = false;
  HostMemoryResource host;
  PoolMemoryResource pool{host, 2 * kCapacity};
  LimitingAdaptor top{pool, kCapacity};

  std::size_t in_use() const { return top.bytes_in_use(); }
  static std::size_t charge(std::size_t bytes) { return MemoryResource::align_up(bytes); }
  bool fits(std::size_t bytes) const {
    return MemoryResource::align_up(bytes) <= kCapacity - in_use() &&
           MemoryResource::align_up(bytes) <= pool.largest_free_block();
  }
};

template <typename Stack>
class MemoryResourceTypedTest : public ::testing::Test {
 protected:
  MemoryResource& resource() { return stack_.top; }
  ManualEvent& make_event() { return events_.emplace_back(); }

  // Declared before the stack so that the events outlive it (Note [Deferred frees]).
  std::deque<ManualEvent> events_;
  Stack stack_;
};

struct StackNames {
  template <typename Stack>
  // NOLINTNEXTLINE(readability-identifier-naming): GoogleTest calls it by this name.
  static std::string GetName(int /*index*/) {
    return Stack::kName;
  }
};

using Stacks = ::testing::Types<LimitingOverHost, StatisticsOverLimitingOverHost, PoolOverHost,
                                StatisticsOverPool, LimitingOverPool>;
TYPED_TEST_SUITE(MemoryResourceTypedTest, Stacks, StackNames);

TYPED_TEST(MemoryResourceTypedTest, ZeroBytesIsNullAndChangesNothing) {
  ManualEvent& event = this->make_event();
  EXPECT_EQ(this->resource().allocate(0), nullptr);
  this->resource().deallocate(nullptr, 0);
  this->resource().deallocate_after(nullptr, 0, event);
  EXPECT_EQ(this->stack_.in_use(), 0u);
  EXPECT_EQ(event.synchronize_calls(), 0);
}

TYPED_TEST(MemoryResourceTypedTest, ExactFitOfTheWholeCapacity) {
  void* whole = this->resource().allocate(kCapacity);
  ASSERT_NE(whole, nullptr);
  EXPECT_EQ(this->stack_.in_use(), TypeParam::charge(kCapacity));
  EXPECT_THROW(this->resource().allocate(1), OutOfMemory);
  this->resource().deallocate(whole, kCapacity);
  EXPECT_EQ(this->stack_.in_use(), 0u);
  void* again = this->resource().allocate(kCapacity);
  EXPECT_NE(again, nullptr);
  this->resource().deallocate(again, kCapacity);
}

TYPED_TEST(MemoryResourceTypedTest, FragmentationThenCoalescing) {
  constexpr std::size_t kA = kCapacity / 4;
  constexpr std::size_t kB = kCapacity / 4;
  constexpr std::size_t kC = kCapacity / 2;
  MemoryResource& resource = this->resource();
  void* a = resource.allocate(kA);
  void* b = resource.allocate(kB);
  void* c = resource.allocate(kC);
  resource.deallocate(a, kA);
  resource.deallocate(c, kC);
  // A+C bytes are free; only a resource that carves one block sees them as two holes.
  if constexpr (TypeParam::kFragments) {
    EXPECT_THROW(resource.allocate(kA + kC), OutOfMemory);
  } else {
    void* a_and_c = resource.allocate(kA + kC);
    EXPECT_NE(a_and_c, nullptr);
    resource.deallocate(a_and_c, kA + kC);
  }
  EXPECT_THROW(resource.allocate(kA + kB + kC), OutOfMemory);
  resource.deallocate(b, kB);
  void* whole = resource.allocate(kA + kB + kC);
  EXPECT_NE(whole, nullptr);
  resource.deallocate(whole, kA + kB + kC);
  EXPECT_EQ(this->stack_.in_use(), 0u);
}

TYPED_TEST(MemoryResourceTypedTest, OutOfMemoryLeavesStatsUnchangedAndResourceUsable) {
  constexpr std::size_t kHalf = kCapacity / 2;
  constexpr std::size_t kTooMuch = kHalf + 1;
  MemoryResource& resource = this->resource();
  void* half = resource.allocate(kHalf);
  const std::size_t before = this->stack_.in_use();
  try {
    resource.allocate(kTooMuch);
    ADD_FAILURE() << "allocating " << kTooMuch << " bytes with " << kHalf << " free succeeded";
  } catch (const OutOfMemory& error) {
    EXPECT_EQ(error.bytes_requested(), kTooMuch);
    EXPECT_EQ(error.bytes_in_use(), kHalf);
    EXPECT_EQ(error.bytes_limit(), kCapacity);
    EXPECT_NE(std::string(error.what()).find(std::to_string(kTooMuch)), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(resource.allocate(std::numeric_limits<std::size_t>::max()), OutOfMemory);
  EXPECT_EQ(this->stack_.in_use(), before);
  void* other_half = resource.allocate(kHalf);
  EXPECT_NE(other_half, nullptr);
  resource.deallocate(half, kHalf);
  resource.deallocate(other_half, kHalf);
  EXPECT_EQ(this->stack_.in_use(), 0u);
}

TYPED_TEST(MemoryResourceTypedTest, EveryPointerIsAlignedAndWritesDoNotOverlap) {
  std::vector<Allocation> live;
  for (std::size_t bytes : {1, 7, 255, 256, 257, 1000, 4096, 5000, 3}) {
    void* ptr = this->resource().allocate(bytes);
    EXPECT_TRUE(is_aligned(ptr)) << bytes << " bytes at " << ptr;
    live.push_back({ptr, bytes, static_cast<unsigned char>(live.size() + 1)});
    live.back().fill();
  }
  for (const Allocation& allocation : live) {
    EXPECT_TRUE(allocation.intact()) << allocation.bytes << " bytes at " << allocation.ptr;
    this->resource().deallocate(allocation.ptr, allocation.bytes);
  }
  EXPECT_EQ(this->stack_.in_use(), 0u);
}

// Random allocations, frees and deferred frees, checked at every step against the model: bytes in
// use, whether the request had to succeed, alignment, no overlap with live allocations, no reuse of
// memory whose event has not completed, and the patterns written into every live allocation.
TYPED_TEST(MemoryResourceTypedTest, RandomSequencesMatchAModelOfBytesInUse) {
  struct PendingFree {
    Allocation allocation;
    ManualEvent* event;
  };
  MemoryResource& resource = this->resource();
  for (unsigned seed : {1u, 2u, 3u}) {
    std::mt19937 rng(seed);
    std::vector<Allocation> live;
    std::vector<PendingFree> pending;
    std::size_t model_in_use = 0;
    for (int step = 0; step < 2000; ++step) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", step " + std::to_string(step));
      if (live.empty() || rng() % 2 == 0) {
        const std::size_t bytes = 1 + rng() % (kCapacity / 4);
        const bool must_fit = this->stack_.fits(bytes);
        void* ptr = nullptr;
        try {
          ptr = resource.allocate(bytes);
        } catch (const OutOfMemory&) {
          // ptr stays null; must_fit says whether that was right.
        }
        ASSERT_EQ(ptr != nullptr, must_fit) << bytes << " bytes";
        if (ptr != nullptr) {
          ASSERT_TRUE(is_aligned(ptr));
          for (const Allocation& other : live) ASSERT_FALSE(other.overlaps(ptr, bytes));
          for (const PendingFree& pending_free : pending) {
            ASSERT_FALSE(pending_free.allocation.overlaps(ptr, bytes) &&
                         !pending_free.event->query());
          }
          live.push_back({ptr, bytes, static_cast<unsigned char>(step)});
          live.back().fill();
          model_in_use += TypeParam::charge(bytes);
        }
      } else {
        const std::size_t index = rng() % live.size();
        const Allocation allocation = live[index];
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(index));
        ASSERT_TRUE(allocation.intact());
        if (rng() % 3 == 0) {
          ManualEvent& event = this->make_event();
          resource.deallocate_after(allocation.ptr, allocation.bytes, event);
          pending.push_back({allocation, &event});
        } else {
          resource.deallocate(allocation.ptr, allocation.bytes);
        }
        model_in_use -= TypeParam::charge(allocation.bytes);
      }
      // Now and then the copy behind a pending free finishes on its own.
      if (!pending.empty() && rng() % 4 == 0) pending[rng() % pending.size()].event->complete();
      pending.erase(std::remove_if(pending.begin(), pending.end(),
                                   [](const PendingFree& done) { return done.event->query(); }),
                    pending.end());
      ASSERT_EQ(this->stack_.in_use(), model_in_use);
    }
    for (const Allocation& allocation : live) {
      ASSERT_TRUE(allocation.intact());
      resource.deallocate(allocation.ptr, allocation.bytes);
    }
    EXPECT_EQ(this->stack_.in_use(), 0u);
    // Every hole has coalesced again.
    void* whole = resource.allocate(kCapacity);
    EXPECT_NE(whole, nullptr);
    resource.deallocate(whole, kCapacity);
  }
}

TYPED_TEST(MemoryResourceTypedTest, ConcurrentAllocationsFromTwoThreads) {
  // Each thread holds one block of at most kCapacity / 8 at a time, so every request fits however
  // the blocks are placed.
  auto churn = [this](unsigned char pattern, int* damaged) {
    std::mt19937 rng(pattern);
    for (int step = 0; step < 5000; ++step) {
      const std::size_t bytes = 1 + rng() % (kCapacity / 8);
      const Allocation allocation{this->resource().allocate(bytes), bytes, pattern};
      allocation.fill();
      if (!allocation.intact()) ++*damaged;
      this->resource().deallocate(allocation.ptr, allocation.bytes);
    }
  };
  int damaged_first = 0;
  int damaged_second = 0;
  std::thread first(churn, 1, &damaged_first);
  std::thread second(churn, 2, &damaged_second);
  first.join();
  second.join();
  EXPECT_EQ(damaged_first, 0);
  EXPECT_EQ(damaged_second, 0);
  EXPECT_EQ(this->stack_.in_use(), 0u);
}

TYPED_TEST(MemoryResourceTypedTest, DeallocateAfterStopsCountingAtOnce) {
  ManualEvent& event = this->make_event();
  void* ptr = this->resource().allocate(kCapacity);
  this->resource().deallocate_after(ptr, kCapacity, event);
  EXPECT_EQ(this->stack_.in_use(), 0u);
  // A resource that cannot defer waits for the event before it frees.
  EXPECT_EQ(event.synchronize_calls(), TypeParam::kDefersFrees ? 0 : 1);
}

TYPED_TEST(MemoryResourceTypedTest, ReuseAcrossStreamsWaitsForTheEvent) {
  if (!TypeParam::kDefersFrees) GTEST_SKIP() << "deallocate_after() waits at once";
  constexpr std::size_t kQuarter = kCapacity / 4;
  MemoryResource& resource = this->resource();
  ManualEvent& offload_done = this->make_event();
  void* a = resource.allocate(kQuarter);
  void* b = resource.allocate(kQuarter);
  void* c = resource.allocate(2 * kQuarter);
  resource.deallocate(c, 2 * kQuarter);
  resource.deallocate_after(a, kQuarter, offload_done);  // an offload copy still reads `a`
  EXPECT_EQ(this->stack_.in_use(), TypeParam::charge(kQuarter));

  void* elsewhere = resource.allocate(2 * kQuarter);  // only fits where `c` was
  EXPECT_EQ(offload_done.synchronize_calls(), 0);
  EXPECT_FALSE(offload_done.query());

  void* reused = resource.allocate(kQuarter);  // best fit is `a`'s block
  EXPECT_EQ(reused, a);
  EXPECT_EQ(offload_done.synchronize_calls(), 1);
  EXPECT_TRUE(offload_done.query());

  for (void* ptr : {b, reused}) resource.deallocate(ptr, kQuarter);
  resource.deallocate(elsewhere, 2 * kQuarter);
  EXPECT_EQ(this->stack_.in_use(), 0u);
}

TYPED_TEST(MemoryResourceTypedTest, CompletedEventIsNotWaitedFor) {
  if (!TypeParam::kDefersFrees) GTEST_SKIP() << "deallocate_after() waits at once";
  ManualEvent& event = this->make_event();
  void* ptr = this->resource().allocate(kCapacity);
  event.complete();
  this->resource().deallocate_after(ptr, kCapacity, event);
  void* again = this->resource().allocate(kCapacity);
  EXPECT_EQ(event.synchronize_calls(), 0);
  this->resource().deallocate(again, kCapacity);
}

// A block an offload copy may still read (`a`'s): best fit (the default) lands on it and waits;
// settled first takes the free half instead, waits for nothing, and lands on `a`'s block only when
// nothing else holds the request (after retire_completed, which keeps a free whose event has not
// completed).
TEST(PoolMemoryResource, SettledFirstTakesABlockWithNoPendingFreeWhereBestFitWaits) {
  constexpr std::size_t kQuarter = kCapacity / 4;
  for (const BlockChoice choice : {BlockChoice::BestFit, BlockChoice::SettledFirst}) {
    SCOPED_TRACE(block_choice_name(choice));
    const bool settled = choice == BlockChoice::SettledFirst;
    HostMemoryResource host;
    PoolMemoryResource pool(host, kCapacity, choice);
    ManualEvent copy_done;
    void* a = pool.allocate(kQuarter);
    void* b = pool.allocate(kQuarter);
    void* c = pool.allocate(2 * kQuarter);
    pool.deallocate(c, 2 * kQuarter);
    pool.deallocate_after(a, kQuarter, copy_done);
    void* next = pool.allocate(kQuarter);
    EXPECT_EQ(next, settled ? c : a);
    EXPECT_EQ(copy_done.synchronize_calls(), settled ? 0 : 1);
    EXPECT_THROW(pool.allocate(3 * kQuarter), OutOfMemory);  // no free block holds it
    for (void* ptr : {b, next}) pool.deallocate(ptr, kQuarter);
    pool.retire_completed();
    void* all = pool.allocate(kCapacity);
    EXPECT_EQ(copy_done.synchronize_calls(), 1);
    pool.deallocate(all, kCapacity);
  }
}

// When every fitting block holds a pending free, the one freed longest ago is taken, whether or not
// its event has completed: placement never depends on timing.
TEST(PoolMemoryResource, SettledFirstTakesTheOldestPendingFreeWhenNoBlockIsSettled) {
  constexpr std::size_t kQuarter = kCapacity / 4;
  for (const bool older_done : {false, true}) {
    SCOPED_TRACE(older_done);
    HostMemoryResource host;
    PoolMemoryResource pool(host, kCapacity, BlockChoice::SettledFirst);
    ManualEvent older;
    ManualEvent newer;
    void* a = pool.allocate(kQuarter);
    void* b = pool.allocate(kQuarter);
    void* c = pool.allocate(kQuarter);
    void* d = pool.allocate(kQuarter);
    pool.deallocate_after(c, kQuarter, older);
    pool.deallocate_after(a, kQuarter, newer);  // best fit: the lowest address, `a`
    if (older_done) older.complete();
    void* next = pool.allocate(kQuarter);
    EXPECT_EQ(next, c);
    EXPECT_EQ(older.synchronize_calls(), older_done ? 0 : 1);
    EXPECT_EQ(newer.synchronize_calls(), 0);
    newer.complete();
    for (void* ptr : {b, next, d}) pool.deallocate(ptr, kQuarter);
  }
}

TEST(PoolMemoryResource, TakesOneUpstreamBlockAndReturnsIt) {
  HostMemoryResource host;
  StatisticsAdaptor upstream(host);
  {
    PoolMemoryResource pool(upstream, 1000);
    EXPECT_EQ(pool.capacity(), 1024u);
    EXPECT_EQ(upstream.stats().current_bytes, 1024u);
    for (int i = 0; i < 10; ++i) pool.deallocate(pool.allocate(1000), 1000);
    EXPECT_EQ(upstream.stats().allocations, 1u);
  }
  EXPECT_EQ(upstream.stats().current_bytes, 0u);
  EXPECT_EQ(upstream.stats().deallocations, 1u);
}

TEST(PoolMemoryResource, PlacementIsBestFitNotFirstFit) {
  constexpr std::size_t kUnit = 1024;
  HostMemoryResource host;
  PoolMemoryResource pool(host, 8 * kUnit);
  void* two_units = pool.allocate(2 * kUnit);
  void* fence = pool.allocate(kUnit);
  void* one_unit = pool.allocate(kUnit);
  void* rest = pool.allocate(4 * kUnit);
  pool.deallocate(two_units, 2 * kUnit);
  pool.deallocate(one_unit, kUnit);
  // First fit would split the lower two-unit hole; best fit takes the exact one.
  void* placed = pool.allocate(kUnit);
  EXPECT_EQ(placed, one_unit);
  EXPECT_EQ(pool.largest_free_block(), 2 * kUnit);
  for (void* ptr : {fence, placed}) pool.deallocate(ptr, kUnit);
  pool.deallocate(rest, 4 * kUnit);
  EXPECT_EQ(pool.largest_free_block(), 8 * kUnit);
}

TEST(PoolMemoryResource, OutOfMemoryMessageNamesTheFragmentation) {
  constexpr std::size_t kUnit = 1024;
  HostMemoryResource host;
  PoolMemoryResource pool(host, 4 * kUnit);
  std::vector<void*> blocks(4);
  for (void*& block : blocks) block = pool.allocate(kUnit);
  pool.deallocate(blocks[0], kUnit);
  pool.deallocate(blocks[2], kUnit);
  try {
    pool.allocate(2 * kUnit);
    ADD_FAILURE() << "a 2 KiB request fit in two 1 KiB holes";
  } catch (const OutOfMemory& error) {
    const std::string message = error.what();
    for (const char* expected :
         {"pool(host)", "cannot allocate 2048 bytes", "2048 of 4096 bytes in use",
          "largest free block 1024 bytes", "2048 free in total"}) {
      EXPECT_NE(message.find(expected), std::string::npos) << message;
    }
  }
  EXPECT_EQ(pool.bytes_in_use(), 2 * kUnit);
  pool.deallocate(blocks[1], kUnit);
  pool.deallocate(blocks[3], kUnit);
}

TEST(PoolMemoryResource, AllocationOverTwoPendingFreesWaitsForBoth) {
  constexpr std::size_t kUnit = 1024;
  ManualEvent first_copy;
  ManualEvent second_copy;
  HostMemoryResource host;
  PoolMemoryResource pool(host, 4 * kUnit);
  void* a = pool.allocate(kUnit);
  void* b = pool.allocate(kUnit);
  void* c = pool.allocate(2 * kUnit);
  pool.deallocate_after(a, kUnit, first_copy);
  pool.deallocate_after(b, kUnit, second_copy);
  EXPECT_EQ(pool.largest_free_block(), 2 * kUnit);  // pending frees coalesce at once
  void* both = pool.allocate(2 * kUnit);
  EXPECT_EQ(both, a);
  EXPECT_EQ(first_copy.synchronize_calls(), 1);
  EXPECT_EQ(second_copy.synchronize_calls(), 1);
  pool.deallocate(both, 2 * kUnit);
  pool.deallocate(c, 2 * kUnit);
}

TEST(PoolMemoryResource, RetireCompletedForgetsEventsAndTheDestructorWaitsForTheRest) {
  constexpr std::size_t kUnit = 1024;
  ManualEvent finished;
  ManualEvent in_flight;
  {
    HostMemoryResource host;
    PoolMemoryResource pool(host, 2 * kUnit);
    void* a = pool.allocate(kUnit);
    void* b = pool.allocate(kUnit);
    pool.deallocate_after(a, kUnit, finished);
    pool.deallocate_after(b, kUnit, in_flight);
    finished.complete();
    pool.retire_completed();
  }
  EXPECT_EQ(finished.synchronize_calls(), 0);
  EXPECT_EQ(in_flight.synchronize_calls(), 1);
}

// The executor's end of step: the streams are synchronized, so no pending free is asked about
// or waited for again, neither by a later allocation nor by the destructor.
TEST(PoolMemoryResource, RetireAllForgetsEveryPendingFreeWithoutAskingItsEvent) {
  constexpr std::size_t kUnit = 1024;
  ManualEvent in_flight;  // never completes: asking it would say "not done"
  {
    HostMemoryResource host;
    PoolMemoryResource pool(host, 2 * kUnit);
    void* a = pool.allocate(kUnit);
    void* b = pool.allocate(kUnit);
    pool.deallocate_after(a, kUnit, in_flight);
    pool.deallocate_after(b, kUnit, in_flight);
    pool.retire_all();
    void* both = pool.allocate(2 * kUnit);
    EXPECT_EQ(both, a);
    pool.deallocate(both, 2 * kUnit);
  }
  EXPECT_EQ(in_flight.synchronize_calls(), 0);
  EXPECT_FALSE(in_flight.query());
}

// waits() counts the pending frees an allocation waited for, those whose events had not completed.
TEST(PoolMemoryResource, CountsTheWaitsForPendingFreesThatHadNotCompleted) {
  constexpr std::size_t kUnit = 1024;
  HostMemoryResource host;
  PoolMemoryResource pool(host, kUnit);
  ManualEvent done;
  done.complete();
  ManualEvent in_flight;
  void* a = pool.allocate(kUnit);
  pool.deallocate_after(a, kUnit, done);
  a = pool.allocate(kUnit);  // lands on a completed free: no wait
  EXPECT_EQ(pool.waits().count, 0U);
  pool.deallocate_after(a, kUnit, in_flight);
  a = pool.allocate(kUnit);  // lands on a copy still running: waits for it
  EXPECT_EQ(pool.waits().count, 1U);
  EXPECT_GE(pool.waits().seconds, 0.0);
  EXPECT_EQ(in_flight.synchronize_calls(), 1);
  pool.deallocate(a, kUnit);
}

TEST(PoolMemoryResource, FreeingWhatThePoolDidNotHandOutIsAnError) {
  HostMemoryResource host;
  PoolMemoryResource pool(host, 4096);
  ManualEvent event;
  void* ptr = pool.allocate(1000);
  alignas(MemoryResource::kAlignment) unsigned char foreign[256];
  EXPECT_THROW(pool.deallocate_after(foreign, sizeof(foreign), event), InvalidArgument);
  EXPECT_THROW(pool.deallocate_after(ptr, 2000, event), InvalidArgument);
  EXPECT_EQ(pool.bytes_in_use(), 1024u);
  EXPECT_DEATH(pool.deallocate(foreign, sizeof(foreign)), "not a live allocation");
  pool.deallocate(ptr, 1000);
  EXPECT_EQ(pool.bytes_in_use(), 0u);
}

TEST(LimitingAdaptor, FailedUpstreamAllocationLeavesTheCountUnchanged) {
  HostMemoryResource host;
  PoolMemoryResource pool(host, 4096);
  LimitingAdaptor limit(pool, 1 << 20);
  EXPECT_THROW(limit.allocate(8192), OutOfMemory);
  EXPECT_EQ(limit.bytes_in_use(), 0u);
  void* ptr = limit.allocate(4096);
  EXPECT_EQ(limit.bytes_in_use(), 4096u);
  limit.deallocate(ptr, 4096);
}

}  // namespace
}  // namespace vdnn::runtime
