//===- Compare.cpp - Comparing the outputs of two programs ----------------===//

#include "OverlapDialect/Runner/Compare.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

using namespace overlap;
using ovlrt::DType;

Tolerance overlap::getDefaultTolerance(DType type) {
  switch (type) {
  case DType::F32:
    return {1e-5, 0};
  case DType::F64:
    return {1e-12, 0};
  case DType::F16:
    return {4e-3, 0};
  case DType::BF16:
    return {3e-2, 0};
  default:
    return {0, 0};
  }
}

static std::vector<int64_t> unflatten(int64_t index,
                                      const std::vector<int64_t> &shape) {
  std::vector<int64_t> position(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    position[d] = index % shape[d];
    index /= shape[d];
  }
  return position;
}

const char *overlap::stringifyRelativeTo(RelativeTo relativeTo) {
  return relativeTo == RelativeTo::TensorScale ? "tensor-scale" : "element";
}

namespace {
/// Compares one output tensor into `result`.
class TensorComparison {
public:
  TensorComparison(Comparison &result, Tolerance tol, RelativeTo relativeTo)
      : result(result), tol(tol), relativeTo(relativeTo) {}

  void compare(const HostTensor &a, const HostTensor &e, int64_t device,
               int64_t output) {
    int64_t count = a.type().numElements();
    bool integer = isIntegerType(a.type().dtype);
    // The scale: the largest finite |expected|.
    long double scale = 0;
    if (relativeTo == RelativeTo::TensorScale)
      for (int64_t i = 0; i < count; ++i) {
        long double y = integer ? e.getAsInt64(i) : e.getAsDouble(i);
        if (std::isfinite(y))
          scale = std::max(scale, std::fabs(y));
      }
    for (int64_t i = 0; i < count; ++i) {
      bool ok;
      if (integer) {
        // long double holds every int64 and every difference of two.
        int64_t x = a.getAsInt64(i), y = e.getAsInt64(i);
        ok = x == y || within(static_cast<long double>(x) - y, y, scale);
        if (!ok)
          mismatch(device, output, a, i, x, y);
        continue;
      }
      double x = a.getAsDouble(i), y = e.getAsDouble(i);
      if (!std::isfinite(x) || !std::isfinite(y)) {
        // inf - inf is NaN and inf bounds nothing: compare them exactly.
        ok = x == y || (std::isnan(x) && std::isnan(y));
      } else {
        ok = within(static_cast<long double>(x) - y, y, scale);
      }
      if (!ok)
        mismatch(device, output, a, i, x, y);
    }
  }

private:
  /// Whether `difference` is within the tolerance for expected `y`, and
  /// records it in the error figures.
  bool within(long double difference, long double y, long double scale) {
    long double error = std::fabs(difference);
    result.maxAbsError =
        std::max(result.maxAbsError, static_cast<double>(error));
    if (y != 0)
      result.maxRelError = std::max(result.maxRelError,
                                    static_cast<double>(error / std::fabs(y)));
    return error <= tol.atol + tol.rtol * (std::fabs(y) + scale);
  }

  template <typename T>
  void mismatch(int64_t device, int64_t output, const HostTensor &a,
                int64_t index, T actual, T expected) {
    result.equal = false;
    if (result.firstMismatch)
      return;
    Mismatch m;
    m.device = device;
    m.output = output;
    m.position = unflatten(index, a.type().shape);
    m.actual = static_cast<double>(actual);
    m.expected = static_cast<double>(expected);
    if constexpr (std::is_integral_v<T>) {
      m.actualInt = actual;
      m.expectedInt = expected;
    }
    result.firstMismatch = std::move(m);
  }

  Comparison &result;
  Tolerance tol;
  RelativeTo relativeTo;
};
} // namespace

Comparison overlap::compareOutputs(const DeviceTensors &actual,
                                   const DeviceTensors &expected,
                                   std::optional<Tolerance> tolerance,
                                   RelativeTo relativeTo) {
  Comparison result;
  result.relativeTo = relativeTo;
  auto fail = [&](std::string message) {
    result.equal = false;
    result.structuralError = std::move(message);
    return result;
  };
  if (actual.size() != expected.size())
    return fail("the programs ran on " + std::to_string(actual.size()) +
                " and " + std::to_string(expected.size()) + " devices");
  for (size_t device = 0; device < actual.size(); ++device) {
    if (actual[device].size() != expected[device].size())
      return fail("the programs have " + std::to_string(actual[device].size()) +
                  " and " + std::to_string(expected[device].size()) +
                  " outputs");
    for (size_t output = 0; output < actual[device].size(); ++output) {
      const HostTensor &a = actual[device][output];
      const HostTensor &e = expected[device][output];
      if (!(a.type() == e.type()))
        return fail("output #" + std::to_string(output) + " has type " +
                    a.type().str() + " but the reference's is " +
                    e.type().str());
      Tolerance tol = tolerance.value_or(getDefaultTolerance(a.type().dtype));
      TensorComparison(result, tol, relativeTo)
          .compare(a, e, static_cast<int64_t>(device),
                   static_cast<int64_t>(output));
    }
  }
  return result;
}
