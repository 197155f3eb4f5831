//===- Compare.cpp - Comparing the outputs of two programs ----------------===//

#include "OverlapDialect/Runner/Compare.h"

#include <algorithm>
#include <cmath>

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

Comparison overlap::compareOutputs(const DeviceTensors &actual,
                                   const DeviceTensors &expected,
                                   std::optional<Tolerance> tolerance) {
  Comparison result;
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
      return fail("the programs have " +
                  std::to_string(actual[device].size()) + " and " +
                  std::to_string(expected[device].size()) + " outputs");
    for (size_t output = 0; output < actual[device].size(); ++output) {
      const HostTensor &a = actual[device][output];
      const HostTensor &e = expected[device][output];
      if (!(a.type() == e.type()))
        return fail("output #" + std::to_string(output) + " has type " +
                    a.type().str() + " but the reference's is " +
                    e.type().str());
      Tolerance tol = tolerance.value_or(getDefaultTolerance(a.type().dtype));
      int64_t count = a.type().numElements();
      double scale = 0;
      for (int64_t i = 0; i < count; ++i)
        scale = std::max(scale, std::fabs(e.getAsDouble(i)));
      for (int64_t i = 0; i < count; ++i) {
        double x = a.getAsDouble(i), y = e.getAsDouble(i);
        bool ok;
        if (std::isnan(x) || std::isnan(y)) {
          ok = std::isnan(x) && std::isnan(y);
        } else {
          double error = std::fabs(x - y);
          result.maxAbsError = std::max(result.maxAbsError, error);
          if (y != 0)
            result.maxRelError =
                std::max(result.maxRelError, error / std::fabs(y));
          else if (error != 0)
            result.maxRelError = INFINITY;
          ok = error <= tol.atol + tol.rtol * (std::fabs(y) + scale);
        }
        if (!ok && !result.firstMismatch) {
          result.equal = false;
          result.firstMismatch =
              Mismatch{static_cast<int64_t>(device),
                       static_cast<int64_t>(output),
                       unflatten(i, a.type().shape), x, y};
        }
      }
    }
  }
  return result;
}
