// Every construct and function the BPF back end lowers, loaded into the running kernel's
// verifier: the only judge of whether the generated programs are acceptable.
#include <gtest/gtest.h>

#include <sstream>

#include "tests/codegen/bpf_test_support.h"

namespace gpubt::codegen::bpf::testing {
namespace {

struct Case {
  const char *name;
  const char *script;
  bool has_child = false;
};

const Case kCases[] = {
    {"begin_printf_exit", R"(BEGIN { printf("hello\n"); exit(); })"},
    {"count_by_pid", R"(uprobe:/bin/true:main { @c[pid] = count(); })"},
    {"aggregations",
     R"(uprobe:/bin/true:main { @s[tid] = sum(arg0); @mi = min(arg1); @ma = max(arg1);
        @a = avg(arg2); @st = stats(arg3); @neg = sum(-1); })"},
    {"hist_lhist",
     R"(uprobe:/bin/true:main { @h = hist(arg0); @l[comm] = lhist(arg1, 0, 100, 10);
        @hk[pid, tid] = hist(arg2); })"},
    {"arithmetic",
     R"(BEGIN { $a = 5; $b = $a * 3 - 2 / 1 % 7; $c = $a << 2 | $b & 0xff ^ 3 >> 1;
        $d = $a / 0; $e = -$a; $f = ~$a; printf("%d %d %d %d %d\n", $b, $c, $d, $e, $f); })"},
    {"signed_compare_if_else",
     R"(uprobe:/bin/true:main { $x = (int32)arg0;
        if ($x < 0) { @neg = count(); } else if (arg0 > 10) { @big = count(); }
        else { @other = count(); } })"},
    {"logic_short_circuit",
     R"(uprobe:/bin/true:main { if (arg0 > 1 && arg1 < 5 || !(arg2 == 3)) { @l = count(); }
        @x = arg0 && arg1; })"},
    {"ternary",
     R"(uprobe:/bin/true:main { $v = arg0 > 5 ? 1 : 2; @t = $v;
        @s = arg0 > 5 ? "big" : "small"; })"},
    {"casts",
     R"(BEGIN { $a = (uint8)300; $b = (int16)-1; $c = (uint64)$b; $d = (int8)$a;
        printf("%d %d %d %d\n", $a, $b, $c, $d); exit(); })"},
    {"variable_compound_incdec",
     R"(uprobe:/bin/true:main { $x = 1; $x += arg0; $x *= 2; $x -= 1; $x <<= 1; $x++; ++$x;
        $x--; --$x; @v = $x; @w = $x++; })"},
    {"map_compound_incdec",
     R"(uprobe:/bin/true:main { @x += 1; @y[pid] -= arg0; @x++; --@y[pid];
        @z = @x + @y[pid]; @q = @y[pid]++; })"},
    {"predicate",
     R"(uprobe:/bin/true:main /pid == 1234 && arg0 != 0/ { @p = count(); })"},
    {"strings",
     R"(uprobe:/bin/true:main { $s = str(arg0); @names[$s] = count();
        if ($s == "hello") { printf("match %s\n", $s); }
        @c[comm] = count(); if (comm != "bash") { @nb = count(); } })"},
    {"str_len",
     R"(uprobe:/bin/true:main { printf("%s\n", str(arg0, 8)); @k[str(arg1, arg2)] = count(); })"},
    {"tuples",
     R"(uprobe:/bin/true:main { $t = (pid, comm, arg0); @t[pid] = $t;
        printf("%d %s %d\n", $t.0, $t.1, $t.2); @m[pid, comm] = count();
        @u[1, "ab"] = ((int32)-1, "x"); })"},
    {"builtins",
     R"(uprobe:/bin/true:main { printf("%d %d %d %d %d %d %llu %llu %d %s\n", pid, tid, uid,
        gid, cpu, cgroup, nsecs, elapsed, rand, comm); })"},
    {"args_0_to_9",
     R"(uprobe:/bin/true:main { @a = arg0 + arg1 + arg2 + arg3 + arg4 + arg5 + arg6 + arg7 +
        arg8 + arg9; })"},
    {"uretprobe_retval_func_probe",
     R"(uretprobe:/bin/true:main { @r[retval] = count(); printf("%s %s\n", func, probe); })"},
    {"func_probe_keys_two_attach_points",
     R"(uprobe:/bin/true:main,uprobe:/bin/true:exit { @f[func] = count(); @p[probe] = count(); })"},
    {"print_clear_zero_delete",
     R"(BEGIN { @c = count(); @h = hist(1); @m[1] = 2; }
        interval:s:1 { print(@c); clear(@c); zero(@h); delete(@m[1]); print(5); })"},
    {"time_exit_stops",
     R"(interval:ms:100 { time("%H:%M\n"); time(); exit(); printf("never\n"); })"},
    {"tracepoint_pointer_and_ints",
     R"(tracepoint:syscalls:sys_enter_openat { @[comm] = count();
        printf("%s %d\n", str(args.filename), args.flags); })"},
    {"tracepoint_char_array",
     R"(tracepoint:sched:sched_switch { @[args.prev_comm] = count();
        @pid[args.next_pid] = count(); if (args.next_comm == "swapper/0") { @idle = count(); } })"},
    {"tracepoint_wildcard",
     R"(tracepoint:syscalls:sys_enter_open* { @[args.flags] = count(); })"},
    {"tracepoint_data_loc",
     R"(tracepoint:sched:sched_process_exec { printf("%s\n", args.filename); })"},
    {"cpid", R"(uprobe:/bin/true:main /pid == cpid/ { @c = count(); })", true},
    {"end_many_printf_args",
     R"(END { printf("%d %d %d %d %d %d %d %s %s %d\n", 1, 2, 3, 4, 5, 6, 7, "a", "bb",
        -1); })"},
    {"string_map_values_delete",
     R"(uprobe:/bin/true:main { @s[pid] = comm; $x = @s[tid]; printf("%s\n", $x);
        delete(@s[pid]); @big[str(arg0)] = str(arg1); })"},
    {"many_strings_fit",
     R"(uprobe:/bin/true:main { @a[str(arg0), str(arg1), str(arg2)] = count();
        printf("%s %s %s %s\n", str(arg3), str(arg4), str(arg5), comm); })"},
    {"sleepable_str_fault_in",
     R"(uprobe:/bin/true:main { printf("%s %s\n", str(arg0), str(arg1 + 8, 4)); }
        uretprobe:/bin/true:main { @[str(retval)] = count(); })"},
};

