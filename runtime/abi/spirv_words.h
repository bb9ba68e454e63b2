// A SPIR-V module as words, read and edited instruction by instruction: what the SPIR-V target
// (targets/spirv) and the Vulkan layer (runtime/vulkan) both need, std only.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gpubt::spirv {

constexpr uint32_t kMagic = 0x07230203;
constexpr size_t kHeaderWords = 5; // magic, version, generator, bound, schema

// Opcodes, storage classes and enums used by gpubt (SPIR-V 1.6 unified spec numbering).
enum Op : uint16_t {
  OpName = 5, OpExtension = 10, OpExtInstImport = 11, OpMemoryModel = 14, OpEntryPoint = 15,
  OpExecutionMode = 16, OpCapability = 17, OpTypeVoid = 19, OpTypeInt = 21, OpTypeVector = 23,
  OpTypePointer = 32, OpTypeFunction = 33, OpTypeForwardPointer = 39, OpConstant = 43,
  OpFunction = 54, OpFunctionParameter = 55, OpFunctionEnd = 56, OpFunctionCall = 57,
  OpVariable = 59, OpLoad = 61, OpStore = 62, OpDecorate = 71, OpCompositeExtract = 81,
  OpBitcast = 124, OpAtomicLoad = 227, OpAtomicStore = 228, OpAtomicCompareExchange = 230,
  OpLoopMerge = 246, OpSelectionMerge = 247, OpLabel = 248, OpBranch = 249,
  OpBranchConditional = 250, OpSwitch = 251, OpReturn = 253, OpReturnValue = 254, OpSource = 3,
  OpReadClockKHR = 5056,
};
enum : uint32_t {
  StorageInput = 1, StorageFunction = 7, StorageBuffer = 12, StoragePhysicalBuffer = 5349,
  CapShader = 1, CapInt64 = 11, CapInt64Atomics = 12, CapLinkage = 5, CapInt8 = 39,
  CapPhysicalStorageBufferAddresses = 5347, CapStorageBuffer8BitAccess = 4448,
  CapGroupNonUniform = 61, CapGroupNonUniformBallot = 64, CapGroupNonUniformShuffle = 65,
  CapShaderClockKHR = 5055,
  AddressingLogical = 0, AddressingPhysicalStorageBuffer64 = 5348, MemoryGLSL450 = 1,
  DecorationBuiltIn = 11, DecorationArrayStride = 6, DecorationLinkageAttributes = 41,
  BuiltInNumWorkgroups = 24, BuiltInWorkgroupId = 26, BuiltInLocalInvocationId = 27,
  BuiltInSubgroupLocalInvocationId = 41,
  ExecutionModelGLCompute = 5, ExecutionModeLocalSize = 17,
  ScopeDevice = 1, ScopeSubgroup = 3, SemanticsAcquire = 0x2, SemanticsRelease = 0x4,
  SemanticsAcqRel = 0x8,
  SemanticsUniformMemory = 0x40,
};

struct Inst {
  uint16_t op = 0;
  std::vector<uint32_t> w; // operands, without the opcode word
};

// A literal string operand as words (NUL-terminated, padded).
inline std::vector<uint32_t> string_words(const std::string &s) {
  std::vector<uint32_t> out((s.size() + 4) / 4, 0);
  for (size_t i = 0; i < s.size(); ++i)
    out[i / 4] |= uint32_t(uint8_t(s[i])) << (8 * (i % 4));
  return out;
}
// The literal string starting at operand AT.
inline std::string string_at(const Inst &in, size_t at) {
  std::string s;
  for (size_t i = at; i < in.w.size(); ++i)
    for (int b = 0; b < 4; ++b) {
      char c = char(in.w[i] >> (8 * b));
      if (!c)
        return s;
      s += c;
    }
  return s;
}

struct Module {
  uint32_t header[kHeaderWords] = {};
  std::vector<Inst> insts;

  uint32_t fresh_id() { return header[3]++; }

