//===- CompileCache.cpp - Compiled programs kept on disk ------------------===//
//
// Entries are read with read(2) rather than mapped: a file truncated by
// someone else while mapped would raise SIGBUS, where a read sees the short
// file and the header check refuses it.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Runner/CompileCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <link.h>

using namespace llvm;
using namespace overlap;

StringRef overlap::stringifyCacheUse(CacheUse use) {
  switch (use) {
  case CacheUse::Off:
    return "off";
  case CacheUse::Hit:
    return "hit";
  case CacheUse::Miss:
    return "miss";
  }
  llvm_unreachable("unknown CacheUse");
}

Expected<CompileCacheOptions> overlap::compileCacheOptionsFromEnvironment() {
  CompileCacheOptions options;
  if (const char *dir = std::getenv("OVERLAP_CACHE_DIR"); dir && *dir) {
    options.dir = dir;
  } else {
    SmallString<128> path;
    // $XDG_CACHE_HOME, else ~/.cache.
    if (sys::path::cache_directory(path)) {
      sys::path::append(path, "overlap");
      options.dir = path.str().str();
    }
  }
  if (const char *limit = std::getenv("OVERLAP_CACHE_SIZE_MIB");
      limit && *limit) {
    uint64_t mib;
    // The shift below must not overflow.
    if (StringRef(limit).getAsInteger(10, mib) || mib > (uint64_t(1) << 40))
      return createStringError("OVERLAP_CACHE_SIZE_MIB must be a whole "
                               "number of MiB (at most 2^40), not '" +
                               Twine(limit) + "'");
    options.limitBytes = mib << 20;
  }
  return options;
}

CacheKeyBuilder::CacheKeyBuilder() { hasher.init(); }

void CacheKeyBuilder::add(StringRef label, StringRef value) {
  hasher.update(label);
  hasher.update(StringRef("\0", 1));
  uint8_t size[8];
  support::endian::write64le(size, value.size());
  hasher.update(ArrayRef<uint8_t>(size));
  hasher.update(value);
}

namespace {
/// A stream that hashes what is written to it.
class HashingStream : public raw_ostream {
public:
  explicit HashingStream(BLAKE3 &hasher) : hasher(hasher) { SetBuffered(); }
  ~HashingStream() override { flush(); }

private:
  void write_impl(const char *data, size_t size) override {
    hasher.update(StringRef(data, size));
    position += size;
  }
  uint64_t current_pos() const override { return position; }

  BLAKE3 &hasher;
  uint64_t position = 0;
};
} // namespace

void CacheKeyBuilder::addPrinted(StringRef label,
                                 function_ref<void(raw_ostream &)> write) {
  BLAKE3 printed;
  {
    HashingStream os(printed);
    write(os);
  }
  BLAKE3Result<32> digest = printed.final();
  add(label, toHex(digest));
}

CacheKey CacheKeyBuilder::finish() { return hasher.final(); }

namespace {
struct CodeSearch {
  uintptr_t address;
  std::string identity;
};
} // namespace

/// The GNU build ID in a PT_NOTE segment of `info`, or "".
static std::string findBuildId(const dl_phdr_info &info,
                               const ElfW(Phdr) & segment) {
  uint64_t align = std::max<uint64_t>(segment.p_align, 4);
  const char *at =
      reinterpret_cast<const char *>(info.dlpi_addr + segment.p_vaddr);
  const char *end = at + segment.p_memsz;
  while (at + sizeof(ElfW(Nhdr)) <= end) {
    const auto *note = reinterpret_cast<const ElfW(Nhdr) *>(at);
    const char *name = at + sizeof(ElfW(Nhdr));
    const char *desc = name + alignTo(note->n_namesz, align);
    if (desc + note->n_descsz > end)
      break;
    if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
        std::memcmp(name, "GNU", 4) == 0)
      return toHex(StringRef(desc, note->n_descsz), /*LowerCase=*/true);
    at = desc + alignTo(note->n_descsz, align);
  }
  return "";
}

static int identifyObject(dl_phdr_info *info, size_t, void *data) {
  auto *search = static_cast<CodeSearch *>(data);
  bool holds = false;
  for (const ElfW(Phdr) &segment :
       ArrayRef(info->dlpi_phdr, info->dlpi_phnum)) {
    uintptr_t start = info->dlpi_addr + segment.p_vaddr;
    holds |= segment.p_type == PT_LOAD && search->address >= start &&
             search->address - start < segment.p_memsz;
  }
  if (!holds)
    return 0;
  for (const ElfW(Phdr) &segment :
       ArrayRef(info->dlpi_phdr, info->dlpi_phnum)) {
    if (segment.p_type != PT_NOTE)
      continue;
    std::string id = findBuildId(*info, segment);
    if (!id.empty()) {
      search->identity = "build-id " + id;
      return 1;
    }
  }
  // The main executable has no name here.
  std::string path = *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
  sys::fs::file_status status;
  search->identity = path;
  if (!sys::fs::status(path, status))
    search->identity +=
        formatv(" {0} bytes, modified {1}", status.getSize(),
                status.getLastModificationTime().time_since_epoch().count())
            .str();
  return 1;
}

std::string overlap::identifyCode(ArrayRef<const void *> addresses) {
  std::vector<std::string> identities;
  for (const void *address : addresses) {
    CodeSearch search{reinterpret_cast<uintptr_t>(address), "unknown"};
    dl_iterate_phdr(identifyObject, &search);
    identities.push_back(search.identity);
  }
  llvm::sort(identities);
  identities.erase(std::unique(identities.begin(), identities.end()),
                   identities.end());
  return join(identities, "; ");
}

