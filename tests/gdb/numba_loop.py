"""numba compiles hot() with LLVM and registers it with gdb (tests/it/gdb_jit.rs)."""
from numba import njit

@njit
def hot(n):
    total = 0
    for i in range(n):
        total += (i * 7) % 13
    return total

print(hot(200000))
