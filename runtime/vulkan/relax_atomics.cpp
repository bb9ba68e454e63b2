// Memory semantics operands rewritten to Relaxed (see relax_atomics.h).
#include "runtime/vulkan/relax_atomics.h"

#include "runtime/abi/spirv_words.h"

namespace gpubt::runtime::vulkan {

using namespace spirv;

namespace {

constexpr uint16_t kOpMemoryBarrier = 225, kOpAtomicExchange = 229,
                   kOpAtomicCompareExchangeWeak = 231, kOpAtomicXor = 242;

// Where INST's memory semantics operands are (operand indices, without the opcode word).
std::vector<size_t> semantics_operands(const Inst &in) {
  switch (in.op) {
  case OpAtomicStore: // pointer, scope, semantics, value
    return {2};
  case OpAtomicCompareExchange: // type, result, pointer, scope, equal, unequal, ...
  case kOpAtomicCompareExchangeWeak:
    return {4, 5};
  default: // type, result, pointer, scope, semantics, ... (exchange, increment, add .. xor)
    if (in.op == OpAtomicLoad || (in.op >= kOpAtomicExchange && in.op <= kOpAtomicXor))
      return {4};
    return {};
  }
}

} // namespace

std::vector<uint32_t> relax_atomics(const std::vector<uint32_t> &module) {
  Module m;
  if (!m.parse(module.data(), module.size()))
    return module;
  uint32_t relaxed = m.u32(0);
  std::vector<Inst> out;
  for (auto &in : m.insts) {
    if (in.op == kOpMemoryBarrier)
      continue;
    for (size_t at : semantics_operands(in))
      if (at < in.w.size())
        in.w[at] = relaxed;
    out.push_back(std::move(in));
  }
  m.insts = std::move(out);
  return m.words();
}

} // namespace gpubt::runtime::vulkan
