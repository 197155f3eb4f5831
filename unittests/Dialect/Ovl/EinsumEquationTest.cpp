//===- EinsumEquationTest.cpp - Tests of the einsum classifier ------------===//

#include "OverlapDialect/Dialect/Ovl/IR/EinsumEquation.h"

#include "gtest/gtest.h"

using namespace mlir::ovl;

namespace {

EinsumEquation parseOrDie(llvm::StringRef text) {
  llvm::Expected<EinsumEquation> parsed = EinsumEquation::parse(text);
  if (!parsed) {
    ADD_FAILURE() << "failed to parse '" << text.str()
                  << "': " << llvm::toString(parsed.takeError());
    return *EinsumEquation::parse("a->a");
  }
  return std::move(*parsed);
}

std::string parseError(llvm::StringRef text) {
  llvm::Expected<EinsumEquation> parsed = EinsumEquation::parse(text);
  if (parsed)
    return "<parsed>";
  return llvm::toString(parsed.takeError());
}

TEST(EinsumEquation, ParsesTermsAndIndices) {
  EinsumEquation eq = parseOrDie("bsf,bfh->bsh");
  ASSERT_EQ(eq.getNumInputs(), 2u);
  EXPECT_EQ(eq.getInput(0), "bsf");
  EXPECT_EQ(eq.getInput(1), "bfh");
  EXPECT_EQ(eq.getOutput(), "bsh");
  EXPECT_EQ(eq.getIndices(), "bsfh");
  EXPECT_EQ(eq.str(), "bsf,bfh->bsh");
}

TEST(EinsumEquation, IgnoresSpaces) {
  EXPECT_EQ(parseOrDie(" bf , fh -> bh ").str(), "bf,fh->bh");
}

TEST(EinsumEquation, ClassifiesMatmul) {
  EinsumEquation eq = parseOrDie("bf,fh->bh");
  EXPECT_EQ(eq.classify('b'), EinsumIndexKind::LhsFree);
  EXPECT_EQ(eq.classify('f'), EinsumIndexKind::Contracting);
  EXPECT_EQ(eq.classify('h'), EinsumIndexKind::RhsFree);
  EXPECT_EQ(eq.classifyInputDim(0, 1), EinsumIndexKind::Contracting);
  EXPECT_EQ(eq.classifyInputDim(1, 1), EinsumIndexKind::RhsFree);
}

TEST(EinsumEquation, ClassifiesBatchedEinsum) {
  EinsumEquation eq = parseOrDie("bsf,bfh->bsh");
  EXPECT_EQ(eq.classify('b'), EinsumIndexKind::Batch);
  EXPECT_EQ(eq.classify('s'), EinsumIndexKind::LhsFree);
  EXPECT_EQ(eq.classify('f'), EinsumIndexKind::Contracting);
  EXPECT_EQ(eq.classify('h'), EinsumIndexKind::RhsFree);
}

TEST(EinsumEquation, ClassifiesTransposedOperandsAndReductions) {
  // The second operand is transposed; `r` is summed inside the lhs only.
  EinsumEquation eq = parseOrDie("fbr,hf->hb");
  EXPECT_EQ(eq.classify('f'), EinsumIndexKind::Contracting);
  EXPECT_EQ(eq.classify('b'), EinsumIndexKind::LhsFree);
  EXPECT_EQ(eq.classify('r'), EinsumIndexKind::LhsReduction);
  EXPECT_EQ(eq.classify('h'), EinsumIndexKind::RhsFree);
  EXPECT_EQ(parseOrDie("ab,bc->a").classify('c'),
            EinsumIndexKind::RhsReduction);
}

TEST(EinsumEquation, FindsPositions) {
  EinsumEquation eq = parseOrDie("bsf,bfh->bsh");
  EXPECT_EQ(eq.findInInput(1, 'h'), 2u);
  EXPECT_EQ(eq.findInInput(0, 'h'), std::nullopt);
  EXPECT_EQ(eq.findInOutput('s'), 1u);
  EXPECT_EQ(eq.findInOutput('f'), std::nullopt);
}

TEST(EinsumEquation, AcceptsUnaryAndScalarTerms) {
  EinsumEquation transpose = parseOrDie("ij->ji");
  EXPECT_EQ(transpose.getNumInputs(), 1u);
  EXPECT_EQ(transpose.getOutput(), "ji");
  EinsumEquation dot = parseOrDie("i,i->");
  EXPECT_EQ(dot.getOutput(), "");
  EXPECT_EQ(dot.classify('i'), EinsumIndexKind::Contracting);
  EXPECT_EQ(parseOrDie("AB,BC->AC").classify('B'),
            EinsumIndexKind::Contracting);
}

TEST(EinsumEquation, StringifiesKinds) {
  EXPECT_EQ(stringifyEinsumIndexKind(EinsumIndexKind::Batch), "batch");
  EXPECT_EQ(stringifyEinsumIndexKind(EinsumIndexKind::RhsReduction),
            "rhs-reduction");
}

TEST(EinsumEquation, RejectsMalformedEquations) {
  EXPECT_NE(parseError("bf,fh").find("has no '->'"), std::string::npos);
  EXPECT_NE(parseError("a->b->c").find("more than one '->'"),
            std::string::npos);
  EXPECT_NE(parseError("...f,fh->...h").find("ellipsis at position 0"),
            std::string::npos);
  EXPECT_NE(parseError("b1,fh->bh").find("unexpected '1' at position 1"),
            std::string::npos);
  EXPECT_NE(parseError("bf,fh->b,h").find("unexpected ','"), std::string::npos);
  EXPECT_NE(parseError("ii->i").find("index 'i' repeats in input #0"),
            std::string::npos);
  EXPECT_NE(parseError("ij->ii").find("repeats in the output"),
            std::string::npos);
  EXPECT_NE(parseError("bf,fh->bz").find("output index 'z' does not appear"),
            std::string::npos);
}

} // namespace
