//===- BoundedFile.cpp - Files read only when they end soon ---------------===//

#include "OverlapDialect/Support/BoundedFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

Expected<std::unique_ptr<MemoryBuffer>>
overlap::readBoundedFile(StringRef path, uint64_t maxBytes, bool isText) {
  auto fail = [](const Twine &why) {
    return createStringError(inconvertibleErrorCode(), why);
  };
  sys::fs::file_status status;
  if (std::error_code error = sys::fs::status(path, status))
    return fail(error.message());
  if (status.type() != sys::fs::file_type::regular_file)
    return fail("not a regular file (a pipe, device or socket may never "
                "end)");
  if (status.getSize() > maxBytes)
    return fail(formatv("{0} bytes, more than the {1} read", status.getSize(),
                        maxBytes));
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(path, isText, /*RequiresNullTerminator=*/true);
  if (!buffer)
    return fail(buffer.getError().message());
  // The file may have grown between the check and the read.
  if ((*buffer)->getBufferSize() > maxBytes)
    return fail(formatv("more than the {0} bytes read", maxBytes));
  return std::move(*buffer);
}

Expected<std::unique_ptr<MemoryBuffer>>
overlap::readProgramFile(StringRef path) {
  auto fail = [](const Twine &why) {
    return createStringError(inconvertibleErrorCode(), why);
  };
  sys::fs::file_status status;
  if (path != "-" && !sys::fs::status(path, status) &&
      status.type() == sys::fs::file_type::regular_file)
    return readBoundedFile(path, kMaxProgramBytes);
  sys::fs::file_t handle = sys::fs::getStdinHandle();
  if (path != "-") {
    Expected<sys::fs::file_t> opened = sys::fs::openNativeFileForRead(path);
    if (!opened)
      return opened.takeError();
    handle = *opened;
  }
  SmallVector<char, 0> text;
  Error error = Error::success();
  for (;;) {
    size_t size = text.size();
    text.resize_for_overwrite(size + (1 << 16));
    Expected<size_t> read = sys::fs::readNativeFile(
        handle, MutableArrayRef<char>(text).drop_front(size));
    if (!read) {
      error = read.takeError();
      break;
    }
    text.truncate(size + *read);
    if (*read == 0)
      break;
    if (text.size() > kMaxProgramBytes) {
      error = fail(formatv("more than the {0} bytes a program may hold",
                           kMaxProgramBytes));
      break;
    }
  }
  if (path != "-")
    sys::fs::closeFile(handle);
  if (error)
    return std::move(error);
  return MemoryBuffer::getMemBufferCopy(StringRef(text.data(), text.size()),
                                        path == "-" ? "<stdin>" : path);
}
