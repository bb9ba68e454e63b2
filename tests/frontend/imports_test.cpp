// `import "PATH";`: scripts, headers and directories merged into the importing script, each file
// once; errors at their place in the file where they occur.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>

#include "frontend/ast_dump.h"
#include "frontend/parse/parse.h"

namespace gpubt::frontend {
namespace {

namespace fs = std::filesystem;

class Imports : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/gpubt_imports_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr); // 0700: not world-writable
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string &name, const std::string &text) {
    fs::create_directories((dir_ / name).parent_path());
    std::ofstream(dir_ / name) << text;
  }
  // The root script, written as DIR/main.bt and parsed: the AST dump or the diagnostics.
  std::string parse(const std::string &text) {
    write("main.bt", text);
    SourceFile file((dir_ / "main.bt").string(), text);
    Diagnostics diags;
    program_ = parse_program(file, diags);
    return program_ ? dump_ast(*program_) : diags.render(file);
  }
  std::string path(const std::string &name) const { return (dir_ / name).string(); }

  fs::path dir_;
  std::unique_ptr<Program> program_;
};

TEST_F(Imports, MacroAndProbeOfAnImportedScript) {
  write("helpers.bt", "macro greet() { printf(\"hello\\n\"); }\nBEGIN { printf(\"helpers\\n\"); }\n");
  EXPECT_EQ(parse("import \"helpers.bt\";\nBEGIN { greet(); }\n"),
            "Program\n"
            " Probe BEGIN\n"
            "  (call printf (string \"helpers\\n\"))\n"
            " Probe BEGIN\n"
            "  (block (call printf (string \"hello\\n\"));)\n");
}

TEST_F(Imports, ScriptOfMacrosOnly) {
  write("lib.bt", "macro one() { 1 }\n");
  EXPECT_EQ(parse("import \"lib.bt\";\nBEGIN { @x = one(); }\n"),
            "Program\n"
            " Probe BEGIN\n"
            "  (= (map @x) (int 1))\n");
}

TEST_F(Imports, MapDeclarationOfAnImportedScript) {
  write("maps.bt", "let @m = lruhash(8);\n");
  parse("import \"maps.bt\";\nBEGIN { @m[1] = 1; }\n");
  ASSERT_NE(program_, nullptr);
  ASSERT_EQ(program_->map_decls.size(), 1u);
  EXPECT_EQ(program_->map_decls[0].name, "@m");
  EXPECT_EQ(program_->map_decls[0].kind, "lruhash");
  EXPECT_EQ(program_->map_decls[0].span.file, kFirstImportedFile);
}

// Probes of lib/a.bt, then lib/b.bt, then the root's END.
const char *const kABThenEnd = "Program\n"
                               " Probe BEGIN\n"
                               "  (call printf (string \"a\\n\"))\n"
                               " Probe BEGIN\n"
                               "  (call printf (string \"b\\n\"))\n"
                               " Probe END\n";

TEST_F(Imports, NestedImportsAndEveryFileOnce) {
  write("lib/a.bt", "import \"b.bt\";\nimport \"../main.bt\";\nBEGIN { printf(\"a\\n\"); }\n");
  write("lib/b.bt", "import \"a.bt\";\nimport \"./b.bt\";\nBEGIN { printf(\"b\\n\"); }\n");
  EXPECT_EQ(parse("import \"lib/a.bt\";\nimport \"lib/b.bt\";\nimport \"lib/../lib/a.bt\";\n"
                  "END { }\n"),
            kABThenEnd);
}

TEST_F(Imports, DirectoryInNameOrderWithoutOtherFiles) {
  write("lib/b.bt", "BEGIN { printf(\"b\\n\"); }\n");
  write("lib/a.bt", "BEGIN { printf(\"a\\n\"); }\n");
  write("lib/types.h", "struct t { int x; };\n");
  write("lib/notes.txt", "not imported\n");
  EXPECT_EQ(parse("import \"lib\";\nEND { }\n"),
            kABThenEnd);
  ASSERT_NE(program_, nullptr);
  EXPECT_EQ(program_->imported_headers, std::vector<std::string>{path("lib/types.h")});
}

