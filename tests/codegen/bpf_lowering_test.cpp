// What the BPF back end promises the runtime: map layouts, event formats, probe names, and a
// few key IR shapes (map references as bpf.pseudo, one section per probe, no calls).
#include <gtest/gtest.h>
#include <linux/bpf.h>

#include "codegen/layout/program_layout.h"
#include "tests/codegen/bpf_test_support.h"

namespace gpubt::codegen::bpf::testing {
namespace {

const abi::MapSpec *find_map(const abi::ProgramSpec &spec, const std::string &name) {
  for (const auto &m : spec.maps)
    if (m.name == name)
      return &m;
  return nullptr;
}

BpfArtifacts compile_ok(const std::string &script) {
  Compiled c = compile_script(script);
  EXPECT_EQ(c.error, "") << script;
  return std::move(c.art);
}

TEST(BpfLowering, InternalMaps) {
  auto art = compile_ok(R"(BEGIN { printf("x\n"); })");
  const auto &spec = art.spec;
  ASSERT_GE(spec.ringbuf_map, 0);
  ASSERT_GE(spec.globals_map, 0);
  EXPECT_EQ(spec.maps[spec.ringbuf_map].bpf_type, BPF_MAP_TYPE_RINGBUF);
  EXPECT_GE(spec.maps[spec.ringbuf_map].max_entries, 1u << 20);
  EXPECT_TRUE(spec.maps[spec.ringbuf_map].internal);
  EXPECT_EQ(spec.maps[spec.globals_map].bpf_type, BPF_MAP_TYPE_ARRAY);
  EXPECT_EQ(spec.maps[spec.globals_map].value_size,
            8u * abi::global_map_drops_slot(uint32_t(spec.ringbuf_map))); // a drop count per map
  const auto *scratch = find_map(spec, "scratch");
  ASSERT_NE(scratch, nullptr);
  EXPECT_EQ(scratch->bpf_type, BPF_MAP_TYPE_PERCPU_ARRAY);
  EXPECT_TRUE(scratch->internal);
}

TEST(BpfLowering, AggregationMapLayouts) {
  auto art = compile_ok(R"(uprobe:/bin/true:main { @c[pid] = count(); @s = sum(arg0);
    @mi = min((int64)arg1); @a = avg(arg2); @h[comm] = hist(arg0); @l = lhist(arg1, 0, 100, 10);
    @v[tid] = comm; })");
  const auto &spec = art.spec;
  const auto *c = find_map(spec, "@c");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->agg, abi::AggKind::Count);
  EXPECT_EQ(c->bpf_type, BPF_MAP_TYPE_PERCPU_HASH);
  EXPECT_EQ(c->value_size, 8u);
  EXPECT_EQ(c->max_entries, 4096u);
  const auto *s = find_map(spec, "@s");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->key.kind, abi::ValueType::None);
  EXPECT_EQ(s->key_size, 8u);
  EXPECT_EQ(find_map(spec, "@mi")->value_size, sizeof(abi::MinMaxValue));
  EXPECT_EQ(find_map(spec, "@a")->value_size, sizeof(abi::AvgValue));
  const auto *h = find_map(spec, "@h");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->agg, abi::AggKind::Hist);
  EXPECT_EQ(h->key.kind, abi::ValueType::String);
  EXPECT_EQ(h->key_size, 16u + 8u); // comm, then the bucket index
  const auto *l = find_map(spec, "@l");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->key_size, 8u); // only the bucket index
  EXPECT_EQ(l->lhist_min, 0);
  EXPECT_EQ(l->lhist_max, 100);
  EXPECT_EQ(l->lhist_step, 10);
  const auto *v = find_map(spec, "@v");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->bpf_type, BPF_MAP_TYPE_HASH);
  EXPECT_EQ(v->value.kind, abi::ValueType::String);
  EXPECT_EQ(v->value_size, 16u);
}

TEST(BpfLowering, TupleKeyLayout) {
  auto art = compile_ok(R"(uprobe:/bin/true:main { @m[pid, comm, (int32)1] = count(); })");
  const auto *m = find_map(art.spec, "@m");
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->key.kind, abi::ValueType::Tuple);
  ASSERT_EQ(m->key.offsets.size(), 3u);
  EXPECT_EQ(m->key.offsets[0], 0u);
  EXPECT_EQ(m->key.offsets[1], 8u);
  EXPECT_EQ(m->key_size, m->key.size);
}

