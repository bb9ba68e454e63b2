// The ids of the builtin and function tables (stdlib/builtins.h, stdlib/functions.h). They live
// here so that the syntax tree can hold them: stdlib includes the AST, not the other way.
#pragma once

namespace gpubt::frontend {

enum class BuiltinId {
  Pid, Tid, Uid, Gid, Cpu, Comm, Nsecs, Elapsed, Cgroup, Cpid, Rand, Username, Curtask,
  Numaid, Ctx,
  // bpftrace 0.21-0.24's: the possible CPUs, jiffies64, 1 in user mode, the probe's type name,
  // nsecs(boot) and nsecs(tai) (nsecs(sw_tai) too: the kernel's TAI clock)
  Ncpus, Jiffies, Usermode, Probetype, NsecsBoot, NsecsTai,
  Arg,  // arg0..arg9: BuiltinExpr::arg_index says which
  Sarg, // sarg0..sarg9: the probed function's stack arguments; BuiltinExpr::arg_index says which
  Retval, Func, Probe, Args,
  Ustack, // the user call stack (host uprobes, uretprobes, tracepoints)
  Kstack, // the kernel call stack
  Pystack, // the Python call stack of the thread's CPython interpreter (host probes)
  // gpu only
  TidX, TidY, TidZ, BidX, BidY, BidZ, BdimX, BdimY, BdimZ, GdimX, GdimY, GdimZ,
  Lane, Warp, Sm, Clock, Kernel,
  ActiveLanes, // the warp's lanes active at the probe (CUDA's __activemask())
  LaunchStart, LastThread, // gpu:kretprobe only: per launch (device_abi.h launch_start)
  LaunchCall, // a launch-level gpu:kretprobe only: the host's launch call (CUPTI's record of it)
  // gpu memory probes only: the access's address, bytes, kind, space, the 32-byte sectors its
  // warp-level request touches and the request's shared-memory bank conflicts; gpu:barrier
  // only: the barrier's number
  Addr, AccessSize, Access, Space, Sectors, BankConflicts, BarrierId,
};

// One id per row of the function table.
enum class FunctionId {
  Count, Sum, Avg, Min, Max, Stats, Hist, Lhist, Tseries, // aggregations
  Printf, Print, Clear, Delete, Zero, Exit, Time, System, Cat, // statements
  Str, Kname, Deref, Reg, Bswap, Strncmp, Sizeof, Strftime, // values
  Buf, Ntop, Pton, Usym, Kaddr, Uaddr, CgroupPath, Strcontains, Strerror, SignalName, Macaddr, Join,
  Uptr, Kptr, // p itself, said to be a user or kernel address
  NcclRank, NcclNranks, NcclCommId, NcclSeq, NcclNested, // an NCCL communicator (codegen/bpf/lower_nccl.h)
  HasKey, // has_key(@m, k): bpftrace 0.22's
  Len, // len(@m): how many keys the map has
  Strlen,
  Errorf, Warnf, // printf to stderr as a diagnostic of the call's place
  PercpuKaddr,    // percpu_kaddr("var"[, cpu]): a kernel per-CPU variable's address on a CPU
  Debugf, // printf into the kernel's trace buffer (bpf_trace_printk)
  Popcount, // the number of bits set (host and gpu)
};

} // namespace gpubt::frontend
