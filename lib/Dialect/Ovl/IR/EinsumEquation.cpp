//===- EinsumEquation.cpp - Parsing and classifying einsums ---------------===//
//
// Parses "a,b->c" einsum equations and classifies their indices.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/IR/EinsumEquation.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir::ovl;

llvm::StringRef mlir::ovl::stringifyEinsumIndexKind(EinsumIndexKind kind) {
  switch (kind) {
  case EinsumIndexKind::Batch:
    return "batch";
  case EinsumIndexKind::Contracting:
    return "contracting";
  case EinsumIndexKind::LhsFree:
    return "lhs-free";
  case EinsumIndexKind::RhsFree:
    return "rhs-free";
  case EinsumIndexKind::LhsReduction:
    return "lhs-reduction";
  case EinsumIndexKind::RhsReduction:
    return "rhs-reduction";
  }
  llvm_unreachable("unknown einsum index kind");
}

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Describes term `termIndex` for messages: "input #1" or "the output".
static std::string describeTerm(int termIndex) {
  if (termIndex < 0)
    return "the output";
  return llvm::formatv("input #{0}", termIndex).str();
}

llvm::Expected<EinsumEquation> EinsumEquation::parse(llvm::StringRef equation) {
  EinsumEquation result;
  size_t arrow = equation.find("->");
  if (arrow == llvm::StringRef::npos)
    return makeError(llvm::formatv(
        "einsum equation '{0}' has no '->'; the output term must be explicit",
        equation));
  if (equation.find("->", arrow + 2) != llvm::StringRef::npos)
    return makeError(llvm::formatv(
        "einsum equation '{0}' has more than one '->'", equation));

  // Walks one side of the equation, splitting terms at ',' when allowed.
  auto parseSide =
      [&](llvm::StringRef side, size_t offset, bool isOutput,
          llvm::SmallVectorImpl<std::string> &terms) -> llvm::Error {
    terms.emplace_back();
    for (size_t i = 0; i < side.size(); ++i) {
      char c = side[i];
      size_t pos = offset + i;
      if (c == ' ')
        continue;
      if (c == ',' && !isOutput) {
        terms.emplace_back();
        continue;
      }
      if (c == '.')
        return makeError(llvm::formatv(
            "einsum equation '{0}': ellipsis at position {1} is not "
            "supported; name every dimension",
            equation, pos));
      if (!llvm::isAlpha(c))
        return makeError(llvm::formatv(
            "einsum equation '{0}': unexpected '{1}' at position {2} "
            "(expected a letter{3})",
            equation, c, pos, isOutput ? "" : ", ',' or '->'"));
      std::string &term = terms.back();
      if (term.find(c) != std::string::npos) {
        int termIndex = isOutput ? -1 : static_cast<int>(terms.size() - 1);
        return makeError(llvm::formatv(
            "einsum equation '{0}': index '{1}' repeats in {2} at position "
            "{3}; diagonals and repeated output indices are not supported",
            equation, c, describeTerm(termIndex), pos));
      }
      term.push_back(c);
    }
    return llvm::Error::success();
  };

  llvm::SmallVector<std::string, 2> inputTerms;
  if (llvm::Error err = parseSide(equation.take_front(arrow), 0,
                                  /*isOutput=*/false, inputTerms))
    return std::move(err);
  llvm::SmallVector<std::string, 1> outputTerms;
  if (llvm::Error err = parseSide(equation.drop_front(arrow + 2), arrow + 2,
                                  /*isOutput=*/true, outputTerms))
    return std::move(err);

  result.inputs = std::move(inputTerms);
  result.output = std::move(outputTerms.front());
  for (const std::string &term : result.inputs)
    for (char c : term)
      if (result.indices.find(c) == std::string::npos)
        result.indices.push_back(c);
  for (char c : result.output)
    if (result.indices.find(c) == std::string::npos)
      return makeError(llvm::formatv(
          "einsum equation '{0}': output index '{1}' does not appear in any "
          "input",
          equation, c));
  return result;
}

std::optional<unsigned> EinsumEquation::findInInput(unsigned input,
                                                    char index) const {
  size_t pos = inputs[input].find(index);
  if (pos == std::string::npos)
    return std::nullopt;
  return static_cast<unsigned>(pos);
}

std::optional<unsigned> EinsumEquation::findInOutput(char index) const {
  size_t pos = output.find(index);
  if (pos == std::string::npos)
    return std::nullopt;
  return static_cast<unsigned>(pos);
}

EinsumIndexKind EinsumEquation::classify(char index) const {
  assert(inputs.size() == 2 && "classification needs a two-input einsum");
  bool inLhs = findInInput(0, index).has_value();
  bool inRhs = findInInput(1, index).has_value();
  bool inOut = findInOutput(index).has_value();
  assert((inLhs || inRhs) && "index is not part of the equation");
  if (inLhs && inRhs)
    return inOut ? EinsumIndexKind::Batch : EinsumIndexKind::Contracting;
  if (inLhs)
    return inOut ? EinsumIndexKind::LhsFree : EinsumIndexKind::LhsReduction;
  return inOut ? EinsumIndexKind::RhsFree : EinsumIndexKind::RhsReduction;
}

std::string EinsumEquation::str() const {
  return llvm::join(inputs, ",") + "->" + output;
}
