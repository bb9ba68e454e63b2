/* The device ABI between gpubt's PTX code (codegen/device, targets/ptx) and the in-process GPU
 * agent (runtime/cuda_agent): patch functions, the per-launch context they receive, and the
 * byte layouts of device maps and of the printf ring buffer. C, so CUDA code can include it. */
#pragma once
#include <stdint.h>

/* Patch functions. One per gpu probe (DeviceProbeSpec::function, "gpubt_probe_<N>", N = index in
 * DeviceProgramSpec::probes), emitted as a `.visible .func` with the Compute Sanitizer
 * SanitizerCallbackBlockEnter/BlockExit signature:
 *
 *   extern "C" __device__ __noinline__ SanitizerPatchResult gpubt_probe_N(void *userdata,
 *                                                                          uint64_t pc);
 *
 * at its DeviceProbeSpec::point (abi/probe_point.h; the agent patches Entry at
 * SANITIZER_INSTRUCTION_BLOCK_ENTER, Exit at SANITIZER_INSTRUCTION_BLOCK_EXIT). Where several
 * probes share a point the agent patches the point's dispatcher instead (DeviceProbeSpec::patch,
 * "gpubt_dispatch_<point>", targets/ptx), which calls each of them. `userdata` is the device
 * address of a struct gpubt_device_ctx (sanitizerSetCallbackData per launch); `pc` is unused. They
 * always return 0 (SANITIZER_PATCH_SUCCESS). Assemble the PTX with `ptxas -arch=sm_XX
 * --compile-as-tools-patch` (no -c). */
#define GPUBT_DEVICE_ABI_VERSION 2u
#define GPUBT_PROBE_FUNCTION_PREFIX "gpubt_probe_"
/* gpubt_probe_N_direct: probe N without the probe_mask test, for the PTX backend, which pastes it
 * only into kernels that probe N matches (where it alone is at that point). */
#define GPUBT_PROBE_DIRECT_SUFFIX "_direct"
#define GPUBT_PATCH_SUCCESS 0

/* SPIR-V probes (targets/spirv) take what a Compute Sanitizer patch reads from special registers
 * as arguments, from the compute shader that calls them (the Vulkan layer, runtime/vulkan):
 *
 *   uint gpubt_probe_N_direct(ulong ctx, ulong pc, uint workgroup_id[3], uint local_id[3],
 *                             uint workgroup_size[3], uint num_workgroups[3], uint subgroup_size,
 *                             uint subgroup_local_id)
 *
 * each array as 3 scalar arguments x, y, z; ctx is the device address (buffer device address)
 * of a struct gpubt_device_ctx, pc is 0. */
#define GPUBT_SPIRV_ARG_WORKGROUP_ID 2u
#define GPUBT_SPIRV_ARG_LOCAL_ID 5u
#define GPUBT_SPIRV_ARG_WORKGROUP_SIZE 8u
#define GPUBT_SPIRV_ARG_NUM_WORKGROUPS 11u
#define GPUBT_SPIRV_ARG_SUBGROUP_SIZE 14u
#define GPUBT_SPIRV_ARG_SUBGROUP_LOCAL_ID 15u
#define GPUBT_SPIRV_ARGS 16u

#define GPUBT_MAX_DEVICE_MAPS 64u
#define GPUBT_KERNEL_NAME_SIZE 64u
#define GPUBT_DEFAULT_MAP_CAPACITY (1u << 20) /* entries per keyed map (a power of two), fewer */
#define GPUBT_DEFAULT_MAP_BYTES (64u << 20)   /* when its storage would pass this size */
#define GPUBT_DEFAULT_RING_BYTES (1u << 20) /* printf ring data bytes (a power of two) */
#define GPUBT_HIST_BUCKETS 66u              /* hist(): bpftrace's log2 buckets 0..65 */
#define GPUBT_SLOT_CACHE_WORDS 128u /* gpubt_device_ctx::slot_cache */

