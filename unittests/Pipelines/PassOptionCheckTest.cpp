//===- PassOptionCheckTest.cpp - The check of overlap's pass options ------===//
//
// The generated table against the registered passes, and the option
// syntax the check must read as MLIR does: quotes, braces, lists, bools
// alone, brackets that do not match.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Support/PassOptionCheck.h"
#include "OverlapDialect/InitAll.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace overlap;

namespace {

const PassOptionTableEntry &entry(llvm::StringRef pass) {
  for (const PassOptionTableEntry &e : getPassOptionTable())
    if (e.pass == pass)
      return e;
  static PassOptionTableEntry none;
  ADD_FAILURE() << "no table entry for " << pass.str();
  return none;
}

// Every pass of the table is registered, and its default pipeline text
// names each of the table's options that has a value (lists print none).
TEST(PassOptionCheckTest, TableMatchesTheRegisteredPasses) {
  registerAllPasses();
  mlir::MLIRContext context;
  for (const PassOptionTableEntry &e : getPassOptionTable()) {
    const mlir::PassInfo *info = mlir::PassInfo::lookup(e.pass);
    ASSERT_NE(info, nullptr) << e.pass;
    mlir::OpPassManager pm;
    ASSERT_TRUE(mlir::succeeded(info->addToPipeline(
        pm, "", [](const llvm::Twine &) { return mlir::failure(); })));
    std::string text;
    llvm::raw_string_ostream os(text);
    pm.printAsTextualPipeline(os);
    for (const PassOptionInfo &option : e.options) {
      if (option.isList)
        continue;
      bool named = text.find(" " + option.name + "=") != std::string::npos ||
                   text.find("{" + option.name + "=") != std::string::npos;
      EXPECT_TRUE(named) << e.pass << ": " << option.name << " not in " << text;
    }
  }
}

TEST(PassOptionCheckTest, ReadsValuesAsMlirDoes) {
  const PassOptionTableEntry &pipeline = entry("ovl-overlap-pipeline");
  EXPECT_EQ(checkPassOptions(pipeline, ""), "");
  EXPECT_EQ(checkPassOptions(pipeline, "  remarks   gate=never "), "");
  EXPECT_EQ(checkPassOptions(pipeline, "hardware=\"a b\" topology='2x2'"), "");
  EXPECT_EQ(checkPassOptions(pipeline, "hardware={x{y z}} unroll=auto"), "");
  EXPECT_EQ(checkPassOptions(pipeline, "device-assignment='1',0x2,-3"), "");
  EXPECT_EQ(checkPassOptions(pipeline, "remarks=False memory-budget=2.5e9"),
            "");
  EXPECT_EQ(checkPassOptions(pipeline, "unroll=\"2\""), "");
  EXPECT_EQ(checkPassOptions(pipeline, "hardware='x y' gate=sometimes"),
            "pass 'ovl-overlap-pipeline': option 'gate' has no value "
            "'sometimes' (valid: cost, always, never)");
  EXPECT_EQ(checkPassOptions(pipeline, "max-in-flight=4294967296"),
            "pass 'ovl-overlap-pipeline': option 'max-in-flight' has no "
            "value '4294967296' (valid: an unsigned integer)");
}

// Text that is not options at all still ends in an answer.
TEST(PassOptionCheckTest, UnmatchedBracketsEndTheCheck) {
  const PassOptionTableEntry &pipeline = entry("ovl-overlap-pipeline");
  EXPECT_NE(checkPassOptions(pipeline, "}}} =x ) ("), "");
  EXPECT_NE(checkPassOptions(pipeline, "gate=} unroll=2"), "");
  EXPECT_EQ(checkPassOptions(pipeline, "hardware={unclosed"), "");
}

// Every prefix of an options text, for every option of every pass, ends in
// an answer: the check reads whatever a user cut short (`gate=` as the last
// option once aborted it). A value that is empty where the option's type
// needs one is refused.
TEST(PassOptionCheckTest, EveryPrefixEndsInAnAnswer) {
  for (const PassOptionTableEntry &pass : getPassOptionTable())
    for (const PassOptionInfo &option : pass.options) {
      std::string text = " " + option.name + "='a b' " + option.name + "={x}";
      for (size_t length = 0; length <= text.size(); ++length)
        (void)checkPassOptions(pass, llvm::StringRef(text).take_front(length));
      std::string empty = checkPassOptions(pass, option.name + "=");
      if (option.kind != PassOptionKind::String && !option.isList)
        EXPECT_NE(empty, "") << pass.pass << " " << option.name;
    }
  const PassOptionTableEntry &pipeline = entry("ovl-overlap-pipeline");
  EXPECT_EQ(checkPassOptions(pipeline, "unroll=2 gate="),
            "pass 'ovl-overlap-pipeline': option 'gate' has no value '' "
            "(valid: cost, always, never)");
}

TEST(PassOptionCheckTest, FindsThePassesOfAPipeline) {
  llvm::ArrayRef<PassOptionTableEntry> table = getPassOptionTable();
  auto check = [&](std::vector<const char *> args) {
    args.insert(args.begin(), "overlap-opt");
    return checkPassOptionArguments(table, args.size(), args.data());
  };
  EXPECT_EQ(check({"--pass-pipeline=builtin.module(ovl-overlap-pipeline{"
                   "gate=never},func.func(canonicalize{max-iterations=x}))"}),
            "");
  EXPECT_EQ(check({"-p", "builtin.module(func.func(ovl-schedule{algorithm="
                         "top-down}, ovl-schedule{algorithm=down}))"}),
            "pass 'ovl-schedule': option 'algorithm' has no value 'down' "
            "(valid: bottom-up, top-down)");
  // A nested pipeline in an option's braces is the option's value.
  EXPECT_EQ(check({"--pass-pipeline=builtin.module(inline{default-pipeline="
                   "ovl-schedule{algorithm=down}})"}),
            "");
  // After `--`, arguments are not flags.
  EXPECT_EQ(check({"--", "--ovl-schedule=algorithm=down"}), "");
  EXPECT_EQ(check({"--ovl-schedule"}), "");
}

} // namespace
