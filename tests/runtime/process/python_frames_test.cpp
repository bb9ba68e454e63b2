// ustack(py)'s splice: each eval loop frame of the native stack takes the next group of Python
// frames; groups left over (the unwinder stopped short) follow. Real stacks that reach the eval
// loop need a CPython built with frame pointers, which this machine lacks: the e2e test covers
// the stopped-short case with real processes, this one the splice itself.
#include "runtime/process/python_frames.h"

#include <gtest/gtest.h>

using namespace gpubt::runtime;

using Lines = std::vector<std::string>;

TEST(PythonFrames, EvalLoopFramesTakeTheirGroupsInOrder) {
  Lines native = {"gpubt_py_mark", "ffi_call", "_PyEval_EvalFrameDefault", "map_next",
                  "_PyEval_EvalFrameDefault+0x1a2", "Py_RunMain", "main"};
  std::vector<Lines> groups = {{"a.py:3 mark", "a.py:9 step"}, {"a.py:20 <module>"}};
  EXPECT_EQ(splice_python_frames(native, groups),
            (Lines{"gpubt_py_mark", "ffi_call", "a.py:3 mark", "a.py:9 step", "map_next",
                   "a.py:20 <module>", "Py_RunMain", "main"}));
}

TEST(PythonFrames, GroupsTheUnwinderNeverReachedFollowTheNativeFrames) {
  Lines native = {"gpubt_py_mark", "0x7f00deadbeef"};
  std::vector<Lines> groups = {{"a.py:3 mark"}, {"a.py:20 <module>"}};
  EXPECT_EQ(splice_python_frames(native, groups),
            (Lines{"gpubt_py_mark", "0x7f00deadbeef", "a.py:3 mark", "a.py:20 <module>"}));
}

TEST(PythonFrames, EvalLoopFramesBeyondThePythonOnesStayNative) {
  // A name that only starts like the eval loop is not it; an eval frame with no group left
  // (pystack's frames ran out) prints as itself.
  Lines native = {"_PyEval_EvalFrameDefaultX", "_PyEval_EvalFrameDefault",
                  "_PyEval_EvalFrameDefault"};
  std::vector<Lines> groups = {{"a.py:3 mark"}};
  EXPECT_EQ(splice_python_frames(native, groups),
            (Lines{"_PyEval_EvalFrameDefaultX", "a.py:3 mark", "_PyEval_EvalFrameDefault"}));
}

TEST(PythonFrames, LineTableOfThreeElevenAndLater) {
  // 3.11+ co_linetable: one entry "code 13 (no column), 2 code units, line +1", then "code 11
  // (one line below), 1 unit": byte 0..3 at line first+1, 4..5 at first+2.
  std::string table = {char(0x80 | 13 << 3 | 1), char(2), char(0x80 | 11 << 3 | 0)};
  EXPECT_EQ(python_line_of(table, 10, 0), 11);
  EXPECT_EQ(python_line_of(table, 10, 2), 11);
  EXPECT_EQ(python_line_of(table, 10, 4), 12);
  EXPECT_EQ(python_line_of(table, 10, 6), -1);
}

TEST(PythonFrames, LineTableOfThreeTen) {
  // 3.10's co_linetable (PEP 626): (byte delta, line delta) pairs. Bytes 0..3 at first+1; an
  // empty range whose line delta still counts; 4..5 at first+3; 6..7 without a line (-128,
  // which leaves the line as it was); 8..9 at first+3 again.
  std::string table = {4, 1, 0, 1, 2, 1, 2, char(-128), 2, 0};
  EXPECT_EQ(python310_line_of(table, 10, -2), 10); // f_lasti -1: not started
  EXPECT_EQ(python310_line_of(table, 10, 0), 11);
  EXPECT_EQ(python310_line_of(table, 10, 2), 11);
  EXPECT_EQ(python310_line_of(table, 10, 4), 13);
  EXPECT_EQ(python310_line_of(table, 10, 6), -1);
  EXPECT_EQ(python310_line_of(table, 10, 8), 13);
  EXPECT_EQ(python310_line_of(table, 10, 10), -1); // past the table
}
