//===- TraceTest.cpp - What -debug-only=ovl-schedule says -----------------===//
//
// The schedulers trace each choice under the debug type "ovl-schedule":
// the node taken and why (ready, pending, the cover it keeps, the budget,
// the stall). Debian's LLVM has no -debug-only option, but its debug
// stream and flags are there, so the test turns them on itself.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Scheduling/BlockScheduler.h"
#include "OverlapDialect/Scheduling/ListSchedulers.h"

#include "TestGraph.h"

#include "llvm/Support/Debug.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <string>

using namespace mlir::ovl::sched;
using namespace mlir::ovl::sched::test;

namespace {

#ifndef NDEBUG
/// What `run` writes to the debug stream with only "ovl-schedule" on.
template <typename Fn> std::string trace(Fn run) {
  llvm::DebugFlag = true;
  llvm::setCurrentDebugType("ovl-schedule");
  testing::internal::CaptureStderr();
  run();
  llvm::dbgs().flush();
  std::string text = testing::internal::GetCapturedStderr();
  llvm::DebugFlag = false;
  return text;
}

testing::AssertionResult says(const std::string &text, const char *what) {
  if (text.find(what) != std::string::npos)
    return testing::AssertionSuccess();
  return testing::AssertionFailure() << "no \"" << what << "\" in:\n" << text;
}

TEST(TraceTest, BottomUpSaysWhy) {
  // A transfer longer than the compute that may hide it: bottom-up stalls
  // on it; two transfers with one slot: a done waits for the budget.
  TestGraph t;
  unsigned a = t.start(6);
  unsigned b = t.start(6);
  t.compute(2);
  t.compute(1, {t.done(a)});
  t.compute(1, {t.done(b)});
  const ScheduleGraph &graph = t.finish();
  std::string text = trace([&] { scheduleBottomUp(graph, 1, true); });
  EXPECT_TRUE(says(text, "[ovl-schedule] bottom-up, budget 1"));
  EXPECT_TRUE(says(text, "node 5 (done): ready"));
  EXPECT_TRUE(says(text, "waits for the budget"));
  EXPECT_TRUE(says(text, "pending, ready first: nothing ready"));
  EXPECT_TRUE(says(text, "stalls"));
}

TEST(TraceTest, TopDownSaysWhy) {
  TestGraph t;
  unsigned s = t.start(4);
  unsigned d = t.done(s);
  t.compute(1, {d});
  t.compute(5);
  const ScheduleGraph &graph = t.finish();
  std::string text =
      trace([&] { scheduleBlock(graph, {Algorithm::TopDown, 4}); });
  EXPECT_TRUE(says(text, "[ovl-schedule] top-down, budget 4"));
  EXPECT_TRUE(says(text, "node 0 (start): a start within the budget"));
  EXPECT_TRUE(says(text, "node 1 (done): the done arriving first: nothing "
                         "else can go"));
  EXPECT_TRUE(says(text, "makespan 6.000000e+00 s (replayed)"));
}
#endif

} // namespace