TEST(BpfLowering, PrintfFormatsAndOffsets) {
  auto art = compile_ok(R"(BEGIN { printf("%d %s %d\n", 1, "abc", (int32)2); })");
  ASSERT_EQ(art.spec.formats.size(), 1u);
  const auto &f = art.spec.formats[0];
  EXPECT_EQ(f.format, "%d %s %d\n");
  ASSERT_EQ(f.args.size(), 3u);
  EXPECT_EQ(f.args[0].offset, 0u);
  EXPECT_EQ(f.args[1].offset, 8u);
  EXPECT_EQ(f.args[1].type.kind, abi::ValueType::String);
  EXPECT_EQ(f.args[2].offset, 8u + (f.args[1].type.size + 7) / 8 * 8);
  EXPECT_EQ(f.args[2].type.size, 4u);
}

TEST(BpfLowering, ProbePerAttachPoint) {
  auto art = compile_ok(
      R"(uprobe:/bin/true:main,uretprobe:/bin/true:main { @[probe] = count(); } END { })");
  const auto &spec = art.spec;
  ASSERT_EQ(spec.probes.size(), 3u);
  EXPECT_EQ(spec.probes[0].kind, abi::AttachKind::Uprobe);
  EXPECT_EQ(spec.probes[0].target, "/bin/true");
  EXPECT_EQ(spec.probes[0].func, "main");
  EXPECT_EQ(spec.probes[1].kind, abi::AttachKind::Uretprobe);
  EXPECT_EQ(spec.probes[2].kind, abi::AttachKind::End);
  ASSERT_EQ(spec.probe_names.size(), 3u);
  EXPECT_EQ(spec.probe_names[0], "uprobe:/bin/true:main");
  EXPECT_EQ(spec.probe_names[1], "uretprobe:/bin/true:main");
  EXPECT_EQ(spec.probe_names[2], "END");
}

TEST(BpfLowering, SleepableOnlyForUprobesReadingStrings) {
  auto art = compile_ok(R"(uprobe:/bin/true:main { printf("%s\n", str(arg0)); }
                           uprobe:/bin/true:main { @c = count(); }
                           tracepoint:syscalls:sys_enter_openat { @s[str(args.filename)] = count(); })");
  ASSERT_EQ(art.spec.probes.size(), 3u);
  EXPECT_TRUE(art.spec.probes[0].sleepable);
  EXPECT_FALSE(art.spec.probes[1].sleepable);
  EXPECT_FALSE(art.spec.probes[2].sleepable);
  EXPECT_EQ(load_in_kernel(art.spec), "");
}

TEST(BpfLowering, TimeAndEvents) {
  auto art = compile_ok(R"(BEGIN { time("%H\n"); time(); exit(); })");
  ASSERT_EQ(art.spec.time_formats.size(), 2u);
  EXPECT_EQ(art.spec.time_formats[0], "%H\n");
  EXPECT_EQ(art.spec.time_formats[1], "%H:%M:%S\n");
}

// IR shapes, FileCheck style but in-process.
// Codegen dispatches on the ids resolve_types stores; a call without one never passed the front
// end, and is reported as a bug rather than as a mistake in the script.
TEST(BpfLowering, AnUnresolvedCallIsABug) {
  frontend::SourceFile file("stdin", "BEGIN { exit(); }");
  frontend::Diagnostics diags;
  auto prog = frontend::parse_program(file, diags);
  ASSERT_TRUE(prog && !diags.has_errors());
  frontend::SemanticInfo sema;
  auto layout = codegen::layout::lay_out_program(*prog, sema, {});
  ASSERT_TRUE(layout);
  auto art = lower_to_bpf(*prog, sema, *layout, {});
  ASSERT_FALSE(art);
  EXPECT_EQ(art.error(), "BUG: function exit() has no host lowering");
}

