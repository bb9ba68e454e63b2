// Semantic passes: one test per rule, expected diagnostics verbatim from bpftrace 0.17
// (`bpftrace -d -e '...'`), and the types resolve_types gives maps, variables and expressions.
#include <gtest/gtest.h>

#include "frontend/diagnostics.h"
#include "frontend/parse/parse.h"
#include "frontend/passes/check_types.h"
#include "frontend/passes/resolve_types.h"

namespace gpubt::frontend {
namespace {

struct Checked {
  std::unique_ptr<Program> program;
  SemanticInfo info;
  std::string diags;
};

Checked analyse(const std::string &text, const SemanticOptions &options = {}) {
  SourceFile file("stdin", text);
  Diagnostics diags;
  Checked c;
  c.program = parse_program(file, diags);
  if (!c.program) {
    c.diags = "PARSE FAILED:\n" + diags.render(file);
    return c;
  }
  c.info = resolve_types(*c.program, options);
  check_types(*c.program, c.info, options, diags);
  c.diags = diags.render(file);
  return c;
}

std::string check(const std::string &text, const SemanticOptions &options = {}) {
  return analyse(text, options).diags;
}

// The diagnostic bpftrace prints for a one-line script: header, the line, the underline.
std::string diag(const std::string &text, int col, int end, const std::string &msg,
                 const char *severity = "ERROR") {
  return "stdin:1:" + std::to_string(col) + "-" + std::to_string(end) + ": " + severity + ": " +
         msg + "\n" + text + "\n" + std::string(col - 1, ' ') + std::string(end - col, '~') +
         "\n";
}

#define EXPECT_ERROR(script, col, end, msg) EXPECT_EQ(check(script), diag(script, col, end, msg))

// --- names ---------------------------------------------------------------------------------

TEST(Semantic, UnknownIdentifier) {
  EXPECT_ERROR("BEGIN { @x = foo; }", 14, 17, "Unknown identifier: 'foo'");
}

TEST(Semantic, UnknownFunctionStopsChecking) {
  const std::string s = "BEGIN { @x = foo; @y = bar(); }";
  EXPECT_EQ(check(s), diag(s, 24, 27, "Unknown function: bar"));
}

TEST(Semantic, UndefinedVariable) {
  EXPECT_ERROR("BEGIN { @x = $x; }", 14, 16, "Undefined or undeclared variable: $x");
  EXPECT_ERROR("BEGIN { $x++; }", 9, 11, "Undefined or undeclared variable: $x");
}

TEST(Semantic, VariablesAreScopedToTheirProbe) {
  EXPECT_ERROR("BEGIN { $x = 1; } END { @y = $x; }", 30, 32,
               "Undefined or undeclared variable: $x");
  EXPECT_EQ(check("BEGIN { if (1) { $x = 1; } @y = $x; }"), "");
}

TEST(Semantic, UndefinedMap) {
  const std::string s = "BEGIN { @y = @x; }";
  EXPECT_EQ(check(s), diag(s, 14, 16, "Undefined map: @x") + diag(s, 9, 11, "Undefined map: @y") +
                          diag(s, 14, 16, "Invalid expression for assignment: none"));
  EXPECT_ERROR("BEGIN { print(@x); }", 9, 17, "Undefined map: @x");
  EXPECT_ERROR("BEGIN { delete(@x[1]); }", 9, 21, "Undefined map: @x");
}

TEST(Semantic, MapReadBeforeItsAssignmentIsFine) {
  EXPECT_EQ(check("BEGIN { @y = @x; @x = 1; }"), "");
  EXPECT_EQ(check("BEGIN { @y = @x; } END { @x = \"abc\"; }"), "");
}

// --- builtins and probe kinds ----------------------------------------------------------------

TEST(Semantic, ArgNOnlyInUprobes) {
  EXPECT_ERROR("BEGIN { @k = arg0; }", 14, 18,
               "The arg0 builtin can only be used with 'kprobes', 'uprobes' and 'usdt' probes");
  EXPECT_ERROR("uretprobe:/tmp/bt/app:foo { @x = arg0; }", 34, 38,
               "The arg0 builtin can only be used with 'kprobes', 'uprobes' and 'usdt' probes");
}

TEST(Semantic, RetvalOnlyInUretprobes) {
  EXPECT_ERROR("uprobe:/tmp/bt/app:foo { @k = retval; }", 31, 37,
               "The retval builtin can only be used with 'kretprobe' and 'uretprobe' and 'kfunc' "
               "probes");
  EXPECT_ERROR("tracepoint:syscalls:sys_enter_read { @x = retval; }", 43, 49,
               "The retval builtin can only be used with 'kretprobe' and 'uretprobe' and 'kfunc' "
               "probes (try to use args->ret instead)");
  EXPECT_EQ(check("uretprobe:/tmp/bt/app:foo { @x = func; @y = retval; }"), "");
}

TEST(Semantic, FuncNotInSpecialProbes) {
  EXPECT_ERROR("BEGIN { @x = func; }", 14, 18, "The func builtin can not be used with 'BEGIN' probes");
  EXPECT_ERROR("END { @x = func; }", 12, 16, "The func builtin can not be used with 'END' probes");
  EXPECT_ERROR("interval:s:1 { @x = func; }", 21, 25,
               "The func builtin can not be used with 'interval' probes");
  EXPECT_ERROR("tracepoint:syscalls:sys_enter_read { @x = func; }", 43, 47,
               "The func builtin can not be used with 'tracepoint' probes");
}

TEST(Semantic, ArgsOnlyWhereTheProbeHasThem) {
  EXPECT_ERROR("BEGIN { @x = args.foo; }", 14, 18,
               "The args builtin can only be used with tracepoint/kfunc/uprobeprobes (special "
               "used here)");
  EXPECT_ERROR("interval:s:1 { @x = args.foo; }", 21, 25,
               "The args builtin can only be used with tracepoint/kfunc/uprobeprobes (interval "
               "used here)");
}

TEST(Semantic, CpidNeedsAChild) {
  EXPECT_ERROR("BEGIN { @x = cpid; }", 14, 18, "cpid cannot be used without child command");
  SemanticOptions with_child;
  with_child.has_child = true;
  EXPECT_EQ(check("BEGIN { @x = cpid; }", with_child), "");
}

TEST(Semantic, GpuBuiltinsOnlyInGpuProbes) {
  EXPECT_ERROR("BEGIN { @x = tid_x; }", 14, 19, "tid_x is only available in gpu probes");
  EXPECT_ERROR("uprobe:/tmp/bt/app:foo { @[bid_y] = count(); }", 28, 33,
               "bid_y is only available in gpu probes");
  EXPECT_EQ(check("gpu:kprobe:vectorAdd { @[tid_x, bid_x] = count(); @t = nsecs; @p = pid; }"),
            "");
}

TEST(Semantic, HostBuiltinsNotInGpuProbes) {
  EXPECT_ERROR("gpu:kprobe:vectorAdd { @x = comm; }", 29, 33,
               "comm is not available in gpu probes");
  EXPECT_ERROR("gpu:kretprobe:vectorAdd { @x = uid; }", 32, 35,
               "uid is not available in gpu probes");
}

// gpu:hang runs in gpubt for one launch: the launch's builtins, not the current task's.
TEST(Semantic, GpuHangBuiltins) {
  EXPECT_EQ(check("gpu:hang:k { printf(\"%d %s %d %d %d %d\\n\", pid, kernel, launch_start, "
                  "gdim_x, bdim_z, nsecs); @[probe, kernel] = count(); }"),
            ""); // args.NAME: the driver's hook (gpu_hang.test)
  EXPECT_ERROR("gpu:hang:k { @x = tid; }", 19, 22,
               "tid is not available in gpu:hang probes (they run in gpubt when a launch has run "
               "too long: pid, kernel, nsecs, launch_start, gdim_*, bdim_*, probe, cpid and "
               "args.stream/device/seq/queued/exact are)");
  EXPECT_ERROR("gpu:hang:k { @x = tid_x; }", 19, 24,
               "tid_x is not available in gpu:hang probes (they run in gpubt when a launch has run "
               "too long: pid, kernel, nsecs, launch_start, gdim_*, bdim_*, probe, cpid and "
               "args.stream/device/seq/queued/exact are)");
  EXPECT_ERROR("BEGIN { @x = launch_start; }", 14, 26,
               "launch_start is only available in gpu:kretprobe, gpu:block_end and gpu:hang probes");
  // kernel stays gpu-only elsewhere on the host.
  EXPECT_ERROR("BEGIN { @x = kernel; }", 14, 20, "kernel is only available in gpu probes");
}

// launch_call: any probe on the GPU (a hidden uprobe's map, launch_call_uprobe.h) or per launch;
// not a host probe, not gpu:hang (a launch running too long has no record yet).
TEST(Semantic, LaunchCallInGpuProbes) {
  EXPECT_EQ(check("gpu:kprobe:k /tid == 0 && launch_call != 0/ { @x[kernel] = "
                  "hist((nsecs - launch_call) / 1000); } gpu:mem:k { @m = launch_call; }"),
            "");
  EXPECT_ERROR("BEGIN { @x = launch_call; }", 14, 25,
               "launch_call is only available in gpu probes (on the GPU or once per finished "
               "launch)");
  EXPECT_NE(check("gpu:hang:k { @x = launch_call; }").find("launch_call is not available in "
                                                            "gpu:hang probes"),
            std::string::npos);
}

// addr, access_size, access, space, sectors, bank_conflicts: memory probes only; barrier_id:
// gpu:barrier only.
TEST(Semantic, MemoryAndBarrierBuiltins) {
  EXPECT_EQ(check("gpu:load:global:k { @[access, space, access_size] = count(); "
                  "@s = hist(sectors); @a = max(addr); @t[tid, kernel] = count(); }"),
            "");
  EXPECT_EQ(check("gpu:barrier:k { @[barrier_id, warp] = count(); }"), "");
  EXPECT_ERROR("gpu:kprobe:k { @[addr] = count(); }", 18, 22,
               "addr is only available in gpu memory probes (gpu:mem, gpu:load, gpu:store, "
               "gpu:atomic)");
  EXPECT_ERROR("gpu:barrier:k { @ = hist(sectors); }", 26, 33,
               "sectors is only available in gpu memory probes (gpu:mem, gpu:load, gpu:store, "
               "gpu:atomic)");
  EXPECT_EQ(check("gpu:mem:k { @b = hist(bank_conflicts); } "
                  "gpu:load:shared:k { @c[kernel] = max(bank_conflicts); }"),
            "");
  EXPECT_ERROR("gpu:kprobe:k { @ = hist(bank_conflicts); }", 25, 39,
               "bank_conflicts is only available in gpu memory probes (gpu:mem, gpu:load, "
               "gpu:store, gpu:atomic)");
  // Narrowed to global or local memory, the probe never sees a shared request.
  EXPECT_ERROR("gpu:mem:local:k { @ = hist(bank_conflicts); }", 28, 42,
               "bank_conflicts counts shared-memory requests: gpu:mem:local:k only sees local "
               "ones (gpu:mem:shared:KERNEL, or gpu:mem:KERNEL where it reads 0 outside shared "
               "memory)");
  EXPECT_ERROR("gpu:store:k { @[barrier_id] = count(); }", 17, 27,
               "barrier_id is only available in gpu:barrier probes");
  EXPECT_ERROR("BEGIN { @x = access; }", 14, 20,
               "access is only available in gpu memory probes (gpu:mem, gpu:load, gpu:store, "
               "gpu:atomic)");
  EXPECT_ERROR("gpu:mem:k { @x = launch_start; }", 18, 30,
               "launch_start is only available in gpu:kretprobe, gpu:block_end and gpu:hang probes");
}

TEST(Semantic, HostFunctionsNotInGpuProbes) {
  EXPECT_ERROR("gpu:kprobe:vectorAdd { @x = str(arg0); }", 29, 38,
               "str() is not available in gpu probes");
  EXPECT_EQ(check("gpu:kprobe:vectorAdd { printf(\"%d\\n\", tid_x); @h = hist(lane); }"), "");
}

// --- calls -----------------------------------------------------------------------------------

TEST(Semantic, Arity) {
  EXPECT_ERROR("BEGIN { @x = count(1); }", 14, 22, "count() requires no arguments (1 provided)");
  EXPECT_ERROR("BEGIN { @x = sum(1, 2); }", 14, 23, "sum() requires one argument (2 provided)");
  EXPECT_ERROR("BEGIN { @x = hist(); }", 14, 20, "hist() requires one argument (0 provided)");
  EXPECT_ERROR("BEGIN { @x = lhist(1, 0, 10); }", 14, 29,
               "lhist() requires 4 arguments (3 provided)");
  EXPECT_ERROR("BEGIN { printf(); }", 9, 17, "printf() requires at least one argument (0 provided)");
  EXPECT_ERROR("BEGIN { @x = str(); }", 14, 19, "str() requires at least one argument (0 provided)");
  EXPECT_ERROR("BEGIN { @x = str(1, 2, 3); }", 14, 26, "str() takes up to 2 arguments (3 provided)");
  EXPECT_ERROR("BEGIN { time(1, 2); }", 9, 19, "time() takes up to one argument (2 provided)");
  EXPECT_ERROR("BEGIN { @x = 1; print(@x, 1, 2, 3); }", 17, 35,
               "print() takes up to 3 arguments (4 provided)");
  EXPECT_ERROR("BEGIN { @x = 1; clear(@x, 1); }", 17, 29, "clear() requires one argument (2 provided)");
  // exit(code) since bpftrace 0.22 (0.17 took no arguments).
  EXPECT_ERROR("BEGIN { exit(1, 2); }", 9, 19, "exit() takes up to one argument (2 provided)");
}

TEST(Semantic, AggregationMustBeAssignedToAMap) {
  EXPECT_ERROR("BEGIN { $x = count(); }", 14, 21, "count() should be directly assigned to a map");
  EXPECT_ERROR("BEGIN { count(); }", 9, 16, "count() should be directly assigned to a map");
  EXPECT_ERROR("BEGIN { @x = 1 + count(); }", 18, 25,
               "count() should be directly assigned to a map");
  EXPECT_ERROR("BEGIN { @x[count()] = 1; }", 12, 19,
               "count() should be directly assigned to a map");
}

TEST(Semantic, StatementsAreNotValues) {
  EXPECT_ERROR("BEGIN { @x = exit(); }", 14, 20,
               "exit() should not be used in an assignment or as a map key");
  EXPECT_ERROR("BEGIN { $x = printf(\"a\"); }", 14, 25,
               "printf() should not be used in an assignment or as a map key");
  EXPECT_ERROR("BEGIN { @x = time(); }", 14, 20,
               "time() should not be used in an assignment or as a map key");
}

TEST(Semantic, MapArguments) {
  EXPECT_ERROR("BEGIN { delete(1); }", 9, 18, "delete() expects a map to be provided");
  EXPECT_ERROR("BEGIN { clear(1); }", 9, 17, "clear() expects a map to be provided");
  EXPECT_ERROR("BEGIN { zero(1); }", 9, 16, "zero() expects a map to be provided");
  EXPECT_EQ(check("BEGIN { @x = 1; delete(@x); print(@x); print(1); }"), "");
}

TEST(Semantic, IntegerArguments) {
  EXPECT_ERROR("BEGIN { @x = hist(\"a\"); }", 14, 23,
               "hist() only supports integer arguments (string provided)");
  EXPECT_ERROR("BEGIN { @x = sum(\"a\"); }", 14, 22,
               "sum() only supports integer arguments (string provided)");
  EXPECT_ERROR("BEGIN { @x = lhist(\"a\", 0, 10, 1); }", 14, 34,
               "lhist() only supports integer arguments (string provided)");
}

TEST(Semantic, LhistBoundsAreLiterals) {
  EXPECT_ERROR("BEGIN { $a = 1; @x = lhist(1, $a, 10, 1); }", 22, 41,
               "lhist() expects a integer literal (integer provided)");
  const std::string s = "BEGIN { @x = lhist(1, $a, 10, 1); }";
  EXPECT_EQ(check(s), diag(s, 23, 25, "Undefined or undeclared variable: $a") +
                          diag(s, 14, 33, "lhist() expects a integer literal (none provided)"));
}

TEST(Semantic, LhistBounds) {
  EXPECT_ERROR("BEGIN { @x = lhist(1, 0, 10, 0); }", 14, 32, "lhist() step must be >= 1 (0 provided)");
  EXPECT_ERROR("BEGIN { @x = lhist(1, -1, 10, 1); }", 14, 33,
               "lhist() min must be non-negative (provided min -1)");
  const std::string s = "BEGIN { @x = lhist(1, 10, 0, 1); }";
  EXPECT_EQ(check(s),
            diag(s, 14, 32, "lhist() min must be less than max (provided min 10 and max 0)") +
                diag(s, 14, 32,
                     "lhist() step is too large for the given range (provided step 1 for range -10)"));
}

TEST(Semantic, StrArguments) {
  EXPECT_ERROR("BEGIN { @x = str(\"a\"); }", 14, 22,
               "str() expects an integer or a pointer type as first argument (string[2] provided)");
  EXPECT_ERROR("BEGIN { @x = str(1, \"a\"); }", 14, 25,
               "str() only supports integer arguments (string provided)");
  EXPECT_EQ(check("BEGIN { @x = str(1); @y = str(1, 5); }"), "");
}

TEST(Semantic, TimeFormatIsALiteral) {
  EXPECT_ERROR("BEGIN { time(1); }", 9, 16, "time() expects a string literal (integer provided)");
  EXPECT_EQ(check("BEGIN { time(\"%H\"); time(); }"), "");
}

// --- printf ----------------------------------------------------------------------------------

TEST(Semantic, PrintfFormatIsALiteral) {
  EXPECT_ERROR("BEGIN { printf(1); }", 9, 18, "printf() expects a string literal (integer provided)");
}

TEST(Semantic, PrintfArgumentCount) {
  EXPECT_ERROR("BEGIN { printf(\"%d %d\\n\", 1); }", 9, 29,
               "printf: Not enough arguments for format string (1 supplied, 2 expected)");
  EXPECT_ERROR("BEGIN { printf(\"%d\\n\", 1, 2); }", 9, 29,
               "printf: Too many arguments for format string (2 supplied, 1 expected)");
  // bpftrace ignores conversions it does not know.
  EXPECT_ERROR("BEGIN { printf(\"%z\\n\", 1); }", 9, 26,
               "printf: Too many arguments for format string (1 supplied, 0 expected)");
}

TEST(Semantic, PrintfArgumentTypes) {
  EXPECT_ERROR("BEGIN { printf(\"%d\\n\", \"a\"); }", 9, 28,
               "printf: %d specifier expects a value of type integer (string supplied)");
  EXPECT_ERROR("BEGIN { printf(\"%s\\n\", 1); }", 9, 26,
               "printf: %s specifier expects a value of type string (integer supplied)");
  EXPECT_ERROR("BEGIN { printf(\"%d\\n\", (1,2)); }", 9, 30,
               "printf: %d specifier expects a value of type integer (tuple supplied)");
  EXPECT_ERROR("BEGIN { @x = count(); printf(\"%d\\n\", @x); }", 23, 41,
               "printf: %d specifier expects a value of type integer (count supplied)");
  EXPECT_ERROR("uprobe:/tmp/bt/app:foo { printf(\"%d\\n\", func); }", 26, 46,
               "printf: %d specifier expects a value of type integer (string supplied)");
  EXPECT_ERROR("BEGIN { printf(\"%lld\\n\", \"a\"); }", 9, 30,
               "printf: %lld specifier expects a value of type integer (string supplied)");
  EXPECT_ERROR("BEGIN { printf(\"%-3s\\n\", 1); }", 9, 28,
               "printf: %s specifier expects a value of type string (integer supplied)");
  EXPECT_EQ(check("BEGIN { printf(\"%s %s %d\\n\", comm, probe, pid); "
                  "printf(\"%5d %-3s %08x %lld %llu %hhd %%\\n\", 1, \"a\", 2, 3, 4, 5); }"),
            "");
}

// --- operators -------------------------------------------------------------------------------

TEST(Semantic, BinaryTypeMismatch) {
  EXPECT_ERROR("BEGIN { @x = \"a\" + 1; }", 14, 21,
               "Type mismatch for '+': comparing 'string[2]' with 'int64'");
  EXPECT_ERROR("BEGIN { @x = 1 == \"a\"; }", 14, 22,
               "Type mismatch for '==': comparing 'int64' with 'string[2]'");
  EXPECT_ERROR("BEGIN { @x = 1 && \"a\"; }", 14, 22,
               "Type mismatch for '&&': comparing 'int64' with 'string[2]'");
  EXPECT_ERROR("BEGIN { if (comm != 1) {} }", 13, 22,
               "Type mismatch for '!=': comparing 'string[16]' with 'int64'");
}

TEST(Semantic, StringsOnlyCompareForEquality) {
  EXPECT_ERROR("BEGIN { @x = \"a\" + \"b\"; }", 18, 19,
               "The + operator can not be used on expressions of types string[2], string[2]");
  EXPECT_ERROR("BEGIN { @x = \"a\" < \"b\"; }", 18, 19,
               "The < operator can not be used on expressions of types string[2], string[2]");
  EXPECT_EQ(check("BEGIN { if (comm == \"bash\") {} if (\"bash\" != comm) {} }"), "");
}

// bpftrace's head adds and compares count(), sum(), min(), max() and avg() maps as integers
// (0.17 refused them); the other aggregations are not numbers.
TEST(Semantic, CastableAggregationMapsAreIntegers) {
  EXPECT_EQ(check("BEGIN { @x = count(); @y = @x + 1; if (@x > 2) {} @a = avg(1); @z = @a * 2; }"),
            "");
  EXPECT_ERROR("BEGIN { @x = hist(1); @y = @x + 1; }", 28, 34,
               "Type mismatch for '+': comparing 'hist' with 'int64'");
  EXPECT_ERROR("BEGIN { @x = stats(1); @y = @x / 2; }", 29, 35,
               "Type mismatch for '/': comparing 'stats' with 'int64'");
  EXPECT_EQ(check("BEGIN { @x = count(); $y = @x; }"), "");
}

TEST(Semantic, UnaryOnStrings) {
  EXPECT_ERROR("BEGIN { @x = -\"a\"; }", 14, 15,
               "The - operator can not be used on expressions of type 'string[2]'");
  EXPECT_ERROR("BEGIN { @x = !\"a\"; }", 14, 15,
               "The ! operator can not be used on expressions of type 'string[2]'");
  EXPECT_ERROR("BEGIN { $x = \"a\"; $x++; }", 19, 23,
               "The ++ operator can not be used on expressions of type 'string[2]'");
  EXPECT_ERROR("BEGIN { @x = count(); @x++; }", 23, 27,
               "The ++ operator can not be used on expressions of type 'count'");
}

TEST(Semantic, Ternary) {
  EXPECT_ERROR("BEGIN { @x = \"a\" ? 1 : 2; }", 14, 25, "Invalid condition in ternary: string");
  EXPECT_ERROR("BEGIN { @x = 1 ? 1 : \"a\"; }", 14, 25,
               "Ternary operator must return the same type: have 'integer' and 'string'");
}

// bpftrace reports this at 1:1-1 with an empty underline; gpubt points at the condition.
TEST(Semantic, IfConditionMustBeAnInteger) {
  EXPECT_ERROR("BEGIN { if (\"a\") { } }", 13, 16, "Invalid condition in if(): string");
}

TEST(Semantic, Casts) {
  // (foo)1 and (uint128)1 are syntax errors in gpubt's grammar, which knows no structs.
  EXPECT_ERROR("BEGIN { @x = (int8)comm; }", 14, 20, "Casts are not supported for type: \"string[16]\"");
}

TEST(Semantic, SignWarnings) {
  EXPECT_EQ(check("BEGIN { if (pid > -1) {} }"),
            diag("BEGIN { if (pid > -1) {} }", 17, 18,
                 "comparison of integers of different signs: 'unsigned int64' and 'int64' can "
                 "lead to undefined behavior",
                 "WARNING"));
  EXPECT_EQ(check("BEGIN { @a = pid - -1; }"),
            diag("BEGIN { @a = pid - -1; }", 18, 19,
                 "arithmetic on integers of different signs: 'unsigned int64' and 'int64' can "
                 "lead to undefined behavior",
                 "WARNING"));
  EXPECT_EQ(check("BEGIN { $x = -1; @h = $x / 2; }"),
            diag("BEGIN { $x = -1; @h = $x / 2; }", 26, 27,
                 "signed operands for '/' can lead to undefined behavior (cast to unsigned to "
                 "silence warning)",
                 "WARNING"));
  // A non-negative literal never warns.
  EXPECT_EQ(check("BEGIN { if (pid == 1) {} @x = pid + 1; @y = pid / 2; }"), "");
}

TEST(Semantic, FinalPassErrorsWaitForFirstPassOnes) {
  const std::string s = "BEGIN { @x = \"a\" + 1; @y = foo; }";
  EXPECT_EQ(check(s), diag(s, 28, 31, "Unknown identifier: 'foo'"));
}

// --- maps and variables ------------------------------------------------------------------------

TEST(Semantic, MapValueTypeMismatch) {
  // bpftrace 0.17 leaves the closing quote off this message.
  EXPECT_ERROR("BEGIN { @x = 1; @x = \"a\"; }", 17, 19,
               "Type mismatch for @x: trying to assign value of type 'string[2]' when map already "
               "contains a value of type 'int64");
  EXPECT_ERROR("BEGIN { @x = count(); @x = 1; }", 23, 25,
               "Type mismatch for @x: trying to assign value of type 'int64' when map already "
               "contains a value of type 'count");
  EXPECT_ERROR("BEGIN { @x = count(); @x = sum(1); }", 23, 25,
               "Type mismatch for @x: trying to assign value of type 'sum' when map already "
               "contains a value of type 'count");
  EXPECT_EQ(check("BEGIN { @x = 1; @x = (uint8)1; @x = (int32)-1; @n = nsecs; @n = 1; }"), "");
}

TEST(Semantic, MapKeyMismatch) {
  EXPECT_ERROR("BEGIN { @x[1] = 1; @x[\"a\"] = 1; }", 20, 27,
               "Argument mismatch for @x: trying to access with arguments: [string[2]] when map "
               "expects arguments: [unsigned int64]");
  EXPECT_ERROR("BEGIN { @x[1] = 1; @x[1,2] = 1; }", 20, 27,
               "Argument mismatch for @x: trying to access with arguments: [unsigned int64, "
               "unsigned int64] when map expects arguments: [unsigned int64]");
  EXPECT_ERROR("BEGIN { @x[1] = 1; @x = 1; }", 20, 22,
               "Argument mismatch for @x: trying to access with arguments: [] when map expects "
               "arguments: [unsigned int64]");
  EXPECT_ERROR("BEGIN { @x = 1; @x[1] = 1; }", 17, 22,
               "Argument mismatch for @x: trying to access with arguments: [unsigned int64] when "
               "map expects arguments: []");
  EXPECT_ERROR("BEGIN { @x[1, \"ab\"] = 1; @x[\"a\"] = 1; }", 26, 33,
               "Argument mismatch for @x: trying to access with arguments: [string[2]] when map "
               "expects arguments: [unsigned int64, string[3]]");
  EXPECT_ERROR("BEGIN { @x[\"a\"] = 1; @x[\"abc\"] = 1; @x[1]=2; }", 37, 42,
               "Argument mismatch for @x: trying to access with arguments: [unsigned int64] when "
               "map expects arguments: [string[4]]");
  // bpftrace 0.22's words for delete() without a key (it was an argument mismatch in 0.17).
  EXPECT_ERROR("BEGIN { @x[1] = 1; delete(@x); }", 20, 30,
               "call to delete() with a single argument expects a map without explicit keys "
               "(scalar map)");
  EXPECT_ERROR("BEGIN { @x = 1; has_key(@x, 1); }", 17, 31,
               "call to has_key() expects a map with explicit keys (non-scalar map)");
  EXPECT_EQ(check("BEGIN { @x[1] = 1; @x[pid] = 1; @x[(int8)-1] = 1; }"), "");
}

// Since bpftrace 0.21 a map's keys are one tuple: @x[(1, "a")] is @x[1, "a"].
TEST(Semantic, TupleIsTheWholeKey) {
  EXPECT_EQ(check("BEGIN { @x[(1,\"a\")] = 1; @x[2, \"b\"] = 1; $t = (3, \"c\"); @x[$t] = 2; }"), "");
  EXPECT_ERROR("BEGIN { @x[1] = 1; @x[(1, 2)] = 1; }", 20, 30,
               "Argument mismatch for @x: trying to access with arguments: [unsigned int64, "
               "unsigned int64] when map expects arguments: [unsigned int64]");
}

TEST(Semantic, TupleValueMismatch) {
  EXPECT_ERROR("BEGIN { @x = (1, \"a\"); @x = (\"bc\", 1); }", 27, 28,
               "Tuple type mismatch: (int64,string[2]) != (string[3],int64).");
  EXPECT_ERROR("BEGIN { @x = (1, 2); @x = (1, 2, 3); }", 25, 26,
               "Tuple type mismatch: (int64,int64) != (int64,int64,int64).");
  EXPECT_EQ(check("BEGIN { @x = (1, \"a\"); @x = (2, \"bc\"); }"), "");
}

TEST(Semantic, TupleIndex) {
  const std::string s = "BEGIN { $t = (1, 2); @x = $t.0; @y = $t.5; }";
  EXPECT_EQ(check(s), diag(s, 38, 42, "Invalid tuple index: 5. Found 2 elements in tuple.") +
                          diag(s, 33, 35, "Undefined map: @y") +
                          diag(s, 38, 42, "Invalid expression for assignment: none"));
  const std::string t = "BEGIN { $t = 1; @x = $t.0; }";
  EXPECT_EQ(check(t), diag(t, 22, 26, "Can not access index 0 on expression of type 'int64'") +
                          diag(t, 17, 19, "Undefined map: @x") +
                          diag(t, 22, 26, "Invalid expression for assignment: none"));
}

TEST(Semantic, VariableTypeMismatch) {
  EXPECT_ERROR("BEGIN { $x = 1; $x = \"a\"; }", 20, 21,
               "Type mismatch for $x: trying to assign value of type 'string[2]' when variable "
               "already contains a value of type 'int64'");
  EXPECT_EQ(check("BEGIN { $x = 1; $x = pid; $s = \"a\"; $s = \"abc\"; $u = (uint8)1; $u = 1000; }"),
            "");
}

// --- resolved types (what codegen relies on) ---------------------------------------------------

const Type &map_value(const Checked &c, const std::string &name) {
  return c.info.maps.at(name).value;
}

TEST(SemanticTypes, BuiltinTypes) {
  auto c = analyse("uprobe:/tmp/bt/app:foo { @a = arg0; @b = tid; @c = comm; @d = func; "
                   "@e = probe; @f = nsecs; @g = cgroup; @h = uid; }");
  ASSERT_EQ(c.diags, "");
  EXPECT_EQ(map_value(c, "@a"), Type::integer(8, false));
  EXPECT_EQ(map_value(c, "@b"), Type::integer(8, false));
  EXPECT_EQ(map_value(c, "@c"), Type::string(16));
  EXPECT_EQ(map_value(c, "@d").kind, TypeKind::UserSym);
  EXPECT_EQ(map_value(c, "@e").kind, TypeKind::Probe);
  EXPECT_EQ(map_value(c, "@f"), Type::integer(8, false));
  EXPECT_EQ(map_value(c, "@g"), Type::integer(8, false));
  EXPECT_EQ(map_value(c, "@h"), Type::integer(8, false));
  auto r = analyse("uretprobe:/tmp/bt/app:foo { @r = retval; }");
  EXPECT_EQ(map_value(r, "@r"), Type::integer(8, false));
}

TEST(SemanticTypes, ExpressionTypes) {
  auto c = analyse("uprobe:/tmp/bt/app:foo { @a = arg0 + 1; @b = 1 < 2; @c = \"a\" == \"b\"; "
                   "@d = (int8)1 + (uint8)2; @e = 1 ? \"a\" : \"bcd\"; @f = -arg0; @g = ~1; "
                   "@h = str(arg0); @i = 1 ? 1 : arg0; @j = 5 / 2; }");
  ASSERT_EQ(c.diags.find("ERROR"), std::string::npos) << c.diags;
  EXPECT_EQ(map_value(c, "@a"), Type::integer(8, false));
  EXPECT_EQ(map_value(c, "@b"), Type::integer(8, true));
  EXPECT_EQ(map_value(c, "@c"), Type::integer(8, false));
  EXPECT_EQ(map_value(c, "@d"), Type::integer(8, false));
  EXPECT_EQ(map_value(c, "@e"), Type::string(64));
  EXPECT_EQ(map_value(c, "@f"), Type::integer(8, false));
  EXPECT_EQ(map_value(c, "@g"), Type::integer(8, true));
  EXPECT_EQ(map_value(c, "@h"), Type::string(64));
  EXPECT_EQ(map_value(c, "@i"), Type::integer(8, true));
  EXPECT_EQ(map_value(c, "@j"), Type::integer(8, true));
}

TEST(SemanticTypes, MapValuesWidenIntegersVariablesDoNot) {
  auto c = analyse("BEGIN { $q = (uint8)1; @q = $q; @n = nsecs; @n = -1; @t = (1, (uint8)2); }");
  const Probe *p = c.program->probes[0].get();
  EXPECT_EQ(c.info.vars.at(p).at("$q"), Type::integer(1, false));
  EXPECT_EQ(map_value(c, "@q"), Type::integer(8, false));
  EXPECT_EQ(map_value(c, "@n"), Type::integer(8, false)); // the first assignment decides
  EXPECT_EQ(map_value(c, "@t"), Type::tuple({Type::integer(), Type::integer(1, false)}));
}

TEST(SemanticTypes, StringsTakeTheLargestSize) {
  auto c = analyse("BEGIN { @x = comm; @x = \"abcdefghijklmnopqrstu\"; $v = \"a\"; $v = \"abcd\"; "
                   "@v = $v; @t = (1, \"a\"); @t = (2, \"bcd\"); @k[\"a\"] = 1; @k[\"abc\"] = 2; }");
  ASSERT_EQ(c.diags, "");
  EXPECT_EQ(map_value(c, "@x"), Type::string(22));
  EXPECT_EQ(map_value(c, "@v"), Type::string(5));
  EXPECT_EQ(map_value(c, "@t"), Type::tuple({Type::integer(), Type::string(4)}));
  EXPECT_EQ(c.info.maps.at("@k").key, Type::string(4));
}

// bpftrace head's casts to arrays (its type_checker's rules) and typeof().
TEST(SemanticTypes, ArrayCastsAndTypeof) {
  auto c = analyse("begin { @a = (int8[8])1; @b = (uint8[])\"hey\"; @c = (bool[2])(uint16)1; "
                   "@d = (int16[])(int32)1; $x = (uint32)1; let $y: typeof($x); @y = (int8[])$y; }");
  ASSERT_EQ(c.diags, "");
  EXPECT_EQ(map_value(c, "@a"), Type::array(Type::integer(1, true), 8));
  EXPECT_EQ(map_value(c, "@b"), Type::array(Type::integer(1, false), 4));
  EXPECT_EQ(map_value(c, "@c"), Type::array(Type::boolean(), 2));
  EXPECT_EQ(map_value(c, "@d"), Type::array(Type::integer(2, true), 2));
  EXPECT_EQ(map_value(c, "@y"), Type::array(Type::integer(1, true), 4)); // $y is a uint32

  EXPECT_ERROR("begin { @y = (int8[2])\"abc\"; }", 14, 28,
               "Cannot cast from \"string[4]\" to \"int8[2]\"");
  EXPECT_ERROR("begin { @v = (int8[16])1; }", 14, 25,
               "Cannot cast from \"int64\" to \"int8[16]\"");
  EXPECT_ERROR("begin { @v = (int32[])(int16)1; }", 14, 31,
               "Cannot determine array size: the element size is incompatible with the cast "
               "integer size");
  EXPECT_ERROR("begin { @z = (typeof(\"ab\")[2])1; }", 14, 32,
               "Cannot cast to an array of \"string[3]\": arrays are of integer or bool elements");
  EXPECT_ERROR("gpu:kprobe:k < $a = (int8[8])1; >", 21, 31,
               "casts to arrays are not available in gpu probes");
  EXPECT_ERROR("begin { print((struct Nope[2])1); }", 15, 32, "Unknown struct/union: 'struct Nope'");
  // typeof(x) is not evaluated, but what x names must exist (a `let` variable in its scope).
  EXPECT_ERROR("begin { let $y: typeof(@nope); }", 24, 29, "Undefined map: @nope");
  EXPECT_EQ(check("begin { let $a = (int16)1; let $y: typeof($a) = 3; @s = sizeof(typeof($a)); }"),
            "");
}

// uint64_t, size_t, u32, ... are there without C definitions for clang to read.
TEST(SemanticTypes, PreludeTypedefsWithoutCDefinitions) {
  auto c = analyse("begin { @a = sizeof(uint64_t); @b = (int8_t *)0; @c = sizeof(u16); }");
  ASSERT_EQ(c.diags, "");
  EXPECT_EQ(map_value(c, "@b"), Type::pointer(Type::integer(1, true)));
  EXPECT_ERROR("begin { $x = u8; }", 14, 16, "'u8' is a type: it can only be used in sizeof() or a cast");
}

// GPUBT_OUTPUT_STYLE=head: comparisons and && || are bpftrace head's bools; 0.17's are int64.
TEST(SemanticTypes, ComparisonsAreBoolsInHeadsTypes) {
  const char *script = "begin { @a = 1 < 2; @b = (1 && 0); @c = \"a\" == \"b\"; @d = 1 + 2; }";
  SemanticOptions head;
  head.head_types = true;
  auto h = analyse(script, head);
  ASSERT_EQ(h.diags, "");
  EXPECT_TRUE(map_value(h, "@a").is_bool); // (as a map value, 8 bytes)
  EXPECT_TRUE(map_value(h, "@b").is_bool);
  EXPECT_TRUE(map_value(h, "@c").is_bool);
  EXPECT_EQ(map_value(h, "@d"), Type::integer());
  auto v017 = analyse(script);
  EXPECT_EQ(map_value(v017, "@a"), Type::integer());
  EXPECT_EQ(map_value(v017, "@c"), Type::integer(8, false));
}

// GPUBT_OUTPUT_STYLE=head: a literal is the smallest signed integer holding it; variables and
// tuple elements grow to the widest assigned, `$x++` to 64 bits; map values stay 64 bits.
TEST(SemanticTypes, LiteralsSizedInHeadsTypes) {
  const char *script = "begin { $a = 1; $b = 1; $b = 1000; $c = 0; $c++; $t = (1, 2); "
                       "$t = (70000, 3); @m = 1; @s = (sizeof($a), sizeof($b), sizeof($c), "
                       "sizeof($t), sizeof(-129)); }";
  SemanticOptions head;
  head.head_types = true;
  auto h = analyse(script, head);
  ASSERT_EQ(h.diags, "");
  const auto &vars = h.info.vars.begin()->second;
  EXPECT_EQ(vars.at("$a"), Type::integer(1, true));
  EXPECT_EQ(vars.at("$b"), Type::integer(2, true));
  EXPECT_EQ(vars.at("$c"), Type::integer(8, true));
  EXPECT_EQ(vars.at("$t"), Type::tuple({Type::integer(4, true), Type::integer(1, true)}));
  EXPECT_EQ(map_value(h, "@m"), Type::integer());
  auto v017 = analyse(script);
  EXPECT_EQ(v017.info.vars.begin()->second.at("$a"), Type::integer());
}

TEST(SemanticTypes, MapKeys) {
  auto c = analyse("BEGIN { @s = 1; @one[(uint8)1] = 1; @two[(int16)1, \"ab\"] = (int32)2; }");
  ASSERT_EQ(c.diags, "");
  EXPECT_EQ(c.info.maps.at("@s").key, Type::none());
  EXPECT_EQ(c.info.maps.at("@one").key, Type::integer(8, false));
  EXPECT_EQ(c.info.maps.at("@two").key, Type::tuple({Type::integer(8, true), Type::string(3)}));
  EXPECT_EQ(map_value(c, "@two"), Type::integer(8, true));
}

TEST(SemanticTypes, Aggregations) {
  auto c = analyse("BEGIN { @c[1] = count(); @s = sum(-1); @h = hist(1); @l = lhist(1, 0, 10, 2); "
                   "$y = @c[1]; }");
  ASSERT_EQ(c.diags, "");
  EXPECT_EQ(map_value(c, "@c").kind, TypeKind::Count);
  EXPECT_EQ(map_value(c, "@s").kind, TypeKind::Sum);
  EXPECT_TRUE(map_value(c, "@s").is_signed);
  EXPECT_EQ(map_value(c, "@h").kind, TypeKind::Hist);
  const Type &l = map_value(c, "@l");
  EXPECT_EQ(l.kind, TypeKind::Lhist);
  EXPECT_EQ(l.lhist_min, 0);
  EXPECT_EQ(l.lhist_max, 10);
  EXPECT_EQ(l.lhist_step, 2);
}

TEST(SemanticTypes, MapTypedFromALaterProbe) {
  auto c = analyse("BEGIN { @y = @x; } END { @x = \"abc\"; @z++; }");
  ASSERT_EQ(c.diags, "");
  EXPECT_EQ(map_value(c, "@y"), Type::string(4));
  EXPECT_EQ(map_value(c, "@z"), Type::integer());
}

TEST(SemanticTypes, ArgsFieldsThroughTheResolver) {
  SemanticOptions opts;
  opts.field_type = [](const AttachPoint &ap, std::string_view field) -> std::optional<Type> {
    if (ap.provider == Provider::Tracepoint && field == "count")
      return Type::integer(8, false);
    return std::nullopt;
  };
  auto c = analyse("tracepoint:syscalls:sys_enter_read { @n = args.count; }", opts);
  ASSERT_EQ(c.diags, "");
  EXPECT_EQ(map_value(c, "@n"), Type::integer(8, false));
}

} // namespace
} // namespace gpubt::frontend
