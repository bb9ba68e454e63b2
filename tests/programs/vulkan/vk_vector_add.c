// A plain Vulkan compute program: c = a + b over N floats on the first device, checked on the
// host (b's scale, 1, is a specialization constant, as real programs set theirs).
// Usage: vk_vector_add [N] [DISPATCHES] [time|kill|shrink] (default 1000 elements in workgroups of 64,
// once). The buffers are device-local, filled and read back through a host-visible staging
// buffer, as real programs keep them. Prints "vk_vector_add: ok N" or the first wrong element, and
// exits non-zero on error. With "time", consecutive dispatches are separated by a barrier and
// each is timed with timestamp queries: "dispatch_us MEDIAN" over all but the first (a warm-up),
// or, where the queue has no timestamps, the host wall time of the submission over DISPATCHES.
// With "kill", the program waits for the device again 1.1 s later (the Vulkan layer writes its
// results after waits a second apart at most), then kills itself (SIGKILL, no exit handlers).
// With "shrink", dispatch d runs d workgroups fewer than the first (a grid size per dispatch).
// VK_VECTOR_ADD_MODULE_NAME names the shader module before the pipeline is made and
// VK_VECTOR_ADD_PIPELINE_NAME the pipeline once its module is destroyed, as debuggers and
// profilers show them (VK_EXT_debug_utils).
// VK_VECTOR_ADD_SHADER names another shader file beside the program and VK_VECTOR_ADD_ENTRY the
// entry point to run (entry_points.spv: alpha, beta, gamma, delta). VK_VECTOR_ADD_PIPELINES=K
// then makes, runs once (one submit and wait each) and destroys K more modules and pipelines, as
// programs that build shaders on the fly do. VK_VECTOR_ADD_DELAY_MS=D waits D ms before it
// submits the dispatches and prints "vk_vector_add: dispatch submitted at NS" (CLOCK_MONOTONIC).
// The shader, vector_add.spv (glslangValidator -V vector_add.comp), is read from beside the
// program, so the two can be copied to a GPU machine together.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include <limits.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    VkResult r_ = (x);                                                                             \
    if (r_ != VK_SUCCESS) {                                                                        \
      fprintf(stderr, "vk_vector_add: %s failed: %d\n", #x, r_);                                   \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static uint32_t *read_shader(const char *name, size_t *size) {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
  if (n <= 0)
    exit(1);
  path[n] = 0;
  if (strlen(name) > 30 || strchr(name, '/'))
    exit(1);
  strcpy(strrchr(path, '/') + 1, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  *size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  uint32_t *code = malloc(*size);
  if (fread(code, 1, *size, f) != *size)
    exit(1);
  fclose(f);
  return code;
}


// The first memory type in BITS with all of WANT, else with all of FALLBACK.
static uint32_t memory_type(const VkPhysicalDeviceMemoryProperties *mp, uint32_t bits,
                            VkMemoryPropertyFlags want, VkMemoryPropertyFlags fallback) {
  for (int pass = 0; pass < 2; ++pass)
    for (uint32_t t = 0; t < mp->memoryTypeCount; ++t) {
      VkMemoryPropertyFlags f = pass ? fallback : want;
      if ((bits & (1u << t)) && (mp->memoryTypes[t].propertyFlags & f) == f)
        return t;
    }
  fprintf(stderr, "vk_vector_add: no memory type for a buffer\n");
  exit(1);
}

static void make_buffer(VkDevice dev, const VkPhysicalDeviceMemoryProperties *mp, VkDeviceSize size,
                        VkBufferUsageFlags usage, VkMemoryPropertyFlags want,
                        VkMemoryPropertyFlags fallback, VkBuffer *buf, VkDeviceMemory *mem) {
  VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = size;
  bci.usage = usage;
  CHECK(vkCreateBuffer(dev, &bci, NULL, buf));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev, *buf, &req);
  VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, req.size,
                              memory_type(mp, req.memoryTypeBits, want, fallback)};
  CHECK(vkAllocateMemory(dev, &mai, NULL, mem));
  CHECK(vkBindBufferMemory(dev, *buf, *mem, 0));
}

