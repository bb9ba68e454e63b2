// C definitions through clang: record layouts, bitfields, typedefs, enum constants, #define, and
// clang's errors at their place in the script; then the semantic rules on records.
#include <gtest/gtest.h>

#include "frontend/ast_dump.h"
#include "frontend/clang/read_c_definitions.h"
#include "frontend/parse/parse.h"
#include "frontend/passes/check_types.h"
#include "frontend/passes/resolve_types.h"

namespace gpubt::frontend {
namespace {

struct Read {
  std::unique_ptr<Program> program;
  CTypes types;
  std::string diags;
};

Read read(const std::string &text) {
  SourceFile file("stdin", text);
  Diagnostics diags;
  Read r;
  r.program = parse_program(file, diags);
  if (r.program)
    r.types = read_c_definitions(*r.program, file, diags);
  r.diags = diags.render(file);
  return r;
}

// The diagnostics of the whole front end (parse, clang, resolve, check).
std::string check(const std::string &text) {
  SourceFile file("stdin", text);
  Diagnostics diags;
  auto program = parse_program(file, diags);
  if (!program)
    return diags.render(file);
  CTypes types = read_c_definitions(*program, file, diags);
  if (diags.has_errors())
    return diags.render(file);
  SemanticOptions options;
  options.c_types = &types;
  SemanticInfo info = resolve_types(*program, options);
  check_types(*program, info, options, diags);
  return diags.render(file);
}

TEST(CDefinitions, ParseKeepsDefinitionsApartFromProbes) {
  auto r = read("struct Foo { int x; }\n#define N 3\nBEGIN { $p = (struct Foo *)0; @ = $p->x; }");
  ASSERT_TRUE(r.program);
  ASSERT_EQ(r.program->c_definitions.size(), 2u);
  EXPECT_EQ(r.program->c_definitions[0].text, "struct Foo { int x; }");
  EXPECT_EQ(r.program->c_definitions[1].text, "#define N 3");
  EXPECT_EQ(dump_ast(*r.program), "Program\n"
                                  " Probe BEGIN\n"
                                  "  (= (var $p) (cast struct Foo* (int 0)))\n"
                                  "  (= (map @) (-> (var $p) x))\n");
}

TEST(CDefinitions, RecordLayoutIsClangs) {
  auto r = read("struct P { char c; long l; struct { short s[3]; } in; char name[5]; }; BEGIN {}");
  ASSERT_EQ(r.diags, "");
  const Type *p = r.types.find("struct P");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->size, 32u);
  EXPECT_EQ(p->names, (std::vector<std::string>{"c", "l", "in", "name"}));
  EXPECT_EQ(p->offsets, (std::vector<uint32_t>{0, 8, 16, 22}));
  EXPECT_EQ(to_string(p->elems[0]), "int8");
  EXPECT_EQ(to_string(p->elems[1]), "int64");
  EXPECT_EQ(to_string(p->elems[2].elems[0]), "int16[3]");
  EXPECT_EQ(to_string(p->elems[3]), "string[5]");
}

TEST(CDefinitions, SelfReferenceIsAStubBehindThePointer) {
  auto r = read("struct node { int v; struct node *next; }; BEGIN {}");
  const Type *n = r.types.find("struct node");
  ASSERT_TRUE(n);
  ASSERT_EQ(n->elems[1].kind, TypeKind::Pointer);
  EXPECT_TRUE(n->elems[1].elems[0].is_record_stub());
  EXPECT_EQ(r.types.complete(n->elems[1].elems[0]).names.size(), 2u);
}

TEST(CDefinitions, BitfieldsKeepTheirShiftAndWidth) {
  auto r = read("struct F { unsigned a : 4, b : 8; short c : 5; }; BEGIN {}");
  const Type *f = r.types.find("struct F");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->bitfields, (std::vector<uint16_t>{4, 4 << 8 | 8, 5}));
  EXPECT_EQ(f->offsets, (std::vector<uint32_t>{0, 0, 2})); // c shares the int's storage unit
}

TEST(CDefinitions, TypedefsEnumsAndIntegerMacros) {
  auto r = read("typedef struct { int x; } pt;\nenum E { A, B = 7 };\n#define M 0x10\n"
                "#define S \"text\"\nBEGIN {}");
  ASSERT_EQ(r.diags, "");
  ASSERT_TRUE(r.types.find("pt"));
  EXPECT_EQ(r.types.find("pt")->size, 4u);
  EXPECT_EQ(r.types.constants.at("B"), 7);
  EXPECT_EQ(r.types.constants.at("M"), 16);
  EXPECT_FALSE(r.types.constants.count("S"));
  ASSERT_TRUE(r.types.find("uint8_t")); // the prelude's fixed-width names
}

TEST(CDefinitions, ClangErrorsPointIntoTheScript) {
  EXPECT_EQ(read("BEGIN {}").diags, "");
  EXPECT_EQ(read("\n  struct Foo { int x; nope y; } BEGIN {}").diags,
            "stdin:2:23-24: ERROR: unknown type name 'nope'\n"
            "  struct Foo { int x; nope y; } BEGIN {}\n"
            "                      ~\n");
  EXPECT_EQ(read("#include <no/such.h>\nBEGIN {}").diags,
            "stdin:1:10-11: ERROR: 'no/such.h' file not found\n"
            "#include <no/such.h>\n"
            "         ~\n");
}

TEST(CDefinitions, SemanticRules) {
  const std::string foo = "struct Foo { int x; int a[2]; } ";
  EXPECT_EQ(check(foo + "BEGIN { $p = (struct Foo *)0; @ = $p->x + $p->a[1] + (*$p).x; }"), "");
  EXPECT_EQ(check(foo + "BEGIN { @ = sizeof(struct Foo) + sizeof(struct Foo *); }"), "");
  EXPECT_EQ(check(foo + "BEGIN { $p = (struct Foo *)0; @ = $p->y; }"),
            "stdin:1:71-72: ERROR: Struct/union of type 'struct Foo' does not contain a field "
            "named 'y'\n" +
                foo + "BEGIN { $p = (struct Foo *)0; @ = $p->y; }\n" + std::string(70, ' ') +
                "~\n");
  // bpftrace head reads through a pointer with `.` too (0.17 refused it).
  EXPECT_EQ(check(foo + "BEGIN { $p = (struct Foo *)0; @ = $p.x; }"), "");
  EXPECT_NE(check(foo + "BEGIN { $p = (struct Foo *)0; @ = $p->a[2]; }")
                .find("ERROR: the index 2 is out of bounds for array of size 2"),
            std::string::npos);
  EXPECT_NE(check(foo + "BEGIN { @ = (struct Foo)0; }")
                .find("ERROR: Cannot cast to struct type \"struct Foo\""),
            std::string::npos);
  EXPECT_NE(check("BEGIN { @ = sizeof(struct Bar); }")
                .find("ERROR: Unknown struct/union: 'struct Bar'"),
            std::string::npos);
}

} // namespace
} // namespace gpubt::frontend
