// Entry point context slots: held by a module and its pipelines, free once all are gone.
#include "runtime/vulkan/entry_slots.h"

#include <gtest/gtest.h>

using gpubt::runtime::vulkan::EntrySlots;

TEST(EntrySlots, ASlotIsFreeOnceEveryHolderLetGo) {
  EntrySlots slots(2);
  auto a = slots.take(); // a module's entry point
  auto b = slots.take();
  ASSERT_TRUE(a && b);
  EXPECT_NE(*a, *b);
  EXPECT_FALSE(slots.take()); // full
  slots.hold(*a);             // a pipeline made with the module
  slots.release(*a);          // the module destroyed: the pipeline still runs its code
  EXPECT_FALSE(slots.take());
  slots.release(*a); // the pipeline destroyed too
  auto c = slots.take();
  ASSERT_TRUE(c);
  EXPECT_EQ(*c, *a);
  EXPECT_EQ(slots.held(), 2u);
  slots.release(*b);
  slots.release(*b); // released twice: no second free entry
  EXPECT_TRUE(slots.take());
  EXPECT_FALSE(slots.take());
}

// 400 modules made, run and destroyed one after another reuse one slot.
TEST(EntrySlots, ChurnReusesSlots) {
  EntrySlots slots(4);
  for (int i = 0; i < 400; ++i) {
    auto s = slots.take();
    ASSERT_TRUE(s) << i;
    slots.hold(*s);
    slots.release(*s);
    slots.release(*s);
  }
  EXPECT_EQ(slots.held(), 0u);
}
