//===- BoundedFile.h - Files read only when they end soon -------*- C++ -*-===//
//
// Every file a tool reads besides its program (a hardware description, an
// input array) is read whole; a FIFO, a device or a socket may never end
// (`--hardware /dev/zero` once grew until the allocator aborted) and a
// regular file may be far larger than what it describes could need. They
// are checked before the first byte is read. A program may come through a
// pipe: it is read up to a bound instead.
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

/// The most bytes a program is read with: the largest of the benches (the
/// 1024B model's 142-layer training step) holds a few MB.
constexpr uint64_t kMaxProgramBytes = uint64_t(1) << 28;

/// The program at `path` ("-": standard input). A pipe or standard input may
/// carry a program, so any kind of file is read, but never more than
/// kMaxProgramBytes (`/dev/zero` never ends): beyond, an error, without the
/// path.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readProgramFile(llvm::StringRef path);

} // namespace overlap

#endif // OVERLAPDIALECT_SUPPORT_BOUNDEDFILE_H
