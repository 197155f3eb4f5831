//===- Tensor.cpp - Strided tensor views ----------------------------------===//
//
// Checks and copies for strided views. The copy first simplifies the pair of
// layouts (drops unit dimensions, merges dimensions that are contiguous in
// both views) so that the common cases, dense buffers and row slices of
// dense buffers, become a few large memcpys; what is left is walked with an
// index counter.
//
//===----------------------------------------------------------------------===//

#include "ovlrt/Tensor.h"

#include "ovlrt/Errors.h"

#include <cstring>

using namespace ovlrt;

int64_t ovlrt::numElements(const TensorView &view) {
  int64_t count = 1;
  for (int64_t d = 0; d < view.rank; ++d)
    count *= view.sizes[d];
  return count;
}

int64_t ovlrt::numBytes(const TensorView &view) {
  return numElements(view) * dtypeSize(view.dtype);
}

bool ovlrt::isContiguous(const TensorView &view) {
  int64_t expected = 1;
  for (int64_t d = view.rank - 1; d >= 0; --d) {
    if (view.sizes[d] != 1 && view.strides[d] != expected)
      return false;
    expected *= view.sizes[d];
  }
  return true;
}

std::string ovlrt::formatType(const TensorView &view) {
  std::string text;
  for (int64_t d = 0; d < view.rank; ++d)
    text += std::to_string(view.sizes[d]) + "x";
  return text + dtypeName(view.dtype);
}

std::string ovlrt::checkView(const TensorView &view) {
  if (!isValidDType(static_cast<int64_t>(view.dtype)))
    return "invalid element type " +
           std::to_string(static_cast<int64_t>(view.dtype));
  if (view.rank < 0)
    return "negative rank " + std::to_string(view.rank);
  if (view.rank > 0 && (!view.sizes || !view.strides))
    return "missing sizes or strides";
  for (int64_t d = 0; d < view.rank; ++d) {
    if (view.sizes[d] < 0)
      return "negative size " + std::to_string(view.sizes[d]) + " in dim " +
             std::to_string(d);
    if (view.strides[d] < 0)
      return "negative stride " + std::to_string(view.strides[d]) + " in dim " +
             std::to_string(d);
  }
  if (!view.data && numElements(view) > 0)
    return "null data pointer";
  return "";
}

bool ovlrt::sameType(const TensorView &a, const TensorView &b) {
  if (a.dtype != b.dtype || a.rank != b.rank)
    return false;
  for (int64_t d = 0; d < a.rank; ++d)
    if (a.sizes[d] != b.sizes[d])
      return false;
  return true;
}

namespace {
/// One dimension of a copy, strides in bytes.
struct CopyDim {
  int64_t size, dstStride, srcStride;
};
} // namespace

/// The copy's dimensions, outermost first, with unit dimensions dropped and
/// neighbours merged where both layouts allow it. Empty for a single element.
static std::vector<CopyDim> simplifyCopy(const TensorView &dst,
                                         const TensorView &src,
                                         int64_t elementSize) {
  std::vector<CopyDim> dims;
  for (int64_t d = 0; d < dst.rank; ++d) {
    if (dst.sizes[d] == 1)
      continue;
    CopyDim dim{dst.sizes[d], dst.strides[d] * elementSize,
                src.strides[d] * elementSize};
    if (!dims.empty()) {
      CopyDim &outer = dims.back();
      if (outer.dstStride == dim.dstStride * dim.size &&
          outer.srcStride == dim.srcStride * dim.size) {
        outer = {outer.size * dim.size, dim.dstStride, dim.srcStride};
        continue;
      }
    }
    dims.push_back(dim);
  }
  return dims;
}

template <int64_t ElementSize>
static void copyStridedRow(char *dst, const char *src, int64_t count,
                           int64_t dstStride, int64_t srcStride) {
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(dst + i * dstStride, src + i * srcStride, ElementSize);
}

/// Copies `count` elements of `elementSize` bytes with the given byte strides;
/// the element size is a template argument in the strided loop so that each
/// element is one load and one store.
static void copyRow(char *dst, const char *src, int64_t count,
                    int64_t dstStride, int64_t srcStride, int64_t elementSize) {
  if (dstStride == elementSize && srcStride == elementSize) {
    std::memcpy(dst, src, count * elementSize);
    return;
  }
  switch (elementSize) {
  case 1:
    return copyStridedRow<1>(dst, src, count, dstStride, srcStride);
  case 2:
    return copyStridedRow<2>(dst, src, count, dstStride, srcStride);
  case 4:
    return copyStridedRow<4>(dst, src, count, dstStride, srcStride);
  default:
    return copyStridedRow<8>(dst, src, count, dstStride, srcStride);
  }
}

void ovlrt::copyView(const TensorView &dst, const TensorView &src) {
  if (!sameType(dst, src))
    fatal("internal error: copy between " + formatType(src) + " and " +
          formatType(dst));
  if (numElements(dst) == 0)
    return;
  int64_t elementSize = dtypeSize(dst.dtype);
  std::vector<CopyDim> dims = simplifyCopy(dst, src, elementSize);
  char *dstBase = static_cast<char *>(dst.data);
  const char *srcBase = static_cast<const char *>(src.data);
  if (dims.empty()) {
    std::memcpy(dstBase, srcBase, elementSize);
    return;
  }
  const CopyDim &inner = dims.back();
  int64_t outerRank = static_cast<int64_t>(dims.size()) - 1;
  std::vector<int64_t> index(outerRank, 0);
  int64_t dstOffset = 0, srcOffset = 0;
  while (true) {
    copyRow(dstBase + dstOffset, srcBase + srcOffset, inner.size,
            inner.dstStride, inner.srcStride, elementSize);
    // Advance the outer index like an odometer, keeping the offsets in step.
    int64_t d = outerRank - 1;
    for (; d >= 0; --d) {
      dstOffset += dims[d].dstStride;
      srcOffset += dims[d].srcStride;
      if (++index[d] < dims[d].size)
        break;
      dstOffset -= dims[d].dstStride * dims[d].size;
      srcOffset -= dims[d].srcStride * dims[d].size;
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}

OwnedView::OwnedView(const TensorView &view)
    : data(view.data), dtype(view.dtype),
      sizes(view.sizes, view.sizes + view.rank),
      strides(view.strides, view.strides + view.rank) {}

OwnedView OwnedView::contiguous(void *data, DType dtype,
                                std::vector<int64_t> sizes) {
  OwnedView result;
  result.data = data;
  result.dtype = dtype;
  result.strides.assign(sizes.size(), 1);
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 2; d >= 0; --d)
    result.strides[d] = result.strides[d + 1] * sizes[d + 1];
  result.sizes = std::move(sizes);
  return result;
}

OwnedView OwnedView::slice(int64_t dim, int64_t offset, int64_t size) const {
  OwnedView result = *this;
  // An empty view may have no data; there is nothing to offset then.
  if (data)
    result.data =
        static_cast<char *>(data) + offset * strides[dim] * dtypeSize(dtype);
  result.sizes[dim] = size;
  return result;
}

TensorView OwnedView::view() const {
  return {data, dtype, static_cast<int64_t>(sizes.size()), sizes.data(),
          strides.data()};
}
