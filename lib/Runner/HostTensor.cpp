//===- HostTensor.cpp - Dense tensors in host memory ----------------------===//

#include "OverlapDialect/Runner/HostTensor.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

#include <cassert>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

using namespace overlap;
using ovlrt::DType;

int64_t TensorType::numElements() const {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

int64_t TensorType::numBytes() const {
  return numElements() * ovlrt::dtypeSize(dtype);
}

std::string TensorType::str() const {
  std::string text;
  for (int64_t size : shape)
    text += std::to_string(size) + "x";
  return text + ovlrt::dtypeName(dtype);
}

void HostTensor::Free::operator()(void *pointer) const { std::free(pointer); }

HostTensor::HostTensor(TensorType type) : tensorType(std::move(type)) {
  // aligned_alloc wants a multiple of the alignment; never zero bytes.
  size_t bytes = (tensorType.numBytes() + 63) / 64 * 64;
  storage.reset(std::aligned_alloc(64, bytes ? bytes : 64));
  // Callers check the memory a run needs up front (Runner/Report.h); an
  // allocation that still fails ends the process with a message, not a
  // fault in memset.
  if (!storage)
    llvm::reportFatalUsageError("cannot allocate " + llvm::Twine(bytes) +
                                " bytes for a " + tensorType.str() + " tensor");
  std::memset(storage.get(), 0, bytes ? bytes : 64);
}

HostTensor::HostTensor(const HostTensor &other) : HostTensor(other.type()) {
  std::memcpy(data(), other.data(), tensorType.numBytes());
}

HostTensor &HostTensor::operator=(const HostTensor &other) {
  if (this != &other)
    *this = HostTensor(other);
  return *this;
}

bool overlap::sameBits(const std::vector<HostTensor> &a,
                       const std::vector<HostTensor> &b) {
  return a.size() == b.size() &&
         llvm::all_of(llvm::zip(a, b), [](const auto &pair) {
           const auto &[x, y] = pair;
           return x.type() == y.type() &&
                  std::memcmp(x.data(), y.data(), x.type().numBytes()) == 0;
         });
}

double HostTensor::getAsDouble(int64_t index) const {
  const char *base = static_cast<const char *>(data());
  switch (tensorType.dtype) {
  case DType::F32:
    return reinterpret_cast<const float *>(base)[index];
  case DType::F64:
    return reinterpret_cast<const double *>(base)[index];
  case DType::F16:
    return ovlrt::halfToFloat(reinterpret_cast<const uint16_t *>(base)[index]);
  case DType::BF16:
    return ovlrt::bfloat16ToFloat(
        reinterpret_cast<const uint16_t *>(base)[index]);
  case DType::I8:
  case DType::I16:
  case DType::I32:
  case DType::I64:
    return static_cast<double>(getAsInt64(index));
  }
  return 0;
}

void HostTensor::setFromDouble(int64_t index, double value) {
  char *base = static_cast<char *>(data());
  switch (tensorType.dtype) {
  case DType::F32:
    reinterpret_cast<float *>(base)[index] = static_cast<float>(value);
    return;
  case DType::F64:
    reinterpret_cast<double *>(base)[index] = value;
    return;
  case DType::F16:
    reinterpret_cast<uint16_t *>(base)[index] =
        ovlrt::floatToHalf(static_cast<float>(value));
    return;
  case DType::BF16:
    reinterpret_cast<uint16_t *>(base)[index] =
        ovlrt::floatToBFloat16(static_cast<float>(value));
    return;
  case DType::I8:
    reinterpret_cast<int8_t *>(base)[index] =
        static_cast<int8_t>(std::lround(value));
    return;
  case DType::I16:
    reinterpret_cast<int16_t *>(base)[index] =
        static_cast<int16_t>(std::lround(value));
    return;
  case DType::I32:
    reinterpret_cast<int32_t *>(base)[index] =
        static_cast<int32_t>(std::lround(value));
    return;
  case DType::I64:
    reinterpret_cast<int64_t *>(base)[index] = std::llround(value);
    return;
  }
}

bool overlap::isIntegerType(DType type) {
  return type == DType::I8 || type == DType::I16 || type == DType::I32 ||
         type == DType::I64;
}

bool overlap::fitsInteger(DType type, int64_t value) {
  switch (type) {
  case DType::I8:
    return value >= INT8_MIN && value <= INT8_MAX;
  case DType::I16:
    return value >= INT16_MIN && value <= INT16_MAX;
  case DType::I32:
    return value >= INT32_MIN && value <= INT32_MAX;
  case DType::I64:
    return true;
  default:
    return false;
  }
}

int64_t HostTensor::getAsInt64(int64_t index) const {
  assert(isIntegerType(tensorType.dtype) && "not an integer tensor");
  const char *base = static_cast<const char *>(data());
  switch (tensorType.dtype) {
  case DType::I8:
    return reinterpret_cast<const int8_t *>(base)[index];
  case DType::I16:
    return reinterpret_cast<const int16_t *>(base)[index];
  case DType::I32:
    return reinterpret_cast<const int32_t *>(base)[index];
  default:
    return reinterpret_cast<const int64_t *>(base)[index];
  }
}

void HostTensor::setFromInt64(int64_t index, int64_t value) {
  assert(fitsInteger(tensorType.dtype, value) && "the value does not fit");
  char *base = static_cast<char *>(data());
  switch (tensorType.dtype) {
  case DType::I8:
    reinterpret_cast<int8_t *>(base)[index] = static_cast<int8_t>(value);
    return;
  case DType::I16:
    reinterpret_cast<int16_t *>(base)[index] = static_cast<int16_t>(value);
    return;
  case DType::I32:
    reinterpret_cast<int32_t *>(base)[index] = static_cast<int32_t>(value);
    return;
  default:
    reinterpret_cast<int64_t *>(base)[index] = value;
    return;
  }
}
