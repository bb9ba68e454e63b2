// The probe points' words (probe_point.h).
#include "runtime/abi/probe_point.h"

#include <cerrno>
#include <cstdlib>

namespace gpubt::abi {

const char *probe_point_name(ProbePointKind kind) {
  switch (kind) {
  case ProbePointKind::Entry:
    return "enter";
  case ProbePointKind::Exit:
    return "exit";
  case ProbePointKind::Launch:
    return "launch";
  case ProbePointKind::MemoryAccess:
    return "memory";
  case ProbePointKind::Barrier:
    return "barrier";
  }
  std::abort(); // BUG: a ProbePointKind without its word
}

const char *memory_space_name(uint32_t bit) {
  switch (bit) {
  case AccessGlobal:
    return "global";
  case AccessShared:
    return "shared";
  case AccessLocal:
    return "local";
  }
  return nullptr;
}

uint32_t memory_space_flag(uint32_t bit) {
  switch (bit) {
  case AccessGlobal:
    return FlagGlobal;
  case AccessShared:
    return FlagShared;
  case AccessLocal:
    return FlagLocal;
  }
  return 0;
}

std::string memory_space_patch(const std::string &patch, uint32_t bit) {
  const char *space = memory_space_name(bit);
  return patch + "_" + (space ? space : "?");
}

std::vector<int> probe_param_bits(ProbePointKind kind) {
  switch (kind) {
  case ProbePointKind::MemoryAccess:
    return {64, 64, 64, 32, 32, 64};
  case ProbePointKind::Barrier:
    return {64, 64, 32, 32, 32};
  default:
    return {64, 64};
  }
}

std::string probe_point_text(const ProbePoint &p) {
  std::string s = probe_point_name(p.kind);
  if (p.access)
    s += ":" + std::to_string(p.access);
  return s;
}

bool parse_probe_point(const std::string &text, ProbePoint &out) {
  size_t colon = text.find(':');
  std::string name = text.substr(0, colon);
  for (int k = 0; k < kProbePointKinds; ++k) {
    auto kind = static_cast<ProbePointKind>(k);
    if (name != probe_point_name(kind))
      continue;
    out = {kind, 0};
    if (colon == std::string::npos)
      return true;
    const char *arg = text.c_str() + colon + 1;
    char *end = nullptr;
    errno = 0;
    unsigned long v = std::strtoul(arg, &end, 10);
    out.access = static_cast<uint32_t>(v);
    return kind == ProbePointKind::MemoryAccess && *arg >= '0' && *arg <= '9' && *end == 0 &&
           errno == 0 && v > 0 && v <= (AccessKinds | AccessSpaces);
  }
  return false;
}

} // namespace gpubt::abi
