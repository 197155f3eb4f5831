//===- Inputs.cpp - Program inputs: random or from .npy files -------------===//

#include "OverlapDialect/Runner/Inputs.h"
#include "OverlapDialect/Support/BoundedFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <cstring>

using namespace overlap;
using ovlrt::DType;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// SplitMix64: a fixed, platform-independent hash of the element's position.
static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

static bool isFloat(DType type) {
  return type == DType::F32 || type == DType::F64 || type == DType::F16 ||
         type == DType::BF16;
}

DeviceTensors overlap::makeRandomInputs(const std::vector<TensorType> &types,
                                        int64_t numDevices, uint64_t seed) {
  DeviceTensors inputs(numDevices);
  for (int64_t device = 0; device < numDevices; ++device) {
    for (size_t arg = 0; arg < types.size(); ++arg) {
      HostTensor tensor(types[arg]);
      uint64_t stream = mix(mix(mix(seed) ^ device) ^ arg);
      for (int64_t i = 0, e = types[arg].numElements(); i < e; ++i) {
        uint64_t bits = mix(stream ^ static_cast<uint64_t>(i));
        double value =
            isFloat(types[arg].dtype)
                ? static_cast<double>(bits >> 11) * 0x1.0p-52 - 1.0
                : static_cast<double>(static_cast<int64_t>(bits % 16) - 8);
        tensor.setFromDouble(i, value);
      }
      inputs[device].push_back(std::move(tensor));
    }
  }
  return inputs;
}

/// NumPy's descr of a runtime type.
static const char *npyDescr(DType type) {
  switch (type) {
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  case DType::F16:
    return "<f2";
  case DType::BF16:
    return "<u2";
  case DType::I8:
    return "|i1";
  case DType::I16:
    return "<i2";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  }
  return "";
}

llvm::Error overlap::writeNpy(llvm::StringRef path, const HostTensor &tensor) {
  std::string shape;
  for (int64_t size : tensor.type().shape)
    shape += std::to_string(size) + ", ";
  if (tensor.type().shape.size() > 1)
    shape.erase(shape.size() - 2);
  else if (tensor.type().shape.size() == 1)
    shape.erase(shape.size() - 1);
  std::string header = std::string("{'descr': '") +
                       npyDescr(tensor.type().dtype) +
                       "', 'fortran_order': False, 'shape': (" + shape + "), }";
  // Magic (6) + version (2) + length (2) + header + '\n', padded to 64.
  size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header.push_back('\n');

  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return makeError("cannot write " + path + ": " + ec.message());
  out << "\x93NUMPY" << '\x01' << '\x00';
  out << static_cast<char>(header.size() & 0xff)
      << static_cast<char>(header.size() >> 8) << header;
  out.write(static_cast<const char *>(tensor.data()), tensor.type().numBytes());
  return llvm::Error::success();
}

/// The value of `key` in a NumPy header dict, up to the next ',' or ')'.
static llvm::StringRef headerField(llvm::StringRef header,
                                   llvm::StringRef key) {
  size_t pos = header.find("'" + key.str() + "'");
  if (pos == llvm::StringRef::npos)
    return "";
  llvm::StringRef rest = header.drop_front(pos + key.size() + 2).ltrim(" :");
  if (rest.starts_with("("))
    return rest.drop_front().take_until([](char c) { return c == ')'; });
  return rest.take_until([](char c) { return c == ','; }).trim(" '");
}

/// The `T` stored (little-endian, unaligned) at `element`.
template <typename T> static T loadAs(const char *element) {
  T value;
  std::memcpy(&value, element, sizeof(T));
  return value;
}

/// An element of an integer .npy `descr`, exactly.
static int64_t readInteger(llvm::StringRef descr, const char *element) {
  if (descr == "|i1")
    return loadAs<int8_t>(element);
  if (descr == "|u1")
    return loadAs<uint8_t>(element);
  if (descr == "<u2")
    return loadAs<uint16_t>(element);
  if (descr == "<i2")
    return loadAs<int16_t>(element);
  if (descr == "<i4")
    return loadAs<int32_t>(element);
  return loadAs<int64_t>(element);
}

