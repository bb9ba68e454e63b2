// C definitions of kernel types from the running kernel's BTF (/sys/kernel/btf/vmlinux), for
// the `struct X` a script names without defining, as bpftrace 0.17 does when BTF is present.
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>

namespace gpubt::frontend {

// Whether the running kernel has BTF (then scripts see BPFTRACE_HAVE_BTF defined).
bool kernel_btf_available();

// C text defining NAMES ("struct sock", "union bpf_attr", a typedef name), what they hold by
// value, and the records their members point at (two hops: `p->a->b->c` works); libbpf's
// btf_dump orders them. Names the kernel's BTF does not have are left out.
// "enumerator NAME" asks for the enum that defines the constant NAME (sizeof(BTF_VAR_STATIC)).
std::string kernel_type_definitions(const std::set<std::string> &names);

// The BTF id of the kernel's per-CPU variable NAME (a VAR of its .data..percpu section), for
// percpu_kaddr(); none without BTF or such a variable.
std::optional<uint32_t> kernel_percpu_var_id(const std::string &name);
constexpr const char *kEnumerator = "enumerator ";

} // namespace gpubt::frontend
