//===- Tensor.h - Strided tensor views --------------------------*- C++ -*-===//
//
// Tensors reach the runtime as strided views of memory owned by the caller:
// the fields of an MLIR memref descriptor, with sizes and strides counted in
// elements. Subviews of larger buffers have arbitrary (non-negative) strides.
// This header has the checks, the element-by-element copy between two views
// of one shape, and an owning variant for views the runtime derives itself.
//
//===----------------------------------------------------------------------===//

#ifndef OVLRT_TENSOR_H
#define OVLRT_TENSOR_H

#include "ovlrt/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ovlrt {

/// A strided view. `sizes` and `strides` point at `rank` entries each (may be
/// null for rank 0); element (i0, ..., ik) lives at
/// data + (i0 * strides[0] + ... + ik * strides[k]) * dtypeSize(dtype).
struct TensorView {
  void *data = nullptr;
  DType dtype = DType::F32;
  int64_t rank = 0;
  const int64_t *sizes = nullptr;
  const int64_t *strides = nullptr;
};

int64_t numElements(const TensorView &view);
/// Bytes of the elements (not of the memory the view spans).
int64_t numBytes(const TensorView &view);
/// True if the view is dense and row-major, so that it is one memcpy.
bool isContiguous(const TensorView &view);
/// "4x8xf32" ("f32" for rank 0).
std::string formatType(const TensorView &view);
/// An empty string if the view is well formed (valid element type,
/// non-negative rank, sizes and strides, data for a non-empty view),
/// otherwise what is wrong with it.
std::string checkView(const TensorView &view);
/// True if both views have the same element type and sizes.
bool sameType(const TensorView &a, const TensorView &b);

/// Copies every element of `src` to the same position in `dst`. Both must
/// have the same element type and sizes and must not overlap.
void copyView(const TensorView &dst, const TensorView &src);

/// A view that owns its sizes and strides: slices and staging buffers the
/// runtime makes, and copies of a caller's view that must outlive the
/// caller's descriptor (an asynchronous permute's buffers).
class OwnedView {
public:
  OwnedView() = default;
  /// Copies the shape of `view`; the data stays the caller's.
  explicit OwnedView(const TensorView &view);
  /// A dense row-major view of `sizes` at `data`.
  static OwnedView contiguous(void *data, DType dtype,
                              std::vector<int64_t> sizes);

  /// The elements [offset, offset + size) along `dim`.
  OwnedView slice(int64_t dim, int64_t offset, int64_t size) const;
  /// Valid while this object lives.
  TensorView view() const;

private:
  void *data = nullptr;
  DType dtype = DType::F32;
  std::vector<int64_t> sizes, strides;
};

} // namespace ovlrt

#endif // OVLRT_TENSOR_H