#ifdef __cplusplus
extern "C" {
#endif

/* What a patch function gets as userdata: allocated with sanitizerAlloc and filled by the agent,
 * one per instrumented kernel (kernel_name differs), all pointing at the same maps and ring. */
struct gpubt_device_ctx {
  uint32_t abi_version;     /* GPUBT_DEVICE_ABI_VERSION */
  uint32_t pid;             /* `pid`: the traced process */
  int64_t clock_offset_ns;  /* `nsecs` (CLOCK_MONOTONIC) = t + clock_offset_ns +
                               ((int64_t)(t - clock_base) * clock_rate >> 32), t = %globaltimer:
                               the agent measures the GPU clock (agent/gpu_clock.h) */
  uint64_t ring;            /* device address of a struct gpubt_device_ring */
  uint32_t kernel_index;    /* the agent's own index of the kernel (not read by the probes) */
  uint32_t num_maps;        /* entries of maps[] in use (DeviceProgramSpec::maps.size()) */
  char kernel_name[GPUBT_KERNEL_NAME_SIZE]; /* `kernel`: NUL-padded, at most 63 chars */
  uint64_t maps[GPUBT_MAX_DEVICE_MAPS];     /* device address of each map's storage, indexed
                                               like DeviceProgramSpec::maps */
  uint64_t probe_mask; /* bit N: probe N (gpubt_probe_N) runs in this kernel. The Compute
                          Sanitizer patches a whole module, so probe N's code also runs in the
                          module's other kernels: it must return at once when bit N (N < 64) is
                          clear, and when userdata is NULL (a kernel the agent gave no ctx). */
  int64_t clock_rate;  /* the GPU clock's drift against the host's, Q32 (see clock_offset_ns);
                          Vulkan (t = the Device-scope shader clock): its tick in ns - 1, Q32 */
  uint64_t clock_base; /* the %globaltimer the drift is counted from */
  /* Per launch, when the script uses `launch_start` / `last_thread`: they start at UINT64_MAX
   * and 0, a hidden entry probe takes the min of the threads' `nsecs`, and exit probes count the
   * threads that left. The launch's last thread sets them back after its probe ran; only where
   * launch_start is read without last_thread (DeviceProgramSpec::launch_state) does the agent
   * reset them on the launch's stream just before it. Launches of one kernel running at once on
   * several streams share them. */
  uint64_t launch_start;  /* `launch_start`: the earliest entry `nsecs` of this launch */
  uint64_t launch_exited; /* threads that passed the exit probe (`last_thread`) */
  uint64_t clock_mask; /* 0: t is the whole clock. Else the bits the clock has (lavapipe's Vulkan
                          Device-scope clock: 0xffffffff, CLOCK_MONOTONIC's low 32 bits): t is
                          first unwrapped as clock_base + ((t - clock_base) & clock_mask), right
                          for 2^32 ticks after clock_base, which the Vulkan layer moves forward
                          as the program submits work */
  /* Where updates under a launch-uniform key (`@[kernel] = count()`) found their slot, so that
   * the next warp updates it with no hash, search or key compare (codegen/device/slot_cache.cpp).
   * Word n: 0 (not known yet), or (tag << 32) | (slot index + 1) for the map and key of one
   * update site in one probe (the compiler gives each site its words), tag the launch's grid or
   * block size the key reads (0: none). Zero when the ctx is made; only the probes write it.
   * Valid because a kernel's ctx fixes every other part of such a key (kernel, pid, probe,
   * constants) and a slot keeps its key for the whole session. */
  uint64_t slot_cache[GPUBT_SLOT_CACHE_WORDS];
  /* gpu:block_begin / gpu:block_end (DeviceBlockState): device address of GPUBT_BLOCK_SLOTS
   * zeroed uint64 words, one per block running at once: block B (linear index) holds word
   * B % GPUBT_BLOCK_SLOTS as (B / GPUBT_BLOCK_SLOTS + 1) << 32 | threads that left, claimed by
   * its first thread in (CAS from 0) and set back to 0 by its last thread out. A block finding
   * another's tag does not wait for it (its edges are lost). The CUDA agent gives each traced kernel's ctx its own;
   * the Vulkan layer one for all (it orders the dispatches of such pipelines). 0: none. */
  uint64_t block_slots;
};
#define GPUBT_BLOCK_SLOTS 8192u /* a power of two, over the blocks a GPU runs at once */

/* A device map's storage: this header, then `capacity` entries of `entry_size` bytes:
 *
 *   uint64_t state;           GPUBT_SLOT_EMPTY / _BUSY (key being written) / _READY
 *   uint8_t  key[key_size];   the user key as the host map lays it out (integer of its size,
 *                             tuple at tuple offsets, string bytes), zero-padded to 8 bytes;
 *                             key_size 0 for a scalar map (capacity 1, entry 0; a scalar
 *                             aggregation no probe reads: an entry per SM, all of the one key)
 *   uint8_t  value[value_size]:
 *     Count, Sum       int64/uint64                      atom.add
 *     Min, Max         struct { int64 value; uint64 is_set; }  atom.min/max; the claimer
 *                      starts value at the type's max (Min) or min (Max)
 *     Avg, Stats       struct { int64 sum; uint64 count; }     atom.add each
 *     Hist, Lhist      uint64 buckets[DeviceMapSpec::buckets] (abi bucket numbering)
 *     plain values     the value, zero-padded to 8 bytes (plain stores: last writer wins)
 *
 * The agent allocates sizeof(header) + capacity * entry_size bytes, zeroes them and writes the
 * header from DeviceMapSpec. A thread claims an empty slot with atomicCAS(state, EMPTY, BUSY),
 * writes key and initial value, fences, then stores READY; a thread that finds BUSY waits for
 * READY. Slots are found by open addressing: a key of n = key_size / 8 words w[0..n) starts at
 * start = gpubt_key_hash(w, n) & (capacity - 1) (0 for a scalar map) and probes
 * (start + i) & (capacity - 1) for i = 0 .. capacity - 1, stopping at an EMPTY slot (not there)
 * or a READY one whose key words all equal w (BUSY: wait for READY). Readers that scan every
 * slot need not know the hash; the agent does, to write a host map's entries (a BPF map gpu
 * probes read) where the probes look for them. When no slot is free the update is dropped and
 * `drops` incremented: the probe sequence must be able to reach every slot (on the H100 the
 * mission example, 50176 tids in 65536 slots, lost 6-9 updates to a 128-slot limit).
 * Striped scalar aggregations (one entry per SM) start at the SM's entry instead. */
#define GPUBT_SLOT_EMPTY 0u
#define GPUBT_SLOT_BUSY 1u
#define GPUBT_SLOT_READY 2u

#if defined(__CUDACC__)
#define GPUBT_ABI_INLINE static inline __host__ __device__
#else
#define GPUBT_ABI_INLINE static inline
#endif

/* MurmurHash3's 64-bit finalizer: consecutive integer keys (tids) spread over the table. */
GPUBT_ABI_INLINE uint64_t gpubt_fmix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

/* The hash of a key's N 64-bit words (the key bytes zero-padded to 8, read as little-endian
 * words), exactly as the probes compute it (codegen/device/device_maps.cpp, hash_words). */
GPUBT_ABI_INLINE uint64_t gpubt_key_hash(const uint64_t *words, uint32_t n) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (uint32_t i = 0; i < n; ++i)
    h = gpubt_fmix64(h * 31u + words[i]);
  return h;
}