static void barrier(VkCommandBuffer cb, VkPipelineStageFlags from, VkAccessFlags from_access,
                    VkPipelineStageFlags to, VkAccessFlags to_access) {
  VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, from_access, to_access};
  vkCmdPipelineBarrier(cb, from, to, 0, 1, &mb, 0, NULL, 0, NULL);
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static VkResult set_object_name(VkDevice dev, PFN_vkSetDebugUtilsObjectNameEXT set_name,
                                VkObjectType type, uint64_t handle, const char *name) {
  if (!set_name)
    return VK_ERROR_EXTENSION_NOT_PRESENT;
  VkDebugUtilsObjectNameInfoEXT info = {VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT};
  info.objectType = type;
  info.objectHandle = handle;
  info.pObjectName = name;
  return set_name(dev, &info);
}

// K times: a module and a pipeline made from CODE, one dispatch of it submitted and waited for,
// both destroyed.
static void churn_pipelines(VkDevice dev, VkQueue queue, VkCommandPool cpool,
                            const VkShaderModuleCreateInfo *smci, VkComputePipelineCreateInfo cpci,
                            VkDescriptorSet set, uint32_t n, int k) {
  for (int i = 0; i < k; ++i) {
    CHECK(vkCreateShaderModule(dev, smci, NULL, &cpci.stage.module));
    VkPipeline pipeline;
    CHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpci, NULL, &pipeline));
    VkCommandBufferAllocateInfo cbai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cbai.commandPool = cpool;
    cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cbai.commandBufferCount = 1;
    VkCommandBuffer cb;
    CHECK(vkAllocateCommandBuffers(dev, &cbai, &cb));
    VkCommandBufferBeginInfo cbbi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    CHECK(vkBeginCommandBuffer(cb, &cbbi));
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, cpci.layout, 0, 1, &set, 0, NULL);
    vkCmdPushConstants(cb, cpci.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &n);
    vkCmdDispatch(cb, (n + 63) / 64, 1, 1);
    CHECK(vkEndCommandBuffer(cb));
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    CHECK(vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE));
    CHECK(vkQueueWaitIdle(queue));
    vkFreeCommandBuffers(dev, cpool, 1, &cb);
    vkDestroyPipeline(dev, pipeline, NULL);
    vkDestroyShaderModule(dev, cpci.stage.module, NULL);
  }
}

