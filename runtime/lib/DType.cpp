//===- DType.cpp - Element types and reductions ---------------------------===//
//
// Element sizes and names, the binary16/bfloat16 conversions, and the
// deterministic elementwise reduction. Reductions run over blocks of
// elements with an accumulator in the compute type (float for the 16-bit
// floats, a same-width unsigned type for integer sums and products so that
// overflow wraps instead of being undefined), always folding the inputs in
// the order given.
//
//===----------------------------------------------------------------------===//

#include "ovlrt/DType.h"

#include "ovlrt/Errors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

using namespace ovlrt;

bool ovlrt::isValidDType(int64_t value) {
  return value >= static_cast<int64_t>(DType::F32) &&
         value <= static_cast<int64_t>(DType::I64);
}

bool ovlrt::isValidReduction(int64_t value) {
  return value >= static_cast<int64_t>(Reduction::Sum) &&
         value <= static_cast<int64_t>(Reduction::Min);
}

int64_t ovlrt::dtypeSize(DType type) {
  switch (type) {
  case DType::I8:
    return 1;
  case DType::F16:
  case DType::BF16:
  case DType::I16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  }
  fatal("invalid element type " + std::to_string(static_cast<int>(type)));
}

const char *ovlrt::dtypeName(DType type) {
  switch (type) {
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I8:
    return "i8";
  case DType::I16:
    return "i16";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  }
  return "<invalid element type>";
}

const char *ovlrt::reductionName(Reduction reduction) {
  switch (reduction) {
  case Reduction::Sum:
    return "sum";
  case Reduction::Prod:
    return "prod";
  case Reduction::Max:
    return "max";
  case Reduction::Min:
    return "min";
  }
  return "<invalid reduction>";
}

//===----------------------------------------------------------------------===//
// 16-bit floats
//===----------------------------------------------------------------------===//

static uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

static float bitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

float ovlrt::halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24 is exact in float.
    float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return bitsToFloat(floatBits(magnitude) | sign);
  }
  if (exponent == 0x1f)
    return bitsToFloat(sign | 0x7f800000 | (mantissa << 13));
  return bitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t ovlrt::floatToHalf(float value) {
  uint32_t bits = floatBits(value);
  uint32_t sign = bits & 0x80000000u;
  bits ^= sign;
  uint16_t result;
  if (bits >= (127u + 16) << 23) {
    // |value| >= 2^16, infinity or NaN.
    result = bits > 0x7f800000u ? 0x7e00 : 0x7c00;
  } else if (bits < 113u << 23) {
    // Below the smallest normal half (2^-14): adding 0.5 makes the FPU round
    // the value to a multiple of 2^-24, i.e. to the half subnormal grid, with
    // its own round-to-nearest-even.
    const uint32_t magic = ((127u - 15) + (23 - 10) + 1) << 23;
    float shifted = bitsToFloat(bits) + bitsToFloat(magic);
    result = static_cast<uint16_t>(floatBits(shifted) - magic);
  } else {
    // Rebias the exponent and round the 13 dropped mantissa bits to nearest
    // even; a carry out of the mantissa correctly bumps the exponent (up to
    // infinity for values in [65520, 65536)).
    uint32_t mantissaOdd = (bits >> 13) & 1;
    bits += ((15u - 127u) << 23) + 0xfff + mantissaOdd;
    result = static_cast<uint16_t>(bits >> 13);
  }
  return static_cast<uint16_t>(result | (sign >> 16));
}

float ovlrt::bfloat16ToFloat(uint16_t bits) {
  return bitsToFloat(static_cast<uint32_t>(bits) << 16);
}

