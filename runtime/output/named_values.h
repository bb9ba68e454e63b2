// The texts of values printed in a form of their own: buf() bytes with escapes, ntop()
// addresses, MAC addresses, strerror(), user names and cgroup paths (bpftrace 0.17's forms).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace gpubt::runtime {

// How buf() bytes print: %r (printable ASCII as it is, other bytes as \xNN), %rx (every byte
// as \xNN), %rh (every byte as two hex digits, separated by spaces).
enum class BufferStyle { Printable, Escaped, Hex };
std::string buffer_text(std::string_view bytes, BufferStyle style = BufferStyle::Printable);

// ntop(): AF_INET (the first 4 bytes) or AF_INET6 (16 bytes) of `addr`; "" for other families.
std::string inet_text(uint64_t family, const uint8_t *addr);
std::string mac_text(const uint8_t *addr); // 6 bytes, "00:1A:2B:3C:4D:5E"
std::string errno_text(int64_t err);       // strerror(3)
std::string signal_text(int64_t sig);      // bpftrace's signal_name(): "Interrupt", "N/A"
std::string user_name(uint64_t uid);       // the uid's name, or the number if it has none
// printf's %gr (bpftrace head): GFP allocation flags by name, as the kernel's %pGg prints them
// ("GFP_KERNEL|__GFP_ZERO"; bits with no name in hex, "0" for none).
std::string gfp_flags_text(uint64_t flags);

// The cgroup's path in each mounted hierarchy where it exists, "unified:/a/b,cpu:/a/b" (the
// cgroup v2 hierarchy is "unified"; v1 ones by their controllers or name=).
std::string cgroup_paths(uint64_t cgroup_id);

} // namespace gpubt::runtime