/// The header of an entry: magic, key, object size, object hash.
static constexpr StringLiteral kMagic = "OVLOBJ1\n";
static constexpr size_t kHeaderSize = 8 + 32 + 8 + 32;
static constexpr StringLiteral kEntrySuffix = ".ovlobj";
/// Temporary files are `<key>.ovlobj.tmp-` and 8 random characters; those
/// older than this belong to a writer that died.
static constexpr StringLiteral kTemporaryMarker = ".tmp-";
static constexpr std::chrono::hours kStaleTemporary(1);

CompileCache::CompileCache(CompileCacheOptions options)
    : options(std::move(options)) {}

std::string CompileCache::entryPath(const CacheKey &key) const {
  SmallString<256> path(options.dir);
  sys::path::append(path, toHex(key, /*LowerCase=*/true) + kEntrySuffix);
  return path.str().str();
}

std::unique_ptr<MemoryBuffer> CompileCache::load(const CacheKey &key) {
  std::string path = entryPath(key);
  Expected<sys::fs::file_t> file = sys::fs::openNativeFileForRead(path);
  if (!file) {
    consumeError(file.takeError());
    return nullptr;
  }
  ErrorOr<std::unique_ptr<MemoryBuffer>> read = MemoryBuffer::getOpenFile(
      *file, path, /*FileSize=*/-1, /*RequiresNullTerminator=*/false,
      /*IsVolatile=*/true);
  if (!read) {
    sys::fs::closeFile(*file);
    warnings.push_back("cannot read the compile cache entry " + path + ": " +
                       read.getError().message() + "; recompiling");
    return nullptr;
  }
  StringRef bytes = (*read)->getBuffer();
  auto damaged = [&](const Twine &why) {
    sys::fs::closeFile(*file);
    warnings.push_back(("the compile cache entry " + path + " is damaged (" +
                        why + "); recompiling")
                           .str());
    return nullptr;
  };
  if (bytes.size() < kHeaderSize)
    return damaged("shorter than its header");
  if (!bytes.starts_with(kMagic))
    return damaged("no entry header");
  if (bytes.substr(8, 32) !=
      StringRef(reinterpret_cast<const char *>(key.data()), key.size()))
    return damaged("the header names another key");
  uint64_t size = support::endian::read64le(bytes.data() + 40);
  StringRef object = bytes.drop_front(kHeaderSize);
  if (object.size() != size)
    return damaged(formatv("{0} bytes of object, the header says {1}",
                           object.size(), size));
  if (StringRef(bytes.data() + 48, 32) !=
      toStringRef(BLAKE3::hash(arrayRefFromStringRef(object))))
    return damaged("its checksum does not match");
  // Least recently used goes first when the cache is trimmed.
  (void)sys::fs::setLastAccessAndModificationTime(
      *file, std::chrono::system_clock::now());
  sys::fs::closeFile(*file);
  return MemoryBuffer::getMemBufferCopy(object, path);
}

void CompileCache::store(const CacheKey &key, StringRef object) {
  auto fail = [&](const Twine &what, const Twine &why) {
    warnings.push_back(
        ("cannot " + what + ": " + why + "; the compiled program is not cached")
            .str());
  };
  if (std::error_code ec = sys::fs::create_directories(options.dir))
    return fail("create the compile cache " + options.dir, ec.message());
  std::string path = entryPath(key);
  Expected<sys::fs::TempFile> temporary =
      sys::fs::TempFile::create(path + kTemporaryMarker + "%%%%%%%%");
  if (!temporary)
    return fail("write to the compile cache " + options.dir,
                toString(temporary.takeError()));
  uint8_t header[kHeaderSize];
  std::memcpy(header, kMagic.data(), 8);
  std::memcpy(header + 8, key.data(), 32);
  support::endian::write64le(header + 40, object.size());
  BLAKE3Result<32> checksum = BLAKE3::hash(arrayRefFromStringRef(object));
  std::memcpy(header + 48, checksum.data(), 32);
  {
    raw_fd_ostream os(temporary->FD, /*shouldClose=*/false);
    os.write(reinterpret_cast<const char *>(header), kHeaderSize);
    os << object;
    os.flush();
    if (os.has_error()) {
      std::string why = os.error().message();
      os.clear_error();
      consumeError(temporary->discard());
      return fail("write " + temporary->TmpName, why);
    }
  }
  // keep() renames (and on failure removes the temporary file): readers
  // see the whole entry or none.
  if (Error error = temporary->keep(path))
    return fail("write " + path, toString(std::move(error)));
  trim(path);
}

void CompileCache::trim(StringRef kept) {
  struct Entry {
    sys::TimePoint<> used;
    uint64_t size;
    std::string path;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  auto staleBefore = std::chrono::system_clock::now() - kStaleTemporary;
  std::error_code ec;
  for (sys::fs::directory_iterator it(options.dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    StringRef name = sys::path::filename(it->path());
    sys::fs::file_status status;
    if (sys::fs::status(it->path(), status))
      continue;
    if (name.ends_with(kEntrySuffix)) {
      entries.push_back(
          {status.getLastModificationTime(), status.getSize(), it->path()});
      total += status.getSize();
    } else if (name.contains(kEntrySuffix.str() + kTemporaryMarker.str()) &&
               status.getLastModificationTime() < staleBefore) {
      (void)sys::fs::remove(it->path());
    }
  }
  if (total <= options.limitBytes)
    return;
  llvm::sort(entries,
             [](const Entry &a, const Entry &b) { return a.used < b.used; });
  // Another process may remove the same entries: a failed removal is theirs.
  for (const Entry &entry : entries) {
    if (total <= options.limitBytes)
      break;
    if (entry.path == kept)
      continue;
    (void)sys::fs::remove(entry.path);
    total -= entry.size;
  }
}
