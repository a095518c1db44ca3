// OversubscriptionGuard: managed-memory requests above the device's free memory are refused before
// the upstream is asked, with both sizes in the message, unless oversubscription is allowed.
#include "runtime/memory/OversubscriptionGuard.hpp"

#include <gtest/gtest.h>

#include "runtime/memory/HostMemoryResource.hpp"
#include "runtime/memory/StatisticsAdaptor.hpp"

namespace vdnn::runtime {
namespace {

constexpr std::uint64_t kFree = std::uint64_t{3} << 20;  // 3 MiB "free on the device"

TEST(OversubscriptionGuard, RefusesMoreThanTheFreeBytesWithoutAskingUpstream) {
  HostMemoryResource host;
  StatisticsAdaptor upstream(host);
  OversubscriptionGuard guard(
      upstream, [] { return kFree; }, false);
  try {
    static_cast<void>(guard.allocate(kFree + 1));
    FAIL() << "expected OversubscriptionRefused";
  } catch (const OversubscriptionRefused& e) {
    EXPECT_EQ(e.bytes_requested(), kFree + 1);
    EXPECT_EQ(e.bytes_limit(), kFree);
    const std::string what = e.what();
    EXPECT_NE(what.find("3.00 MiB free"), std::string::npos) << what;
    EXPECT_NE(what.find("--allow-oversubscription"), std::string::npos) << what;
  }
  EXPECT_EQ(upstream.stats().allocations, 0u);
}

TEST(OversubscriptionGuard, GivesWhatFitsAndAnythingWhenAllowed) {
  HostMemoryResource host;
  StatisticsAdaptor upstream(host);
  OversubscriptionGuard strict(
      upstream, [] { return kFree; }, false);
  Buffer fits(strict, kFree);
  EXPECT_FALSE(fits.empty());
  OversubscriptionGuard allowed(
      upstream, [] { return kFree; }, true);
  Buffer beyond(allowed, 2 * kFree);
  EXPECT_FALSE(beyond.empty());
  EXPECT_EQ(upstream.stats().allocations, 2u);
}

TEST(OversubscriptionGuard, AsksForTheFreeBytesAtEachAllocation) {
  HostMemoryResource host;
  std::uint64_t free_bytes = kFree;
  OversubscriptionGuard guard(
      host, [&free_bytes] { return free_bytes; }, false);
  Buffer first(guard, kFree);
  free_bytes = 0;  // the device filled up meanwhile
  EXPECT_THROW(Buffer(guard, 1), OversubscriptionRefused);
}

}  // namespace
}  // namespace vdnn::runtime
