"""A jax.jit function (XLA's fused kernels, cuBLAS for the matmul): prints a checksum."""
import hashlib
import jax, jax.numpy as jnp
import numpy as np


@jax.jit
def f(a, b):
    return jnp.tanh(a @ b).sum(axis=0) * 2 + 1


a = jax.random.normal(jax.random.PRNGKey(0), (1024, 1024))
b = jax.random.normal(jax.random.PRNGKey(1), (1024, 1024))
for _ in range(3):
    r = f(a, b)
r = np.asarray(jax.block_until_ready(r))
print('checksum', hashlib.sha256(r.tobytes()).hexdigest()[:16])
