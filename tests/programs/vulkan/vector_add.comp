// c = a + B_SCALE * b over n elements, 64 invocations a workgroup; those past n return early (so
// the entry point has two returns). The program sets B_SCALE to 1 with a specialization constant
// (its default, 0, gives wrong sums: a pipeline made again without it shows).
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer A { float a[]; };
layout(set = 0, binding = 1) buffer B { float b[]; };
layout(set = 0, binding = 2) buffer C { float c[]; };
layout(push_constant) uniform P { uint n; };
layout(constant_id = 0) const float B_SCALE = 0.0;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= n)
    return;
  c[i] = a[i] + B_SCALE * b[i];
}
