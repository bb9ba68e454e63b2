// Data objects of a process by address (HIP's kernel handles are the addresses of data objects
// named like the kernel), also after the process has exited.
#pragma once
#include <cstdint>
#include <string>

namespace gpubt::runtime {

// Saves PID's file mappings (all of them, data too) for object lookups after it exits.
void remember_file_mappings(int pid);

// The OBJECT symbol of PID's mapped file that covers ADDR; "" when none does.
std::string object_symbol(int pid, uint64_t addr);

} // namespace gpubt::runtime