  // False when WORDS is not a SPIR-V module (bad magic, truncated instruction).
  bool parse(const uint32_t *words, size_t n) {
    if (n < kHeaderWords || words[0] != kMagic)
      return false;
    for (size_t i = 0; i < kHeaderWords; ++i)
      header[i] = words[i];
    for (size_t i = kHeaderWords; i < n;) {
      uint32_t count = words[i] >> 16;
      if (count == 0 || i + count > n)
        return false;
      insts.push_back({uint16_t(words[i] & 0xffff),
                       std::vector<uint32_t>(words + i + 1, words + i + count)});
      i += count;
    }
    return true;
  }

  std::vector<uint32_t> words() const {
    std::vector<uint32_t> out(header, header + kHeaderWords);
    for (const auto &in : insts) {
      out.push_back(uint32_t(in.w.size() + 1) << 16 | in.op);
      out.insert(out.end(), in.w.begin(), in.w.end());
    }
    return out;
  }

  // Index of the first instruction with opcode OP at or after FROM, else insts.size().
  size_t find(uint16_t op, size_t from = 0) const {
    while (from < insts.size() && insts[from].op != op)
      ++from;
    return from;
  }
  bool has_capability(uint32_t cap) const {
    for (const auto &in : insts)
      if (in.op == OpCapability && in.w[0] == cap)
        return true;
    return false;
  }
  void add_capability(uint32_t cap) {
    if (!has_capability(cap))
      insts.insert(insts.begin(), Inst{OpCapability, {cap}});
  }
  void add_extension(const std::string &name) {
    for (const auto &in : insts)
      if (in.op == OpExtension && string_at(in, 0) == name)
        return;
    size_t at = 0;
    while (at < insts.size() && insts[at].op == OpCapability)
      ++at;
    insts.insert(insts.begin() + at, Inst{OpExtension, string_words(name)});
  }
  // Where a new annotation (OpDecorate) may go: before the first type or constant.
  size_t annotations_end() const {
    size_t i = 0;
    auto annotation_or_before = [](uint16_t op) {
      return op < OpTypeVoid || (op >= OpDecorate && op <= 75) || op == 330 || op == 332 ||
             op == 5632 || op == 5633; // decorations, OpModuleProcessed, OpDecorateId/String
    };
    while (i < insts.size() && annotation_or_before(insts[i].op))
      ++i;
    return i;
  }
  // Where a new type, constant or global variable may go: before the first function.
  size_t globals_end() const { return find(OpFunction); }

  // The id of `OpTypeInt WIDTH 0`, `OpTypePointer SC T`, ..., added before the functions if the
  // module has none.
  uint32_t type(uint16_t op, std::vector<uint32_t> operands) {
    for (const auto &in : insts)
      if (in.op == op && std::vector<uint32_t>(in.w.begin() + 1, in.w.end()) == operands)
        return in.w[0];
    uint32_t id = fresh_id();
    operands.insert(operands.begin(), id);
    insts.insert(insts.begin() + globals_end(), Inst{op, std::move(operands)});
    return id;
  }
  uint32_t uint_type(uint32_t width) { return type(OpTypeInt, {width, 0}); }
  uint32_t constant(uint32_t type_id, std::vector<uint32_t> value) {
    for (const auto &in : insts)
      if (in.op == OpConstant && in.w[0] == type_id &&
          std::vector<uint32_t>(in.w.begin() + 2, in.w.end()) == value)
        return in.w[1];
    uint32_t id = fresh_id();
    std::vector<uint32_t> w{type_id, id};
    w.insert(w.end(), value.begin(), value.end());
    insts.insert(insts.begin() + globals_end(), Inst{OpConstant, std::move(w)});
    return id;
  }
  uint32_t u32(uint32_t v) { return constant(uint_type(32), {v}); }
  uint32_t u64(uint64_t v) { return constant(uint_type(64), {uint32_t(v), uint32_t(v >> 32)}); }
};

} // namespace gpubt::spirv
