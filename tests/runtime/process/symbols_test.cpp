// ELF symbols, wildcard matching, library lookup, symbolization and their error messages.
#include "runtime/process/binary_paths.h"
#include "runtime/process/symbolizer.h"
#include "runtime/process/symbols.h"
#include <algorithm>
#include <gtest/gtest.h>
#include <set>
#include <unistd.h>

using namespace gpubt::runtime;

namespace {
const std::string calls = GPUBT_BINARY_DIR "/tests/programs/calls";

std::vector<std::string> funcs(const std::string &target, const std::string &pattern) {
  auto r = resolve_uprobe_targets(target, pattern);
  EXPECT_TRUE(r.ok()) << r.error();
  std::vector<std::string> names;
  if (r)
    for (auto &t : *r)
      names.push_back(t.func);
  return names;
}
} // namespace

extern "C" __attribute__((noinline)) int symbols_test_probe_me(int x) { return x + 1; }

TEST(Symbols, ExactFunction) {
  auto r = resolve_uprobe_targets(calls, "add");
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].path, calls);
  EXPECT_EQ((*r)[0].func, "add");
  EXPECT_GT((*r)[0].offset, 0u);
}

TEST(Symbols, Wildcards) {
  EXPECT_EQ(funcs(calls, "a?d"), std::vector<std::string>{"add"});
  EXPECT_EQ(funcs(calls, "[gt]*"), (std::vector<std::string>{"greet", "tick"}));
  auto all = funcs(calls, "*");
  for (const char *f : {"add", "greet", "tick", "main", "_start"})
    EXPECT_NE(std::find(all.begin(), all.end(), f), all.end()) << f;
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));
}

// Aliases of one address are probed once, under the name the others decorate even when it is the
// weak one: NCCL's public ncclAllReduce is a weak alias of its strong pncclAllReduce.
TEST(Symbols, OneAliasPerAddressThePublicName) {
  auto sym = [](const char *name, uint64_t addr, bool global) {
    ElfSymbol s;
    s.name = name;
    s.vaddr = addr;
    s.global = global;
    return s;
  };
  std::vector<ElfSymbol> syms = {sym("__nanosleep", 0x10, true), sym("nanosleep", 0x10, false),
                                 sym("ncclAllReduce", 0x20, false),
                                 sym("pncclAllReduce", 0x20, true), sym("__libc_x", 0x30, true),
                                 sym("__x", 0x30, false)};
  std::vector<std::string> names;
  for (const auto &s : match_functions(syms, "*"))
    names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"__libc_x", "nanosleep", "ncclAllReduce"}));
  const std::string nccl = "/usr/local/cuda/lib64/libnccl.so.2";
  if (access(nccl.c_str(), R_OK) == 0)
    EXPECT_EQ(funcs(nccl, "*ncclAllReduce"), std::vector<std::string>{"ncclAllReduce"});
}

TEST(Symbols, NoMatchIsEmptyWithAMessage) {
  EXPECT_TRUE(funcs(calls, "nonexistent").empty());
  EXPECT_TRUE(funcs(calls, "nonex*").empty());
  EXPECT_EQ(no_symbols_message("uprobe:/bin/ls:nonexistent"),
            "uprobe:/bin/ls:nonexistent: no symbols matched");
}

TEST(Symbols, MissingFileAndNotElf) {
  auto r = resolve_uprobe_targets("/nonexistent/x", "f");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "uprobe target file '/nonexistent/x' does not exist or is not executable");
  auto lib = resolve_uprobe_targets("libnotthere", "f");
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.error(), "uprobe target file 'libnotthere' does not exist or is not executable");
  auto txt = resolve_uprobe_targets(GPUBT_SOURCE_DIR "/tests/programs/calls.c", "f");
  ASSERT_FALSE(txt.ok());
  EXPECT_EQ(txt.error(),
            "uprobe target file '" GPUBT_SOURCE_DIR "/tests/programs/calls.c' is not an ELF file");
}

TEST(Symbols, LibcByBareName) {
  for (const char *name : {"libc", "libc.so.6"}) {
    auto p = resolve_binary_path(name);
    ASSERT_TRUE(p.ok()) << p.error();
    EXPECT_NE(p->find("libc.so.6"), std::string::npos) << *p;
  }
  // Through this process's own mappings.
  auto p = resolve_binary_path("libc", getpid());
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_NE(p->find("libc.so.6"), std::string::npos) << *p;

  auto m = funcs("libc", "malloc");
  EXPECT_EQ(m, std::vector<std::string>{"malloc"});
  // Aliases at one address collapse to one probe.
  auto r = resolve_uprobe_targets("libc", "*alloc*");
  ASSERT_TRUE(r.ok());
  std::set<uint64_t> offsets;
  for (auto &t : *r)
    EXPECT_TRUE(offsets.insert(t.offset).second) << t.func;
  EXPECT_GT(r->size(), 3u);
}

TEST(Symbols, ExecutableFromPath) {
  auto p = resolve_binary_path("sh");
  ASSERT_TRUE(p.ok()) << p.error();
  auto f = find_in_path("nonexistcmd");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error(), "command 'nonexistcmd' not found in $PATH");
}

TEST(Symbolizer, OwnFunctions) {
  auto addr = reinterpret_cast<uint64_t>(&symbols_test_probe_me);
  EXPECT_EQ(symbolize_user(getpid(), addr), "symbols_test_probe_me");
  EXPECT_EQ(symbolize_user(getpid(), addr + 2, true), "symbols_test_probe_me+2");
  EXPECT_EQ(make_process_symbolizer(getpid())(addr), "symbols_test_probe_me");
  EXPECT_EQ(symbolize_user(getpid(), 0x10), "0x10");
}
