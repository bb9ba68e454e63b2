// A plain Vulkan compute program: c = a + b over N floats on the first device, checked on the
// host. Usage: vk_vector_add [N] [DISPATCHES] (default 1000 elements in 16 workgroups of 64,
// once). Prints "vk_vector_add: ok N" or the first wrong element, and exits non-zero on error.
// The shader, vector_add.spv (glslangValidator -V vector_add.comp), is read from beside the
// program, so the two can be copied to a GPU machine together.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include <limits.h>
#include <unistd.h>

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    VkResult r_ = (x);                                                                             \
    if (r_ != VK_SUCCESS) {                                                                        \
      fprintf(stderr, "vk_vector_add: %s failed: %d\n", #x, r_);                                   \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static uint32_t *read_shader(size_t *size) {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
  if (n <= 0)
    exit(1);
  path[n] = 0;
  strcpy(strrchr(path, '/') + 1, "vector_add.spv");
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

int main(int argc, char **argv) {
  uint32_t n = argc > 1 ? (uint32_t)atoi(argv[1]) : 1000;
  int dispatches = argc > 2 ? atoi(argv[2]) : 1;
  VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.apiVersion = VK_API_VERSION_1_0; // what most programs ask for
  VkInstanceCreateInfo ici = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
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
  VkBuffer bufs[3];
  VkDeviceMemory mems[3];
  float *ptrs[3];
  VkDeviceSize size = (VkDeviceSize)n * sizeof(float) + 16;
  for (int k = 0; k < 3; ++k) {
    VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = size;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    CHECK(vkCreateBuffer(dev, &bci, NULL, &bufs[k]));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev, bufs[k], &req);
    uint32_t type = 0;
    VkMemoryPropertyFlags want =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    while (type < mp.memoryTypeCount && !((req.memoryTypeBits & (1u << type)) &&
                                          (mp.memoryTypes[type].propertyFlags & want) == want))
      ++type;
    VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, req.size, type};
    CHECK(vkAllocateMemory(dev, &mai, NULL, &mems[k]));
    CHECK(vkBindBufferMemory(dev, bufs[k], mems[k], 0));
    CHECK(vkMapMemory(dev, mems[k], 0, VK_WHOLE_SIZE, 0, (void **)&ptrs[k]));
  }
  for (uint32_t i = 0; i < n; ++i) {
    ptrs[0][i] = (float)i;
    ptrs[1][i] = 2.0f * (float)i;
    ptrs[2][i] = -1.0f;
  }

  size_t code_size;
  uint32_t *code = read_shader(&code_size);
  VkShaderModuleCreateInfo smci = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smci.codeSize = code_size;
  smci.pCode = code;
  VkShaderModule module;
  CHECK(vkCreateShaderModule(dev, &smci, NULL, &module));

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
  cpci.stage.pName = "main";
  cpci.layout = layout;
  VkPipeline pipeline;
  CHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpci, NULL, &pipeline));

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
  cbai.commandBufferCount = 1;
  VkCommandBuffer cb;
  CHECK(vkAllocateCommandBuffers(dev, &cbai, &cb));
  VkCommandBufferBeginInfo cbbi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  CHECK(vkBeginCommandBuffer(cb, &cbbi));
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, NULL);
  vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &n);
  for (int d = 0; d < dispatches; ++d)
    vkCmdDispatch(cb, (n + 63) / 64, 1, 1);
  CHECK(vkEndCommandBuffer(cb));
  VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  CHECK(vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE));
  CHECK(vkQueueWaitIdle(queue));

  int bad = 0;
  for (uint32_t i = 0; i < n && !bad; ++i)
    if (ptrs[2][i] != 3.0f * (float)i) {
      printf("vk_vector_add: c[%u] = %f, want %f\n", i, ptrs[2][i], 3.0f * (float)i);
      bad = 1;
    }
  if (!bad)
    printf("vk_vector_add: ok %u\n", n);
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
  vkDestroyDevice(dev, NULL);
  vkDestroyInstance(instance, NULL);
  free(code);
  return bad;
}
