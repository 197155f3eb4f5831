//===- Compare.h - Comparing the outputs of two programs --------*- C++ -*-===//
//
// The equivalence oracle: the outputs of a transformed and a reference
// program on every device, element by element. Integers are compared as
// integers (exactly, by default); floats may differ by what a different
// summation order explains; infinities and NaNs must match exactly (the
// same infinity, NaN for NaN) and do not count in a tensor's scale.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_RUNNER_COMPARE_H
#define OVERLAPDIALECT_RUNNER_COMPARE_H

#include "OverlapDialect/Runner/HostTensor.h"

#include <optional>
#include <string>

namespace overlap {

/// What `rtol` is relative to.
enum class RelativeTo {
  /// |actual - expected| <= atol + rtol * (|expected| + scale), scale the
  /// largest finite |expected| of the tensor: summation order changes the
  /// result relative to the size of the summands, which the tensor's scale
  /// bounds, not relative to a (possibly cancelled) result. One huge
  /// element loosens the whole tensor.
  TensorScale,
  /// |actual - expected| <= atol + rtol * |expected|, element by element.
  Element,
};

/// "tensor-scale", "element".
const char *stringifyRelativeTo(RelativeTo relativeTo);

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
  /// For integer outputs, the exact values.
  std::optional<int64_t> actualInt, expectedInt;
};

struct Comparison {
  bool equal = true;
  /// Over every finite element of every output of every device; the
  /// relative error over those whose expected value is not 0. Always finite.
  double maxAbsError = 0, maxRelError = 0;
  /// What rtol was relative to.
  RelativeTo relativeTo = RelativeTo::TensorScale;
  /// The first element out of tolerance, or a structural difference.
  std::optional<Mismatch> firstMismatch;
  std::string structuralError;
};

/// Compares `actual` with `expected`; `tolerance` overrides the defaults.
Comparison compareOutputs(const DeviceTensors &actual,
                          const DeviceTensors &expected,
                          std::optional<Tolerance> tolerance = std::nullopt,
                          RelativeTo relativeTo = RelativeTo::TensorScale);

} // namespace overlap

#endif // OVERLAPDIALECT_RUNNER_COMPARE_H