/// `value` with the digits that tell it apart from any other double.
static std::string printExactly(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

/// An element of a float .npy `descr`, exactly.
static double readFloat(llvm::StringRef descr, const char *element) {
  if (descr == "<f4")
    return loadAs<float>(element);
  if (descr == "<f2")
    return ovlrt::halfToFloat(loadAs<uint16_t>(element));
  return loadAs<double>(element);
}

llvm::Expected<HostTensor> overlap::readNpy(llvm::StringRef path,
                                            const TensorType &expected) {
  // The widest element an .npy may hold for a tensor is 8 bytes (f64 for
  // f32), after a header of at most 4 GiB that a version 2 length allows
  // but no writer makes: 1 MiB is plenty.
  constexpr uint64_t kMaxHeaderBytes = 1 << 20;
  auto file = readBoundedFile(
      path,
      kMaxHeaderBytes + 8 * static_cast<uint64_t>(expected.numElements()));
  if (!file)
    return makeError("cannot read " + path + ": " +
                     llvm::toString(file.takeError()));
  llvm::StringRef bytes = (*file)->getBuffer();
  if (!bytes.starts_with("\x93NUMPY") || bytes.size() < 10)
    return makeError(path + " is not an .npy file");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  size_t lengthBytes = major == 1 ? 2 : 4;
  size_t headerLength = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLength |=
        static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i]))
        << (8 * i);
  size_t dataStart = 8 + lengthBytes + headerLength;
  if (bytes.size() < dataStart)
    return makeError(path + ": truncated header");
  llvm::StringRef header = bytes.substr(8 + lengthBytes, headerLength);
  if (headerField(header, "fortran_order") == "True")
    return makeError(path + ": Fortran-ordered arrays are not supported");

  std::vector<int64_t> shape;
  llvm::SmallVector<llvm::StringRef> sizes;
  headerField(header, "shape").split(sizes, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef size : sizes) {
    int64_t value;
    if (size.trim().getAsInteger(10, value))
      return makeError(path + ": malformed shape in the header");
    shape.push_back(value);
  }
  if (shape != expected.shape) {
    TensorType found{expected.dtype, shape};
    return makeError(path + " holds shape " + found.str() +
                     " but the program expects " + expected.str());
  }

  llvm::StringRef descr = headerField(header, "descr");
  struct Source {
    const char *descr;
    int bytes;
    bool isFloat;
  };
  static const Source sources[] = {
      {"<f4", 4, true},  {"<f8", 8, true},  {"<f2", 2, true},
      {"<u2", 2, false}, {"|i1", 1, false}, {"<i2", 2, false},
      {"<i4", 4, false}, {"<i8", 8, false}, {"|u1", 1, false}};
  const Source *source = nullptr;
  for (const Source &candidate : sources)
    if (descr == candidate.descr)
      source = &candidate;
  if (!source)
    return makeError(path + ": unsupported dtype '" + descr + "'");
  HostTensor tensor(expected);
  int64_t count = expected.numElements();
  if (bytes.size() < dataStart + count * source->bytes)
    return makeError(path + ": truncated data");
  const char *data = bytes.data() + dataStart;

  // Same type (bf16 travels as raw '<u2' patterns): copy the bytes.
  if (descr == npyDescr(expected.dtype)) {
    std::memcpy(tensor.data(), data, count * source->bytes);
    return std::move(tensor);
  }
  if (expected.dtype == DType::BF16 && descr == "<u2") {
    std::memcpy(tensor.data(), data, count * 2);
    return std::move(tensor);
  }
  if (source->isFloat != isFloat(expected.dtype))
    return makeError(path + " holds " + descr +
                     " data but the program "
                     "expects " +
                     ovlrt::dtypeName(expected.dtype));
  // Another width of the same kind: converted only where every value is
  // exact in the program's type, so that no input is silently changed.
  for (int64_t i = 0; i < count; ++i) {
    const char *element = data + i * source->bytes;
    if (!source->isFloat) {
      int64_t value = readInteger(descr, element);
      if (!fitsInteger(expected.dtype, value))
        return makeError(path + ": element " + llvm::Twine(i) + " (" +
                         llvm::Twine(value) + ") does not fit " +
                         ovlrt::dtypeName(expected.dtype) +
                         "; write the file as " + npyDescr(expected.dtype));
      tensor.setFromInt64(i, value);
      continue;
    }
    double value = readFloat(descr, element);
    tensor.setFromDouble(i, value);
    double stored = tensor.getAsDouble(i);
    if (!(stored == value || (std::isnan(stored) && std::isnan(value))))
      return makeError(path + ": element " + llvm::Twine(i) + " (" +
                       printExactly(value) + ") is not exact in " +
                       ovlrt::dtypeName(expected.dtype) + " (it would be " +
                       printExactly(stored) + "); write the file as " +
                       npyDescr(expected.dtype));
  }
  return std::move(tensor);
}
