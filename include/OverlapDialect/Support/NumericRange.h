//===- NumericRange.h - The range of a number users give ---------*- C++
//-*-===//
//
// Every number a user gives overlap (a field of a hardware description, a
// pass option, a tool's flag, an argument of the C API) is checked against
// the range of the type that holds it by checkNumber, wherever it enters:
// the same value gets the same error whichever way it came in. The ranges
// themselves are declared beside what they describe (CostModel/Hardware.h).
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_SUPPORT_NUMERICRANGE_H
#define OVERLAPDIALECT_SUPPORT_NUMERICRANGE_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace overlap {

/// The values a number may take.
struct NumericRange {
  /// Whole numbers only: the number is held in an integer type.
  bool integer;
  /// The least and the greatest value, both allowed.
  double min, max;
  /// 0 is allowed too, outside [min, max]: it means "unknown" or "the
  /// default".
  bool zeroAllowed = false;
};

/// "" when `value` is in `range`, else the error, naming the number as
/// `name`: "<name> must be <the range>, got <value>". NaN and infinities are
/// in no range.
std::string checkNumber(llvm::StringRef name, const NumericRange &range,
                        double value);

/// The range in words, as in checkNumber's errors ("an integer between 1
/// and 65536", "0 or between 1e-30 and 1e+30").
std::string describeRange(const NumericRange &range);

} // namespace overlap

#endif // OVERLAPDIALECT_SUPPORT_NUMERICRANGE_H
