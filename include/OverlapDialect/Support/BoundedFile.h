//===- BoundedFile.h - Files read only when they end soon -------*- C++ -*-===//
//
// Every file a tool reads besides its program (a hardware description, an
// input array) is read whole; a FIFO, a device or a socket may never end
// (`--hardware /dev/zero` once grew until the allocator aborted) and a
// regular file may be far larger than what it describes could need. They
// are checked before the first byte is read.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_SUPPORT_BOUNDEDFILE_H
#define OVERLAPDIALECT_SUPPORT_BOUNDEDFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>

namespace overlap {

/// The contents of `path` if it is a regular file of at most `maxBytes`;
/// otherwise an error that says which it is not ("not a regular file ...",
/// "N bytes, more than the M read") or why it cannot be read, without the
/// path, which the caller's message names.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readBoundedFile(llvm::StringRef path, uint64_t maxBytes, bool isText = false);

} // namespace overlap

#endif // OVERLAPDIALECT_SUPPORT_BOUNDEDFILE_H
