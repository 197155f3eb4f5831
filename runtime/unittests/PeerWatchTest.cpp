//===- PeerWatchTest.cpp - Lost-peer rules of the MPI transport -----------===//
//
// Time is given, never read: every verdict follows from the beats' times.
//
//===----------------------------------------------------------------------===//

#include "ovlrt/PeerWatch.h"

#include <gtest/gtest.h>

using namespace ovlrt;
using std::chrono::milliseconds;
using Clock = PeerWatch::Clock;

namespace {

constexpr int64_t kNone = -1;

TEST(PeerWatchTest, SilentPastTheWindowIsLost) {
  PeerWatch watch(/*self=*/0, /*size=*/3, milliseconds(1000));
  Clock::time_point t0 = Clock::time_point() + milliseconds(5000);
  watch.heard(1, t0, kNone, false);
  watch.heard(2, t0, kNone, false);
  EXPECT_FALSE(watch.check(t0 + milliseconds(1000)));
  watch.heard(2, t0 + milliseconds(900), kNone, false);
  std::optional<PeerWatch::Loss> loss = watch.check(t0 + milliseconds(1500));
  ASSERT_TRUE(loss);
  EXPECT_EQ(loss->device, 1);
  EXPECT_EQ(loss->noticedBy, 0);
  EXPECT_DOUBLE_EQ(loss->silentSeconds, 1.5);
}

TEST(PeerWatchTest, TheLongestSilentPeerIsNamed) {
  PeerWatch watch(/*self=*/1, /*size=*/4, milliseconds(100));
  Clock::time_point t0 = Clock::time_point() + milliseconds(1000);
  watch.heard(0, t0 + milliseconds(50), kNone, false);
  watch.heard(2, t0, kNone, false);
  watch.heard(3, t0 + milliseconds(20), kNone, false);
  std::optional<PeerWatch::Loss> loss = watch.check(t0 + milliseconds(400));
  ASSERT_TRUE(loss);
  EXPECT_EQ(loss->device, 2);
}

TEST(PeerWatchTest, NeverHeardIsLeftToTheTimeouts) {
  PeerWatch watch(/*self=*/0, /*size=*/2, milliseconds(10));
  EXPECT_FALSE(watch.check(Clock::time_point() + std::chrono::hours(1)));
  EXPECT_FALSE(watch.hasHeard(1));
  EXPECT_TRUE(watch.everyLivePeerReported(Clock::time_point()));
}

TEST(PeerWatchTest, LeavingIsNeverLost) {
  PeerWatch watch(/*self=*/0, /*size=*/2, milliseconds(10));
  Clock::time_point t0 = Clock::time_point() + milliseconds(100);
  watch.heard(1, t0, kNone, /*leaving=*/true);
  EXPECT_FALSE(watch.check(t0 + milliseconds(1000)));
}

TEST(PeerWatchTest, AReportIsBelievedButOwnVerdictComesFirst) {
  PeerWatch watch(/*self=*/0, /*size=*/4, milliseconds(100));
  Clock::time_point t0 = Clock::time_point() + milliseconds(1000);
  watch.heard(1, t0, kNone, false);
  watch.heard(2, t0, /*reportsLost=*/3, false);
  watch.heard(3, t0, kNone, false);
  std::optional<PeerWatch::Loss> loss = watch.check(t0 + milliseconds(50));
  ASSERT_TRUE(loss);
  EXPECT_EQ(loss->device, 3);
  EXPECT_EQ(loss->noticedBy, 2);
  EXPECT_EQ(loss->silentSeconds, 0);
  // A later report does not replace the first.
  watch.heard(1, t0 + milliseconds(60), /*reportsLost=*/2, false);
  EXPECT_EQ(watch.check(t0 + milliseconds(70))->device, 3);
  // Once this rank sees a silence itself, that is what it reports.
  watch.heard(2, t0 + milliseconds(90), kNone, false);
  watch.heard(3, t0 + milliseconds(90), kNone, false);
  loss = watch.check(t0 + milliseconds(250));
  ASSERT_TRUE(loss);
  EXPECT_EQ(loss->device, 1);
  EXPECT_EQ(loss->noticedBy, 0);
}

TEST(PeerWatchTest, ReportsOfSelfOrOfStrangersAreIgnored) {
  PeerWatch watch(/*self=*/0, /*size=*/2, milliseconds(100));
  Clock::time_point t0 = Clock::time_point() + milliseconds(1000);
  watch.heard(1, t0, /*reportsLost=*/0, false);
  watch.heard(1, t0, /*reportsLost=*/7, false);
  watch.heard(5, t0, kNone, false);
  watch.heard(-1, t0, kNone, false);
  watch.heard(0, t0, /*reportsLost=*/1, false);
  EXPECT_FALSE(watch.check(t0 + milliseconds(50)));
  EXPECT_TRUE(watch.hasHeard(1));
  EXPECT_FALSE(watch.hasHeard(0));
  EXPECT_FALSE(watch.hasHeard(5));
  EXPECT_FALSE(watch.hasHeard(-1));
}

TEST(PeerWatchTest, EveryLivePeerReported) {
  PeerWatch watch(/*self=*/0, /*size=*/4, milliseconds(100));
  Clock::time_point t0 = Clock::time_point() + milliseconds(1000);
  watch.heard(1, t0, kNone, false);
  watch.heard(2, t0, kNone, false);
  watch.heard(3, t0, kNone, /*leaving=*/true);
  Clock::time_point later = t0 + milliseconds(150);
  // Device 1 has gone silent; device 2 still beats but has not reported.
  watch.heard(2, later, kNone, false);
  EXPECT_FALSE(watch.everyLivePeerReported(later));
  watch.heard(2, later, /*reportsLost=*/1, false);
  EXPECT_TRUE(watch.everyLivePeerReported(later));
}

TEST(PeerWatchTest, BeatsOutOfOrderKeepTheLatest) {
  PeerWatch watch(/*self=*/0, /*size=*/2, milliseconds(100));
  Clock::time_point t0 = Clock::time_point() + milliseconds(1000);
  watch.heard(1, t0 + milliseconds(80), kNone, false);
  watch.heard(1, t0, kNone, false);
  EXPECT_FALSE(watch.check(t0 + milliseconds(150)));
}

} // namespace
