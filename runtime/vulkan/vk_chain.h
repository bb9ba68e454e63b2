// Walking a Vulkan create info's pNext chain: the structs a program chains, and the loader's
// link to the next layer.
#pragma once
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

namespace gpubt::runtime::vulkan {

template <typename T> const T *find_chain(const void *next, VkStructureType type) {
  for (auto *s = static_cast<const VkBaseInStructure *>(next); s; s = s->pNext)
    if (s->sType == type)
      return reinterpret_cast<const T *>(s);
  return nullptr;
}

// The loader's link to the next layer in a create info's chain (the loader's layer interface).
template <typename T> T *loader_link(const void *next, VkStructureType type) {
  auto *c = const_cast<T *>(find_chain<T>(next, type));
  while (c && c->function != VK_LAYER_LINK_INFO)
    c = const_cast<T *>(find_chain<T>(c->pNext, type));
  return c;
}

} // namespace gpubt::runtime::vulkan
