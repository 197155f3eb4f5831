//===- NumericRange.cpp - The range of a number users give ----------------===//

#include "OverlapDialect/Support/NumericRange.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace overlap;

/// A whole number below 2^53 as its digits, anything else as %g: the user
/// recognizes 2147483648 where %g would say 2.14748e+09.
static std::string formatValue(double value) {
  if (std::isfinite(value) && value == std::floor(value) &&
      std::fabs(value) < 0x1p53)
    return llvm::formatv("{0}", static_cast<int64_t>(value)).str();
  return llvm::formatv("{0}", llvm::format("%g", value)).str();
}

std::string overlap::describeRange(const NumericRange &range) {
  std::string words = range.zeroAllowed ? "0 or " : "";
  if (range.integer)
    words += "an integer ";
  return words + "between " + formatValue(range.min) + " and " +
         formatValue(range.max);
}

std::string overlap::checkNumber(llvm::StringRef name,
                                 const NumericRange &range, double value) {
  bool inRange = value >= range.min && value <= range.max &&
                 (!range.integer || value == std::floor(value));
  if (inRange || (range.zeroAllowed && value == 0))
    return "";
  return (name + " must be " + describeRange(range) + ", got " +
          formatValue(value))
      .str();
}
