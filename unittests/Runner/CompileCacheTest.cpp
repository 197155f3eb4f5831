//===- CompileCacheTest.cpp - The on-disk cache of compiled objects -------===//

#include "OverlapDialect/Runner/CompileCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

#include "gtest/gtest.h"

#include <chrono>
#include <cstdlib>
#include <optional>

using namespace overlap;
using namespace llvm;

namespace {

/// A fresh folder, removed with what it holds at the end of the test.
class ScratchDir {
public:
  ScratchDir() {
    EXPECT_FALSE(sys::fs::createUniqueDirectory("compile-cache-test", path));
  }
  ~ScratchDir() { sys::fs::remove_directories(path); }
  std::string str() const { return path.str().str(); }

private:
  SmallString<128> path;
};

CacheKey keyOf(StringRef text) {
  CacheKeyBuilder builder;
  builder.add("text", text);
  return builder.finish();
}

std::vector<std::string> entriesIn(const std::string &dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    names.push_back(sys::path::filename(it->path()).str());
  llvm::sort(names);
  return names;
}

std::string onlyEntry(const std::string &dir) {
  std::vector<std::string> names = entriesIn(dir);
  EXPECT_EQ(names.size(), 1u);
  SmallString<128> path(dir);
  sys::path::append(path, names.empty() ? "" : names.front());
  return path.str().str();
}

void setModified(const std::string &path, std::chrono::hours ago) {
  int fd;
  ASSERT_FALSE(sys::fs::openFileForWrite(path, fd, sys::fs::CD_OpenExisting,
                                         sys::fs::OF_Append));
  EXPECT_FALSE(sys::fs::setLastAccessAndModificationTime(
      fd, std::chrono::system_clock::now() - ago));
  sys::fs::closeFile(fd);
}

TEST(CompileCacheTest, KeysTellPartsApart) {
  CacheKeyBuilder a, b, c;
  a.add("x", "yz");
  b.add("xy", "z");
  c.add("x", "yz");
  CacheKey keyA = a.finish();
  EXPECT_NE(keyA, b.finish());
  EXPECT_EQ(keyA, c.finish());
  CacheKeyBuilder printed;
  printed.addPrinted("x", [](raw_ostream &os) { os << "y" << "z"; });
  EXPECT_NE(printed.finish(), keyA);
}

TEST(CompileCacheTest, StoresAndLoads) {
  ScratchDir dir;
  CompileCache cache({dir.str() + "/nested", 1 << 20});
  EXPECT_EQ(cache.load(keyOf("a")), nullptr);
  cache.store(keyOf("a"), "object a");
  std::unique_ptr<MemoryBuffer> loaded = cache.load(keyOf("a"));
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(loaded->getBuffer(), "object a");
  EXPECT_EQ(cache.load(keyOf("b")), nullptr);
  EXPECT_TRUE(cache.getWarnings().empty());
  // One entry, no temporary file left.
  EXPECT_EQ(entriesIn(dir.str() + "/nested").size(), 1u);
}

TEST(CompileCacheTest, DamagedEntriesAreMissesWithAWarning) {
  ScratchDir dir;
  CompileCache cache({dir.str(), 1 << 20});
  cache.store(keyOf("a"), "object a");
  std::string path = onlyEntry(dir.str());
  auto rewrite = [&](function_ref<void(std::string &)> damage) {
    cache.store(keyOf("a"), "object a");
    auto bytes = MemoryBuffer::getFile(path);
    ASSERT_TRUE(bool(bytes));
    std::string data = (*bytes)->getBuffer().str();
    damage(data);
    std::error_code ec;
    raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << data;
  };
  auto expectDamaged = [&](StringRef why) {
    size_t before = cache.getWarnings().size();
    EXPECT_EQ(cache.load(keyOf("a")), nullptr);
    ASSERT_EQ(cache.getWarnings().size(), before + 1);
    EXPECT_NE(cache.getWarnings().back().find(why), std::string::npos)
        << cache.getWarnings().back();
  };
  rewrite([](std::string &data) { data.back() ^= 1; });
  expectDamaged("its checksum does not match");
  rewrite([](std::string &data) { data.pop_back(); });
  expectDamaged("7 bytes of object, the header says 8");
  rewrite([](std::string &data) { data.resize(10); });
  expectDamaged("shorter than its header");
  rewrite([](std::string &data) { data[0] = 'X'; });
  expectDamaged("no entry header");
  // An entry renamed to another key's file.
  cache.store(keyOf("a"), "object a");
  cache.store(keyOf("b"), "object b");
  std::vector<std::string> names = entriesIn(dir.str());
  ASSERT_EQ(names.size(), 2u);
  ASSERT_FALSE(
      sys::fs::rename(dir.str() + "/" + names[0], dir.str() + "/" + names[1]));
  size_t before = cache.getWarnings().size();
  bool aIsMissing = cache.load(keyOf("a")) == nullptr;
  bool bIsMissing = cache.load(keyOf("b")) == nullptr;
  EXPECT_TRUE(aIsMissing && bIsMissing);
  ASSERT_EQ(cache.getWarnings().size(), before + 1);
  EXPECT_NE(cache.getWarnings().back().find("the header names another key"),
            std::string::npos)
      << cache.getWarnings().back();
  // A store replaces the damaged entry.
  cache.store(keyOf("a"), "object a");
  cache.store(keyOf("b"), "object b");
  ASSERT_NE(cache.load(keyOf("a")), nullptr);
  ASSERT_NE(cache.load(keyOf("b")), nullptr);
}

TEST(CompileCacheTest, TrimsTheLeastRecentlyUsed) {
  ScratchDir dir;
  // Room for two entries of 80 header bytes and 100 object bytes.
  CompileCache cache({dir.str(), 400});
  std::string object(100, 'o');
  cache.store(keyOf("a"), object);
  cache.store(keyOf("b"), object);
  std::vector<std::string> names = entriesIn(dir.str());
  ASSERT_EQ(names.size(), 2u);
  for (const std::string &name : names)
    setModified(dir.str() + "/" + name, std::chrono::hours(2));
  // `a` used now: `b` is the least recently used when `c` comes.
  ASSERT_NE(cache.load(keyOf("a")), nullptr);
  cache.store(keyOf("c"), object);
  EXPECT_NE(cache.load(keyOf("a")), nullptr);
  EXPECT_EQ(cache.load(keyOf("b")), nullptr);
  EXPECT_NE(cache.load(keyOf("c")), nullptr);
  EXPECT_TRUE(cache.getWarnings().empty());
}

TEST(CompileCacheTest, AnUnusableFolderIsAWarning) {
  ScratchDir dir;
  std::string file = dir.str() + "/file";
  {
    std::error_code ec;
    raw_fd_ostream os(file, ec);
  }
  CompileCache cache({file + "/cache", 1 << 20});
  EXPECT_EQ(cache.load(keyOf("a")), nullptr);
  cache.store(keyOf("a"), "object a");
  ASSERT_EQ(cache.getWarnings().size(), 1u);
  EXPECT_NE(cache.getWarnings().front().find("cannot create the compile cache"),
            std::string::npos);
}

/// Sets (or with null, unsets) an environment variable for a scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name(name) {
    if (const char *old = getenv(name))
      saved = old;
    set(value);
  }
  ~ScopedEnv() { set(saved ? saved->c_str() : nullptr); }
  void set(const char *value) {
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }

private:
  const char *name;
  std::optional<std::string> saved;
};

TEST(CompileCacheTest, OptionsFromTheEnvironment) {
  ScopedEnv dir("OVERLAP_CACHE_DIR", "/over");
  ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
  ScopedEnv limit("OVERLAP_CACHE_SIZE_MIB", nullptr);
  Expected<CompileCacheOptions> options = compileCacheOptionsFromEnvironment();
  ASSERT_TRUE(bool(options));
  EXPECT_EQ(options->dir, "/over");
  EXPECT_EQ(options->limitBytes, uint64_t(1024) << 20);
  dir.set(nullptr);
  options = compileCacheOptionsFromEnvironment();
  ASSERT_TRUE(bool(options));
  EXPECT_EQ(options->dir, "/xdg/overlap");
  limit.set("3");
  options = compileCacheOptionsFromEnvironment();
  ASSERT_TRUE(bool(options));
  EXPECT_EQ(options->limitBytes, uint64_t(3) << 20);
  for (const char *bad : {"-1", "1.5", "lots", "2000000000000"}) {
    limit.set(bad);
    options = compileCacheOptionsFromEnvironment();
    EXPECT_FALSE(bool(options)) << bad;
    if (!options)
      consumeError(options.takeError());
  }
}

void functionHere() {}
void otherFunctionHere() {}

TEST(CompileCacheTest, IdentifiesTheCodeAtAddresses) {
  std::string here =
      identifyCode({reinterpret_cast<const void *>(&functionHere)});
  EXPECT_NE(here, "unknown");
  // Two functions of one binary: one identity.
  EXPECT_EQ(identifyCode({reinterpret_cast<const void *>(&functionHere),
                          reinterpret_cast<const void *>(&otherFunctionHere)}),
            here);
  // libLLVM is another object.
  std::string both = identifyCode(
      {reinterpret_cast<const void *>(&functionHere),
       reinterpret_cast<const void *>(&llvm::sys::getProcessTriple)});
  EXPECT_NE(both, here);
  EXPECT_NE(both.find("; "), std::string::npos);
  EXPECT_NE(both.find(here), std::string::npos);
}

} // namespace
