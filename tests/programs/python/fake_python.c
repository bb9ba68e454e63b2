// Looks like CPython 3.10 to pystack's discovery (it defines _PyRuntime and Py_Version), which
// reads 3.11 to 3.13: the warning, empty Python stacks and native frames all the same.
int gpubt_py_mark(int id);

char _PyRuntime[4096];
const unsigned long Py_Version = 0x030a08f0; // 3.10.8 final

int main(void) { return gpubt_py_mark(7) == 7 ? 0 : 1; }
