//===- Compare.h - Comparing the outputs of two programs --------*- C++ -*-===//
//
// The equivalence oracle: the outputs of a transformed and a reference
// program on every device, element by element. Integers must be equal;
// floats may differ by what a different summation order explains.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_RUNNER_COMPARE_H
#define OVERLAPDIALECT_RUNNER_COMPARE_H

#include "OverlapDialect/Runner/HostTensor.h"

#include <optional>
#include <string>

namespace overlap {

/// An element passes when |actual - expected| <= atol + rtol * (|expected| +
/// scale), where scale is the largest |expected| of its tensor: summation
/// order changes the result relative to the size of the summands, which the
/// tensor's scale bounds, not relative to a (possibly cancelled) result.
struct Tolerance {
  double rtol = 0;
  double atol = 0;
};

/// Defaults by element type: 0 for integers, 1e-5 for f32, 1e-12 for f64,
/// 4e-3 for f16 and 3e-2 for bf16 (a few units in the last place).
Tolerance getDefaultTolerance(ovlrt::DType type);

struct Mismatch {
  int64_t device = 0, output = 0;
  /// Row-major position of the element.
  std::vector<int64_t> position;
  double actual = 0, expected = 0;
};

struct Comparison {
  bool equal = true;
  /// Over every element of every output of every device.
  double maxAbsError = 0, maxRelError = 0;
  /// The first element out of tolerance, or a structural difference.
  std::optional<Mismatch> firstMismatch;
  std::string structuralError;
};

/// Compares `actual` with `expected`; `tolerance` overrides the defaults.
Comparison compareOutputs(const DeviceTensors &actual,
                          const DeviceTensors &expected,
                          std::optional<Tolerance> tolerance = std::nullopt);

} // namespace overlap

#endif // OVERLAPDIALECT_RUNNER_COMPARE_H