class BpfVerifier : public ::testing::TestWithParam<Case> {};

TEST_P(BpfVerifier, KernelAccepts) {
  const Case &c = GetParam();
  Compiled out = compile_script(c.script, c.has_child);
  ASSERT_EQ(out.error, "") << c.script;
  ASSERT_FALSE(out.art.spec.probes.empty());
  for (const auto &p : out.art.spec.probes)
    EXPECT_FALSE(p.insns.empty()) << p.name;
  EXPECT_EQ(load_in_kernel(out.art.spec), "") << c.script << "\n" << out.art.llvm_ir;
}

// Kernels without a private BPF stack (before 6.14, JITs other than x86-64's) verify a probe and
// the loop callbacks it calls against one 512 bytes: the callbacks' small temporaries share the
// probe's stack budget and spill to the scratch area past it. (Each callback's count started
// at 0 before: the kernel measured this probe at 216+248+160, which 6.14+ on x86-64 still
// loads, its private stack checking each frame alone.)
TEST(BpfVerifierStack, LoopCallbacksShareTheProbesStack) {
  Compiled out = compile_script(R"(BEGIN {
    @a[1] = 1; @b[2] = 2;
    @p[1, 2, 3, 4] = 10; @q[1, 2, 3, 5] = 20; @r[1, 2, 3, 6] = 30; @s[1, 2, 3, 7] = 40;
    $t = @p[1, 2, 3, 4] + @q[1, 2, 3, 5] + @r[1, 2, 3, 6] + @s[1, 2, 3, 7];
    for ($x : @a) {
      $t += @p[$x.0, 2, 3, 4] + @q[$x.0, 2, 3, 5] + @r[$x.0, 2, 3, 6] + @s[$x.0, 2, 3, 7];
      for ($y : @b) {
        $t += @p[$x.0, $y.0, 3, 4] + @q[$x.0, $y.0, 3, 5] + @r[$x.0, $y.0, 3, 6] +
              @s[$x.0, $y.0, 3, 7];
        printf("%d %d %d\n", $x.0, $y.0, $t);
      }
    }
  })");
  ASSERT_EQ(out.error, "");
  std::vector<std::string> depths;
  ASSERT_EQ(load_in_kernel(out.art.spec, &depths), "");
  ASSERT_EQ(depths.size(), 1u);
  ASSERT_EQ(depths[0].rfind("stack depth ", 0), 0u) << depths[0];
  std::istringstream frames(depths[0].substr(12)); // "A+B+C"
  int total = 0, count = 0;
  for (int depth; frames >> depth; frames.ignore(1), ++count)
    total += depth;
  EXPECT_EQ(count, 3) << depths[0]; // the probe and its two callbacks
  EXPECT_LE(total, 512) << depths[0];
}

INSTANTIATE_TEST_SUITE_P(Scripts, BpfVerifier, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case> &i) { return i.param.name; });

} // namespace
} // namespace gpubt::codegen::bpf::testing
