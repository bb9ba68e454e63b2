// Looks like CPython 3.9 to pystack's discovery (it defines _PyRuntime and Py_Version), which
// reads 3.10 to 3.13: the warning, empty Python stacks and native frames all the same.
int gpubt_py_mark(int id);

char _PyRuntime[4096];
// 3.9.18 final (a real 3.9 has no Py_Version: this one tests the message of a version not read)
const unsigned long Py_Version = 0x030912f0;

int main(void) { return gpubt_py_mark(7) == 7 ? 0 : 1; }