int main(int argc, char **argv) {
  uint32_t n = argc > 1 ? (uint32_t)atoi(argv[1]) : 1000;
  int dispatches = argc > 2 ? atoi(argv[2]) : 1;
  int timed = argc > 3 && strcmp(argv[3], "time") == 0;
  int killed = argc > 3 && strcmp(argv[3], "kill") == 0;
  int shrink = argc > 3 && strcmp(argv[3], "shrink") == 0;
  const char *module_name = getenv("VK_VECTOR_ADD_MODULE_NAME");
  const char *pipeline_name = getenv("VK_VECTOR_ADD_PIPELINE_NAME");
  const char *shader = getenv("VK_VECTOR_ADD_SHADER");
  const char *entry = getenv("VK_VECTOR_ADD_ENTRY");
  int churn = getenv("VK_VECTOR_ADD_PIPELINES") ? atoi(getenv("VK_VECTOR_ADD_PIPELINES")) : 0;
  int delay_ms = getenv("VK_VECTOR_ADD_DELAY_MS") ? atoi(getenv("VK_VECTOR_ADD_DELAY_MS")) : 0;
  // The compute submission again this many times, each waited for (a program that waits often).
  int waits = getenv("VK_VECTOR_ADD_WAITS") ? atoi(getenv("VK_VECTOR_ADD_WAITS")) : 0;
  // ... PACE_MS ms apart (a program that runs a while).
  int pace_ms = getenv("VK_VECTOR_ADD_PACE_MS") ? atoi(getenv("VK_VECTOR_ADD_PACE_MS")) : 0;
  if (n == 0 || dispatches < 1) {
    fprintf(stderr, "usage: vk_vector_add [N] [DISPATCHES] [time|kill]\n");
    return 2;
  }
  VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.apiVersion = VK_API_VERSION_1_0; // what most programs ask for
  VkInstanceCreateInfo ici = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  const char *debug_utils = "VK_EXT_debug_utils";
  if (module_name || pipeline_name) {
    ici.enabledExtensionCount = 1;
    ici.ppEnabledExtensionNames = &debug_utils;
  }
  VkInstance instance;
  CHECK(vkCreateInstance(&ici, NULL, &instance));
  uint32_t count = 1;
  VkPhysicalDevice pd;
  VkResult er = vkEnumeratePhysicalDevices(instance, &count, &pd);
  if ((er != VK_SUCCESS && er != VK_INCOMPLETE) || count == 0) {
    fprintf(stderr, "vk_vector_add: no Vulkan device\n");
    return 1;
  }
  uint32_t qf_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &qf_count, NULL);
  VkQueueFamilyProperties qfs[16];
  qf_count = qf_count > 16 ? 16 : qf_count;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &qf_count, qfs);
  uint32_t qf = 0;
  while (qf < qf_count && !(qfs[qf].queueFlags & VK_QUEUE_COMPUTE_BIT))
    ++qf;
  float prio = 1.0f;
  VkDeviceQueueCreateInfo qci = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = qf;
  qci.queueCount = 1;
  qci.pQueuePriorities = &prio;
  VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  VkDevice dev;
  CHECK(vkCreateDevice(pd, &dci, NULL, &dev));
  VkQueue queue;
  vkGetDeviceQueue(dev, qf, 0, &queue);

  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(pd, &mp);
  VkBuffer bufs[3], staging;
  VkDeviceMemory mems[3], staging_mem;
  VkDeviceSize size = (VkDeviceSize)n * sizeof(float) + 16;
  VkMemoryPropertyFlags host =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (int k = 0; k < 3; ++k)
    make_buffer(dev, &mp, size,
                VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                    VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, &bufs[k], &mems[k]);
  make_buffer(dev, &mp, 2 * size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
              host, host, &staging, &staging_mem);
  float *stage;
  CHECK(vkMapMemory(dev, staging_mem, 0, VK_WHOLE_SIZE, 0, (void **)&stage));
  for (uint32_t i = 0; i < n; ++i) {
    stage[i] = (float)i;
    stage[size / sizeof(float) + i] = 2.0f * (float)i;
  }

  size_t code_size;
  uint32_t *code = read_shader(shader ? shader : "vector_add.spv", &code_size);
  VkShaderModuleCreateInfo smci = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smci.codeSize = code_size;
  smci.pCode = code;
  VkShaderModule module;
  CHECK(vkCreateShaderModule(dev, &smci, NULL, &module));
  PFN_vkSetDebugUtilsObjectNameEXT set_name = (PFN_vkSetDebugUtilsObjectNameEXT)vkGetInstanceProcAddr(
      instance, "vkSetDebugUtilsObjectNameEXT");
  if (module_name)
    CHECK(set_object_name(dev, set_name, VK_OBJECT_TYPE_SHADER_MODULE, (uint64_t)module,
                          module_name));

  VkDescriptorSetLayoutBinding binds[3];
  for (int k = 0; k < 3; ++k) {
    VkDescriptorSetLayoutBinding b = {(uint32_t)k, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                      VK_SHADER_STAGE_COMPUTE_BIT, NULL};
    binds[k] = b;
  }
  VkDescriptorSetLayoutCreateInfo dslci = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dslci.bindingCount = 3;
  dslci.pBindings = binds;
  VkDescriptorSetLayout dsl;
  CHECK(vkCreateDescriptorSetLayout(dev, &dslci, NULL, &dsl));
  VkPushConstantRange pcr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 4};
  VkPipelineLayoutCreateInfo plci = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  plci.setLayoutCount = 1;
  plci.pSetLayouts = &dsl;
  plci.pushConstantRangeCount = 1;
  plci.pPushConstantRanges = &pcr;
  VkPipelineLayout layout;
  CHECK(vkCreatePipelineLayout(dev, &plci, NULL, &layout));
  VkComputePipelineCreateInfo cpci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cpci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpci.stage.module = module;
  cpci.stage.pName = entry ? entry : "main";
  const float b_scale = 1.0f; // vector_add.comp's B_SCALE
  VkSpecializationMapEntry spec_entry = {0, 0, sizeof b_scale};
  VkSpecializationInfo spec = {1, &spec_entry, sizeof b_scale, &b_scale};
  cpci.stage.pSpecializationInfo = &spec;
  cpci.layout = layout;
  VkPipeline pipeline;
  CHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpci, NULL, &pipeline));
  if (pipeline_name) {
    vkDestroyShaderModule(dev, module, NULL);
    module = VK_NULL_HANDLE;
    CHECK(set_object_name(dev, set_name, VK_OBJECT_TYPE_PIPELINE, (uint64_t)pipeline,
                          pipeline_name));
  }

  VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 3};
  VkDescriptorPoolCreateInfo dpci = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpci.maxSets = 1;
  dpci.poolSizeCount = 1;
  dpci.pPoolSizes = &ps;
  VkDescriptorPool pool;
  CHECK(vkCreateDescriptorPool(dev, &dpci, NULL, &pool));
  VkDescriptorSetAllocateInfo dsai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  dsai.descriptorPool = pool;
  dsai.descriptorSetCount = 1;
  dsai.pSetLayouts = &dsl;
  VkDescriptorSet set;
  CHECK(vkAllocateDescriptorSets(dev, &dsai, &set));
  VkDescriptorBufferInfo dbi[3];
  VkWriteDescriptorSet writes[3];
  for (int k = 0; k < 3; ++k) {
    VkDescriptorBufferInfo bi = {bufs[k], 0, VK_WHOLE_SIZE};
    dbi[k] = bi;
    VkWriteDescriptorSet w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.dstSet = set;
    w.dstBinding = (uint32_t)k;
    w.descriptorCount = 1;
    w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w.pBufferInfo = &dbi[k];
    writes[k] = w;
  }
  vkUpdateDescriptorSets(dev, 3, writes, 0, NULL);

  VkCommandPoolCreateInfo cpoolci = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpoolci.queueFamilyIndex = qf;
  VkCommandPool cpool;
  CHECK(vkCreateCommandPool(dev, &cpoolci, NULL, &cpool));
  VkCommandBufferAllocateInfo cbai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cbai.commandPool = cpool;
  cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cbai.commandBufferCount = 3;
  VkCommandBuffer cbs[3]; // upload, dispatches, read back
  CHECK(vkAllocateCommandBuffers(dev, &cbai, cbs));
  VkCommandBufferBeginInfo cbbi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};

  CHECK(vkBeginCommandBuffer(cbs[0], &cbbi));
  VkBufferCopy up[2] = {{0, 0, size}, {size, 0, size}};
  vkCmdCopyBuffer(cbs[0], staging, bufs[0], 1, &up[0]);
  vkCmdCopyBuffer(cbs[0], staging, bufs[1], 1, &up[1]);
  vkCmdFillBuffer(cbs[0], bufs[2], 0, VK_WHOLE_SIZE, 0xbf800000u); // -1.0f
  CHECK(vkEndCommandBuffer(cbs[0]));

  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(pd, &props);
  VkQueryPool queries = VK_NULL_HANDLE;
  if (timed && qfs[qf].timestampValidBits) {
    VkQueryPoolCreateInfo qpci = {VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qpci.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qpci.queryCount = 2 * (uint32_t)dispatches;
    CHECK(vkCreateQueryPool(dev, &qpci, NULL, &queries));
  }
  VkCommandBuffer cb = cbs[1];
  CHECK(vkBeginCommandBuffer(cb, &cbbi));
  if (queries)
    vkCmdResetQueryPool(cb, queries, 0, 2 * (uint32_t)dispatches);
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, NULL);
  vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &n);
  for (int d = 0; d < dispatches; ++d) {
    if (timed && d > 0) // one dispatch at a time, so each is timed alone
      barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
              VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
    if (queries)
      vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, queries, 2 * (uint32_t)d);
    vkCmdDispatch(cb, (n + 63) / 64 - (shrink ? (uint32_t)d : 0), 1, 1);
    if (queries)
      vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, queries, 2 * (uint32_t)d + 1);
  }
  CHECK(vkEndCommandBuffer(cb));

  CHECK(vkBeginCommandBuffer(cbs[2], &cbbi));
  VkBufferCopy down = {0, 0, size};
  vkCmdCopyBuffer(cbs[2], bufs[2], staging, 1, &down);
  CHECK(vkEndCommandBuffer(cbs[2]));

  double wall_us = 0;
  for (int k = 0; k < 3; ++k) {
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cbs[k];
    if (k == 1 && delay_ms > 0) {
      usleep((useconds_t)delay_ms * 1000);
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      printf("vk_vector_add: dispatch submitted at %lld\n",
             (long long)ts.tv_sec * 1000000000 + ts.tv_nsec);
      fflush(stdout);
    }
    double t0 = now_us();
    CHECK(vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE));
    CHECK(vkQueueWaitIdle(queue));
    if (k == 1)
      wall_us = now_us() - t0;
  }
  if (timed) {
    double *us = malloc(sizeof(double) * (size_t)dispatches);
    int first = dispatches > 1, count = dispatches - first;
    const char *how = "host wall time of the submission / dispatches";
    if (queries) {
      uint64_t *ticks = malloc(sizeof(uint64_t) * 2 * (size_t)dispatches);
      CHECK(vkGetQueryPoolResults(dev, queries, 0, 2 * (uint32_t)dispatches,
                                  sizeof(uint64_t) * 2 * (size_t)dispatches, ticks,
                                  sizeof(uint64_t),
                                  VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
      for (int d = first; d < dispatches; ++d)
        us[d - first] =
            (double)(ticks[2 * d + 1] - ticks[2 * d]) * props.limits.timestampPeriod / 1e3;
      free(ticks);
      how = "timestamp queries";
    } else {
      for (int d = 0; d < count; ++d)
        us[d] = wall_us / dispatches;
    }
    qsort(us, (size_t)count, sizeof(double), by_value);
    printf("vk_vector_add: dispatch_us %.3f (median of %d dispatches, %s; %s)\n", us[count / 2],
           count, how, props.deviceName);
    free(us);
  }

  for (int w = 0; w < waits; ++w) {
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cbs[1];
    CHECK(vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE));
    CHECK(vkQueueWaitIdle(queue));
    if (pace_ms > 0)
      usleep((useconds_t)pace_ms * 1000);
  }
  churn_pipelines(dev, queue, cpool, &smci, cpci, set, n, churn);

  const float *c = stage; // read back into the staging buffer's first half
  int bad = 0;
  for (uint32_t i = 0; i < n && !bad; ++i)
    if (c[i] != 3.0f * (float)i) {
      printf("vk_vector_add: c[%u] = %f, want %f\n", i, c[i], 3.0f * (float)i);
      bad = 1;
    }
  if (!bad)
    printf("vk_vector_add: ok %u\n", n);
  if (killed) {
    fflush(stdout);
    usleep(1100000);
    CHECK(vkDeviceWaitIdle(dev));
    raise(SIGKILL);
  }
  if (queries)
    vkDestroyQueryPool(dev, queries, NULL);
  vkDestroyCommandPool(dev, cpool, NULL);
  vkDestroyDescriptorPool(dev, pool, NULL);
  vkDestroyPipeline(dev, pipeline, NULL);
  vkDestroyPipelineLayout(dev, layout, NULL);
  vkDestroyDescriptorSetLayout(dev, dsl, NULL);
  vkDestroyShaderModule(dev, module, NULL);
  for (int k = 0; k < 3; ++k) {
    vkDestroyBuffer(dev, bufs[k], NULL);
    vkFreeMemory(dev, mems[k], NULL);
  }
  vkDestroyBuffer(dev, staging, NULL);
  vkFreeMemory(dev, staging_mem, NULL);
  vkDestroyDevice(dev, NULL);
  vkDestroyInstance(instance, NULL);
  free(code);
  return bad;
}