uint16_t ovlrt::floatToBFloat16(float value) {
  uint32_t bits = floatBits(value);
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  uint32_t lsb = (bits >> 16) & 1;
  bits += 0x7fff + lsb;
  return static_cast<uint16_t>(bits >> 16);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

namespace {

/// How one storage type is loaded into and stored from the type it is
/// combined in.
template <typename Storage, typename Compute> struct Plain {
  using StorageType = Storage;
  using ComputeType = Compute;
  static Compute load(Storage value) { return static_cast<Compute>(value); }
  static Storage store(Compute value) { return static_cast<Storage>(value); }
};

struct Half {
  using StorageType = uint16_t;
  using ComputeType = float;
  static float load(uint16_t value) { return halfToFloat(value); }
  static uint16_t store(float value) { return floatToHalf(value); }
};

struct BFloat16 {
  using StorageType = uint16_t;
  using ComputeType = float;
  static float load(uint16_t value) { return bfloat16ToFloat(value); }
  static uint16_t store(float value) { return floatToBFloat16(value); }
};

/// Integers: sums and products in an unsigned type at least as wide as int
/// (so that no promotion to signed int can overflow), comparisons signed.
template <typename Signed> struct WrappingInt {
  using StorageType = Signed;
  using ComputeType =
      std::conditional_t<sizeof(Signed) <= 4, uint32_t, uint64_t>;
  static ComputeType load(Signed value) {
    return static_cast<ComputeType>(value);
  }
  static Signed store(ComputeType value) { return static_cast<Signed>(value); }
};

template <typename T> bool isNaN(T value) { return value != value; }

struct SumOp {
  template <typename T> static T apply(T a, T b) { return a + b; }
};
struct ProdOp {
  template <typename T> static T apply(T a, T b) { return a * b; }
};

/// Max and min compare floats as floats (NaN wins) and integers as signed
/// values of the storage width.
template <typename Traits, bool IsMax> struct CompareOp {
  template <typename T> static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      if (isNaN(a))
        return a;
      if (isNaN(b))
        return b;
      return (IsMax ? a >= b : a <= b) ? a : b;
    } else {
      typename Traits::StorageType x = Traits::store(a), y = Traits::store(b);
      return (IsMax ? x >= y : x <= y) ? a : b;
    }
  }
};

/// Elements per block: the accumulator block lives on the stack.
constexpr int64_t kBlock = 512;

template <typename Traits, typename Op>
void reduceTyped(const void *const *inputs, int64_t numInputs, void *out,
                 int64_t numElements) {
  using Storage = typename Traits::StorageType;
  using Compute = typename Traits::ComputeType;
  Compute acc[kBlock];
  for (int64_t begin = 0; begin < numElements; begin += kBlock) {
    int64_t count = std::min(kBlock, numElements - begin);
    const Storage *first = static_cast<const Storage *>(inputs[0]) + begin;
    for (int64_t e = 0; e < count; ++e)
      acc[e] = Traits::load(first[e]);
    for (int64_t i = 1; i < numInputs; ++i) {
      const Storage *src = static_cast<const Storage *>(inputs[i]) + begin;
      for (int64_t e = 0; e < count; ++e)
        acc[e] = Op::apply(acc[e], Traits::load(src[e]));
    }
    Storage *dst = static_cast<Storage *>(out) + begin;
    for (int64_t e = 0; e < count; ++e)
      dst[e] = Traits::store(acc[e]);
  }
}

template <typename Traits>
void reduceWith(Reduction reduction, const void *const *inputs,
                int64_t numInputs, void *out, int64_t numElements) {
  switch (reduction) {
  case Reduction::Sum:
    return reduceTyped<Traits, SumOp>(inputs, numInputs, out, numElements);
  case Reduction::Prod:
    return reduceTyped<Traits, ProdOp>(inputs, numInputs, out, numElements);
  case Reduction::Max:
    return reduceTyped<Traits, CompareOp<Traits, true>>(inputs, numInputs, out,
                                                        numElements);
  case Reduction::Min:
    return reduceTyped<Traits, CompareOp<Traits, false>>(inputs, numInputs, out,
                                                         numElements);
  }
  fatal("invalid reduction " + std::to_string(static_cast<int>(reduction)));
}

} // namespace

void ovlrt::reduceBuffers(DType type, Reduction reduction,
                          const void *const *inputs, int64_t numInputs,
                          void *out, int64_t numElements) {
  if (numInputs <= 0 || numElements <= 0)
    return;
  switch (type) {
  case DType::F32:
    return reduceWith<Plain<float, float>>(reduction, inputs, numInputs, out,
                                           numElements);
  case DType::F64:
    return reduceWith<Plain<double, double>>(reduction, inputs, numInputs, out,
                                             numElements);
  case DType::F16:
    return reduceWith<Half>(reduction, inputs, numInputs, out, numElements);
  case DType::BF16:
    return reduceWith<BFloat16>(reduction, inputs, numInputs, out, numElements);
  case DType::I8:
    return reduceWith<WrappingInt<int8_t>>(reduction, inputs, numInputs, out,
                                           numElements);
  case DType::I16:
    return reduceWith<WrappingInt<int16_t>>(reduction, inputs, numInputs, out,
                                            numElements);
  case DType::I32:
    return reduceWith<WrappingInt<int32_t>>(reduction, inputs, numInputs, out,
                                            numElements);
  case DType::I64:
    return reduceWith<WrappingInt<int64_t>>(reduction, inputs, numInputs, out,
                                            numElements);
  }
  fatal("invalid element type " + std::to_string(static_cast<int>(type)));
}
