// --help's ENVIRONMENT text (see environment_help.h).
#include "driver/environment_help.h"

namespace gpubt::driver {

const char kEnvironmentHelp[] =
    "ENVIRONMENT:\n"
    "    bpftrace 0.17's, with its defaults and checks:\n"
    "    BPFTRACE_STRLEN          bytes str() reads (default 64, at most 200)\n"
    "    BPFTRACE_MAP_KEYS_MAX    keys a map holds (default 4096)\n"
    "    BPFTRACE_MAX_PROBES      probes a script may attach (default 512)\n"
    "    BPFTRACE_MAX_BPF_PROGS   BPF programs a script may load (default 512)\n"
    "    BPFTRACE_LOG_SIZE        bytes of the verifier's log on a rejected program (default "
    "1000000)\n"
    "    BPFTRACE_PERF_RB_PAGES   pages of each CPU's event ring (default 64)\n"
    "    BPFTRACE_CAT_BYTES_MAX   bytes cat() prints of a file (default 10240)\n"
    "    BPFTRACE_NO_CPP_DEMANGLE=1  print C++ symbols mangled\n"
    "    BPFTRACE_NO_USER_SYMBOLS=1  print user addresses, not symbols\n"
    "    BPFTRACE_CACHE_USER_SYMBOLS  accepted (0 or 1) and checked; gpubt always caches\n"
    "    gpubt's:\n"
    "    GPUBT_AGENT_PATH         the CUDA agent library (default: next to gpubt)\n"
    "    GPUBT_AGENT_DIR          the folder of agent sockets, shared with traced programs\n"
    "                             (default /tmp/gpubt-agent-UID; when another user made\n"
    "                             that, /run/user/UID/gpubt-agent or /tmp/gpubt-agent-UID.*)\n"
    "    GPUBT_PTXAS              the ptxas that assembles gpu probes (default: PATH, then\n"
    "                             /usr/local/cuda/bin)\n"
    "    GPUBT_GPU_ARCH           the GPU architectures (sm_XX[,sm_YY]) instead of the CUDA\n"
    "                             driver's\n"
    "    GPUBT_VULKAN_LAYER_DIR   the folder of the Vulkan layer's manifest (default: next to\n"
    "                             gpubt)\n"
    "    GPUBT_KEEP_TEMP=1        keep the folder of compiled probes for the traced program\n"
    "    GPUBT_PROGRESS_MS        ms of attaching or detaching before it says how far it is\n"
    "                             (default 2000)\n"
    "    GPUBT_OUTPUT_STYLE=head  text output laid out as bpftrace's head prints it (\"Attached\n"
    "                             N probes\" on stderr, histograms' \"@:\", stats as records);\n"
    "                             0.17 (default): as bpftrace 0.17, byte for byte\n"
    "    in a traced program (debugging):\n"
    "    GPUBT_AGENT_VERBOSE=1    the CUDA agent and Vulkan layer say what they patch\n"
    "    GPUBT_AGENT_COPY_ONLY=1  the CUDA agent copies maps, never writes them on streams\n"
    "    GPUBT_VULKAN_DUMP=DIR    each linked SPIR-V module written to DIR\n"
    "    GPUBT_VULKAN_ENTRY_SLOTS=N  fewer Vulkan entry points instrumented at once\n";

} // namespace gpubt::driver