struct gpubt_device_map_header {
  uint32_t capacity;   /* entries, a power of two; 1 for scalar maps */
  uint32_t key_size;   /* bytes, a multiple of 8 */
  uint32_t value_size; /* bytes, a multiple of 8 */
  uint32_t entry_size; /* 8 + key_size + value_size */
  uint64_t drops;      /* updates dropped because every slot was taken */
  uint64_t reserved;
};

/* The printf ring buffer: this header, then `capacity` data bytes. A producer reserves
 * `size` bytes by CAS on head when head + size - tail <= capacity (else drops++ and the record
 * is lost), writes the record at data[pos % capacity] word by word (8-byte words, each word's
 * offset taken modulo capacity, so a record may wrap), fences, then stores commit. The agent
 * reads records from tail while commit == (uint32_t)(tail / 8 + 1), then advances tail.
 * Vulkan probes, whose ring is read only at the end (tail stays 0), reserve by an atomic add on
 * head instead and drop a record that does not fit (its bytes stay reserved, the reader stops
 * there): lavapipe mis-runs the CAS loop (codegen/device/device_printf.cpp). */
struct gpubt_device_ring {
  uint64_t head;     /* bytes reserved by producers, monotonic */
  uint64_t tail;     /* bytes consumed by the agent, monotonic (written by the agent) */
  uint64_t drops;    /* records lost because the ring was full */
  uint32_t capacity; /* data bytes, a power of two >= 256 */
  uint32_t reserved;
};

/* Each record: this, then abi::EventHeader {kind, index} and the payload exactly as a host
 * event (Printf: args at FormatSpec offsets; the formats live in ProgramSpec::formats). */
struct gpubt_ring_record {
  uint32_t size;   /* bytes of the whole record including this header, a multiple of 8 */
  uint32_t commit; /* (uint32_t)(position / 8 + 1) once the record is complete */
};

#ifdef __cplusplus
} /* extern "C" */
static_assert(sizeof(gpubt_device_ctx) ==
                  152 + 8 * GPUBT_MAX_DEVICE_MAPS + 8 * GPUBT_SLOT_CACHE_WORDS,
              "device ABI");
static_assert(sizeof(gpubt_device_map_header) == 32, "device ABI");
static_assert(sizeof(gpubt_device_ring) == 32, "device ABI");
#endif