TEST_F(Imports, HeaderForClang) {
  write("point.h", "struct point { long x, y; };\n");
  parse("import \"point.h\";\nimport \"point.h\";\nBEGIN { }\n");
  ASSERT_NE(program_, nullptr);
  EXPECT_EQ(program_->imported_headers, std::vector<std::string>{path("point.h")});
}

TEST_F(Imports, ConfigInAnImportedScriptIsRefused) {
  write("conf.bt", "macro m() { 1 }\nconfig = { max_map_keys = 10 }\n");
  EXPECT_EQ(parse("import \"conf.bt\";\nBEGIN { }\n"),
            path("conf.bt") +
                ":2:1-31: ERROR: an imported script cannot contain a config block: only the root "
                "script may have one\n"
                "config = { max_map_keys = 10 }\n"
                "~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n");
}

TEST_F(Imports, WorldWritableDirectoryIsRefused) {
  write("open/lib.bt", "macro m() { 1 }\n");
  ASSERT_EQ(chmod(path("open").c_str(), 0777), 0);
  EXPECT_EQ(parse("import \"open/lib.bt\";\nBEGIN { }\n"),
            path("main.bt") + ":1:1-22: ERROR: refusing to import \"open/lib.bt\": directory " +
                path("open") + " is world-writable\n"
                               "import \"open/lib.bt\";\n"
                               "~~~~~~~~~~~~~~~~~~~~~\n");
  EXPECT_NE(parse("import \"open\";\nBEGIN { }\n").find("is world-writable"), std::string::npos);
}

TEST_F(Imports, MissingFile) {
  EXPECT_EQ(parse("import \"nope.bt\";\nBEGIN { }\n"),
            path("main.bt") + ":1:1-18: ERROR: cannot import \"nope.bt\": " + path("nope.bt") +
                ": No such file or directory\n"
                "import \"nope.bt\";\n"
                "~~~~~~~~~~~~~~~~~\n");
}

TEST_F(Imports, BpfCIsNotSupported) {
  write("lib.bpf.c", "int __add_one(int v) { return v + 1; }\n");
  EXPECT_EQ(parse("import \"lib.bpf.c\";\nBEGIN { }\n"),
            path("main.bt") + ":1:1-20: ERROR: importing BPF C (.bpf.c) is not supported by gpubt\n"
                              "import \"lib.bpf.c\";\n"
                              "~~~~~~~~~~~~~~~~~~~\n");
}

TEST_F(Imports, UnknownExtension) {
  write("notes.txt", "hello\n");
  EXPECT_EQ(parse("import \"notes.txt\";\nBEGIN { }\n"),
            path("main.bt") + ":1:1-20: ERROR: cannot import \"notes.txt\": only .bt scripts, .h "
                              "headers and directories of them can be imported\n"
                              "import \"notes.txt\";\n"
                              "~~~~~~~~~~~~~~~~~~~\n");
}

TEST_F(Imports, ImportAfterAProbeIsRefused) {
  write("lib.bt", "macro m() { 1 }\n");
  EXPECT_EQ(parse("BEGIN { }\nimport \"lib.bt\";\n"),
            path("main.bt") +
                ":2:1-17: ERROR: import must come before any probe, macro or map declaration\n"
                "import \"lib.bt\";\n"
                "~~~~~~~~~~~~~~~~\n");
}

TEST_F(Imports, SyntaxErrorInAnImportedFileIsReportedThere) {
  write("lib/bad.bt", "// line one\nBEGIN { printf(\"x\") printf(\"y\"); }\n");
  write("lib/ok.bt", "import \"bad.bt\";\n");
  EXPECT_EQ(parse("import \"lib/ok.bt\";\nBEGIN { }\n"),
            path("lib/bad.bt") + ":2:21-27: ERROR: syntax error, unexpected call, expecting }\n"
                                 "BEGIN { printf(\"x\") printf(\"y\"); }\n"
                                 "                    ~~~~~~\n");
}

TEST_F(Imports, FromAnEScriptTheCurrentDirectory) {
  write("lib.bt", "macro one() { 1 }\n");
  fs::path before = fs::current_path();
  fs::current_path(dir_);
  SourceFile file("stdin", "import \"lib.bt\";\nBEGIN { @x = one(); }\n");
  Diagnostics diags;
  auto program = parse_program(file, diags);
  fs::current_path(before);
  EXPECT_NE(program, nullptr) << diags.render(file);
}

} // namespace
} // namespace gpubt::frontend
