//===- TestUtil.h - Helpers for the runtime's tests -------------*- C++ -*-===//
//
// Test tensors that own their storage and can be laid out densely, as a
// window into a larger buffer (whose border must stay untouched), or
// transposed; the expected group of a device on the small grids the tests
// use, spelled out case by case rather than computed the way the runtime
// does; and element conversions for the tested element types.
//
//===----------------------------------------------------------------------===//

#ifndef OVLRT_UNITTESTS_TESTUTIL_H
#define OVLRT_UNITTESTS_TESTUTIL_H

#include "ovlrt/Runtime.h"

#include "gtest/gtest.h"

#include <functional>
#include <string>
#include <vector>

namespace ovlrt::test {

/// bfloat16 stored as its bits, so that tensors of it can be told apart from
/// tensors of uint16_t.
struct BF16 {
  uint16_t bits = 0;
};

template <typename T> DType dtypeOf();
template <> inline DType dtypeOf<float>() { return DType::F32; }
template <> inline DType dtypeOf<double>() { return DType::F64; }
template <> inline DType dtypeOf<int8_t>() { return DType::I8; }
template <> inline DType dtypeOf<int16_t>() { return DType::I16; }
template <> inline DType dtypeOf<int32_t>() { return DType::I32; }
template <> inline DType dtypeOf<int64_t>() { return DType::I64; }
template <> inline DType dtypeOf<BF16>() { return DType::BF16; }

/// Converts a test value (a small integer or a float) to the element type.
template <typename T> T fromDouble(double value) {
  return static_cast<T>(value);
}
template <> inline BF16 fromDouble<BF16>(double value) {
  return {floatToBFloat16(static_cast<float>(value))};
}
template <typename T> double asDouble(T value) {
  return static_cast<double>(value);
}
template <> inline double asDouble<BF16>(BF16 value) {
  return bfloat16ToFloat(value.bits);
}

enum class Layout {
  /// Row-major, no gaps.
  Dense,
  /// A window one element in from every side of a buffer two elements larger
  /// in every dimension.
  Window,
  /// Column-major (strides grow from the first dimension), in a window.
  TransposedWindow,
};

/// Calls fn(index) for every index of `sizes`, row-major order.
void forEachIndex(const std::vector<int64_t> &sizes,
                  const std::function<void(const std::vector<int64_t> &)> &fn);

/// The row-major linear index of `index` in `sizes`.
int64_t linearIndex(const std::vector<int64_t> &sizes,
                    const std::vector<int64_t> &index);

/// A tensor that owns its storage. Elements outside the view (a window's
/// border) are set to `border` and can be checked to be untouched. The
/// default fits every element type (i8 included) and lies outside the test
/// values (integers in -100..100).
template <typename T> class TestTensor {
public:
  TestTensor(std::vector<int64_t> sizes, Layout layout = Layout::Dense,
             T border = fromDouble<T>(-111))
      : sizes(std::move(sizes)), border(border) {
    int64_t rank = static_cast<int64_t>(this->sizes.size());
    int64_t pad = layout == Layout::Dense ? 0 : 2;
    std::vector<int64_t> parent(rank);
    for (int64_t d = 0; d < rank; ++d)
      parent[d] = this->sizes[d] + pad;
    strides.assign(rank, 1);
    if (layout == Layout::TransposedWindow) {
      for (int64_t d = 1; d < rank; ++d)
        strides[d] = strides[d - 1] * parent[d - 1];
    } else {
      for (int64_t d = rank - 2; d >= 0; --d)
        strides[d] = strides[d + 1] * parent[d + 1];
    }
    int64_t total = 1;
    for (int64_t size : parent)
      total *= size;
    storage.assign(total, border);
    for (int64_t d = 0; d < rank; ++d)
      offset += (pad / 2) * strides[d];
  }
  TestTensor(const TestTensor &) = delete;
  TestTensor &operator=(const TestTensor &) = delete;

  T &at(const std::vector<int64_t> &index) {
    int64_t position = offset;
    for (size_t d = 0; d < index.size(); ++d)
      position += index[d] * strides[d];
    return storage[position];
  }

  TensorView view() {
    return {storage.data() + offset, dtypeOf<T>(),
            static_cast<int64_t>(sizes.size()), sizes.data(), strides.data()};
  }

  /// Sets every element to fn(index).
  void fill(const std::function<double(const std::vector<int64_t> &)> &fn) {
    forEachIndex(sizes, [&](const std::vector<int64_t> &index) {
      at(index) = fromDouble<T>(fn(index));
    });
  }

  /// Expects every element to be fn(index) and the border to be untouched.
  void expect(const std::function<double(const std::vector<int64_t> &)> &fn,
              const std::string &what) {
    std::vector<bool> inView(storage.size(), false);
    int mismatches = 0;
    forEachIndex(sizes, [&](const std::vector<int64_t> &index) {
      inView[&at(index) - storage.data()] = true;
      double expected = asDouble(fromDouble<T>(fn(index)));
      double actual = asDouble(at(index));
      if (actual != expected && mismatches++ < 5)
        ADD_FAILURE() << what << ": element " << formatList(index) << " is "
                      << actual << ", expected " << expected;
    });
    for (size_t i = 0; i < storage.size(); ++i)
      if (!inView[i] && asDouble(storage[i]) != asDouble(border) &&
          mismatches++ < 5)
        ADD_FAILURE() << what << ": the border element at " << i
                      << " was overwritten";
  }

  const std::vector<int64_t> sizes;

private:
  T border;
  std::vector<int64_t> strides;
  std::vector<T> storage;
  int64_t offset = 0;
};

/// The group of a device as the tests expect it.
struct ExpectedGroup {
  int64_t index;
  std::vector<int64_t> members;
};

/// Spelled out for 1-D grids [N] with axes [0] and 2-D grids [R, C] with
/// axes [], [0], [1], [0, 1] and [1, 0].
ExpectedGroup expectedGroup(const std::vector<int64_t> &gridShape,
                            const std::vector<int64_t> &axes, int64_t device);

int64_t product(const std::vector<int64_t> &sizes);

/// Pairs {i -> (i + shift) mod n} as a flat list.
std::vector<int64_t> shiftPairs(int64_t n, int64_t shift);
inline PermutePairs pairsOf(const std::vector<int64_t> &flat) {
  return {flat.data(), static_cast<int64_t>(flat.size() / 2)};
}

/// Runs `body` on a threads world of `numDevices` devices.
void runWorld(int64_t numDevices, const std::function<void(Device &)> &body,
              double timeoutSeconds = 30);

} // namespace ovlrt::test

#endif // OVLRT_UNITTESTS_TESTUTIL_H