// percpu_kaddr(): the variable's BTF id as `ld_imm64 BPF_PSEUDO_BTF_ID`, then bpf_per_cpu_ptr
// (153) with a CPU, bpf_this_cpu_ptr (154) without, as bpftrace lowers it. (The kernel then finds
// the variable in kallsyms: this machine's kernel lists none, so no test here loads one.)
TEST(BpfLoweringIr, PercpuKaddrLoadsTheVariablesBtfId) {
  frontend::SemanticOptions so;
  so.percpu_var = [](const std::string &name) {
    return name == "runqueues" ? std::optional<uint32_t>(4242) : std::nullopt;
  };
  auto checked = gpubt::testing::check_script(
      R"(begin { @a = *percpu_kaddr("runqueues", 1); @b = *percpu_kaddr("runqueues"); })", so);
  ASSERT_EQ(checked.error, "");
  auto layout = layout::lay_out_program(*checked.prog, checked.sema, {});
  ASSERT_TRUE(layout) << layout.error();
  auto art = lower_to_bpf(*checked.prog, checked.sema, *layout, {});
  ASSERT_TRUE(art) << art.error();
  EXPECT_NE(art->llvm_ir.find("call i64 @llvm.bpf.pseudo(i64 3, i64 4242)"), std::string::npos)
      << art->llvm_ir;
  EXPECT_NE(art->llvm_ir.find("inttoptr (i64 153 to ptr)"), std::string::npos);
  EXPECT_NE(art->llvm_ir.find("inttoptr (i64 154 to ptr)"), std::string::npos);
  EXPECT_NE(gpubt::testing::check_script(R"(begin { @c = *percpu_kaddr("nope"); })", so)
                .error.find("Could not resolve per-CPU variable \"nope\""),
            std::string::npos);
}

TEST(BpfLoweringIr, MapReferencesAreBpfPseudo) {
  auto art = compile_ok(R"(uprobe:/bin/true:main { @c = count(); })");
  int idx = -1;
  for (size_t i = 0; i < art.spec.maps.size(); ++i)
    if (art.spec.maps[i].name == "@c")
      idx = i;
  ASSERT_GE(idx, 0);
  EXPECT_NE(art.llvm_ir.find("call i64 @llvm.bpf.pseudo(i64 1, i64 " + std::to_string(idx) + ")"),
            std::string::npos)
      << art.llvm_ir;
  EXPECT_NE(art.llvm_ir.find("section \"probe_0\""), std::string::npos);
  // Helpers are called through their id: map_lookup_elem (1), map_update_elem (2).
  EXPECT_NE(art.llvm_ir.find("inttoptr (i64 1 to ptr)"), std::string::npos);
  EXPECT_NE(art.llvm_ir.find("inttoptr (i64 2 to ptr)"), std::string::npos);
  EXPECT_EQ(art.llvm_ir.find("@llvm.memcpy"), std::string::npos);
  EXPECT_EQ(art.llvm_ir.find("global "), std::string::npos);
}

TEST(BpfLoweringIr, UnsignedDivisionGuardsZero) {
  auto art = compile_ok(R"(uprobe:/bin/true:main { @x = arg0 / arg1; })");
  EXPECT_NE(art.llvm_ir.find("udiv i64"), std::string::npos) << art.llvm_ir;
  EXPECT_EQ(art.llvm_ir.find("sdiv"), std::string::npos);
}

TEST(BpfLoweringIr, ExitReturnsAtOnce) {
  auto art = compile_ok(R"(BEGIN { exit(); @x = 1; })");
  // The map update after exit() is dead code and is gone after optimization.
  EXPECT_EQ(art.llvm_ir.find("inttoptr (i64 2 to ptr)"), std::string::npos) << art.llvm_ir;
  EXPECT_NE(art.llvm_ir.find("inttoptr (i64 130 to ptr)"), std::string::npos); // ringbuf_output
}

TEST(BpfLoweringObject, NoRelocationsAndWordsPerProbe) {
  auto art = compile_ok(R"(uprobe:/bin/true:main { printf("%s\n", comm); }
                           BEGIN { @x[1] = 2; })");
  ASSERT_EQ(art.spec.probes.size(), 2u);
  ASSERT_FALSE(art.object.empty());
  // ELF magic; extraction already refused relocations and data sections.
  EXPECT_EQ(art.object[0], 0x7f);
  EXPECT_EQ(art.object[1], 'E');
  for (const auto &p : art.spec.probes) {
    bool has_exit = false;
    for (uint64_t insn : p.insns)
      has_exit |= (insn & 0xff) == 0x95; // BPF_JMP | BPF_EXIT
    EXPECT_TRUE(has_exit) << p.name;
  }
}

} // namespace
} // namespace gpubt::codegen::bpf::testing
