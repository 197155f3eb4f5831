//===- CompileCache.h - Compiled programs kept on disk ----------*- C++ -*-===//
//
// An on-disk cache of the object files Program::compile makes, keyed by a
// hash of everything that determines the object, so that running the same
// program again skips the lowering and code generation (docs/Runtime.md,
// "The compile cache").
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_RUNNER_COMPILECACHE_H
#define OVERLAPDIALECT_RUNNER_COMPILECACHE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class MemoryBuffer;
class raw_ostream;
} // namespace llvm

namespace overlap {

/// How a compile used the cache.
enum class CacheUse {
  /// No cache (--no-cache, or no folder for it).
  Off,
  /// The object came from the cache: nothing was lowered or compiled.
  Hit,
  /// Compiled, and stored unless a warning says otherwise.
  Miss,
};

/// "off", "hit" or "miss".
llvm::StringRef stringifyCacheUse(CacheUse use);

/// Where a compile cache lives and how large it may grow.
struct CompileCacheOptions {
  /// The folder; empty means no cache.
  std::string dir;
  /// After a store, the least recently used entries are removed while all
  /// entries together hold more bytes than this.
  uint64_t limitBytes = uint64_t(1024) << 20;
};

/// The cache of the environment: the folder `$OVERLAP_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/overlap`, else `~/.cache/overlap` (empty when there is
/// no home either), and the limit `$OVERLAP_CACHE_SIZE_MIB` (default 1024).
/// A limit that is not a whole number of MiB is an error.
llvm::Expected<CompileCacheOptions> compileCacheOptionsFromEnvironment();

/// The key of a compiled object.
using CacheKey = std::array<uint8_t, 32>;

/// Builds a key from labelled parts. Each part is hashed with its label and
/// length, so that no two different lists of parts give the same key.
class CacheKeyBuilder {
public:
  CacheKeyBuilder();
  void add(llvm::StringRef label, llvm::StringRef value);
  /// Adds the hash of what `write` prints: large parts (a module) are
  /// streamed rather than held in memory.
  void addPrinted(llvm::StringRef label,
                  llvm::function_ref<void(llvm::raw_ostream &)> write);
  CacheKey finish();

private:
  llvm::BLAKE3 hasher;
};

/// Identifies the code at each of `addresses`: the GNU build ID of the
/// executable or shared library holding it or, for one built without, its
/// path, size and modification time. A rebuilt library gets a new identity.
std::string identifyCode(llvm::ArrayRef<const void *> addresses);

/// An on-disk cache of object files. An entry is the file `<key in
/// hex>.ovlobj`: a header (magic, key, the object's size and BLAKE3 hash)
/// and the object. Entries are written to a temporary file renamed into
/// place, so that concurrent readers see whole entries or none; an entry
/// whose header does not match its content is ignored (and replaced by the
/// next store). No failure of the cache is an error: it is a warning, and
/// the compile goes on without it.
class CompileCache {
public:
  explicit CompileCache(CompileCacheOptions options);

  /// The object stored under `key`, or null when there is none or it is
  /// damaged (a warning says so). A hit marks the entry as recently used.
  std::unique_ptr<llvm::MemoryBuffer> load(const CacheKey &key);

  /// Stores `object` under `key`, then removes the least recently used
  /// other entries while the cache exceeds its limit, and temporary files
  /// that writers which died left behind.
  void store(const CacheKey &key, llvm::StringRef object);

  /// What went wrong so far, one message each.
  const std::vector<std::string> &getWarnings() const { return warnings; }

private:
  std::string entryPath(const CacheKey &key) const;
  void trim(llvm::StringRef kept);

  CompileCacheOptions options;
  std::vector<std::string> warnings;
};

} // namespace overlap

#endif // OVERLAPDIALECT_RUNNER_COMPILECACHE_H
