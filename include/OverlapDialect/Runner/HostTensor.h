//===- HostTensor.h - Dense tensors in host memory --------------*- C++ -*-===//
//
// The inputs and outputs of programs run on the CPU runtime: dense,
// row-major, 64-byte aligned buffers with an element type and a shape.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_RUNNER_HOSTTENSOR_H
#define OVERLAPDIALECT_RUNNER_HOSTTENSOR_H

#include "ovlrt/DType.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace overlap {

/// Element type and shape of a program argument or result.
struct TensorType {
  ovlrt::DType dtype = ovlrt::DType::F32;
  std::vector<int64_t> shape;

  int64_t numElements() const;
  int64_t numBytes() const;
  /// "4x8xf32".
  std::string str() const;
  bool operator==(const TensorType &other) const {
    return dtype == other.dtype && shape == other.shape;
  }
};

/// A dense row-major tensor owning 64-byte aligned storage.
class HostTensor {
public:
  HostTensor() = default;
  /// Zero-filled.
  explicit HostTensor(TensorType type);
  HostTensor(const HostTensor &other);
  HostTensor &operator=(const HostTensor &other);
  HostTensor(HostTensor &&) = default;
  HostTensor &operator=(HostTensor &&) = default;

  const TensorType &type() const { return tensorType; }
  void *data() { return storage.get(); }
  const void *data() const { return storage.get(); }

  /// Element `index` (row-major) as a double: exact for every supported
  /// type but 64-bit integers beyond 2^53 (use getAsInt64 for integers).
  double getAsDouble(int64_t index) const;
  /// Stores `value` converted to the element type (rounding to nearest).
  void setFromDouble(int64_t index, double value);
  /// Element `index` of an integer tensor, exactly.
  int64_t getAsInt64(int64_t index) const;
  /// Stores `value` into an integer tensor; it must fit the element type
  /// (fitsInteger).
  void setFromInt64(int64_t index, int64_t value);

private:
  struct Free {
    void operator()(void *pointer) const;
  };
  TensorType tensorType;
  std::unique_ptr<void, Free> storage;
};

/// Whether `a` and `b` hold tensors of the same types and bits, in order.
bool sameBits(const std::vector<HostTensor> &a,
              const std::vector<HostTensor> &b);

/// Whether `type` is one of the integer types.
bool isIntegerType(ovlrt::DType type);
/// Whether `value` is representable in the integer type `type`.
bool fitsInteger(ovlrt::DType type, int64_t value);

/// Tensors of every device: `[device][argument or result]`.
using DeviceTensors = std::vector<std::vector<HostTensor>>;

} // namespace overlap

#endif // OVERLAPDIALECT_RUNNER_HOSTTENSOR_H
