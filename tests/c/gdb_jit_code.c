/* The code tests/c/gdb_jit.c loads as a JIT would: built with -c into an
 * object whose .text it copies to fresh memory. No data and no calls out,
 * so the bytes run anywhere; squares is a local symbol. gdb_jit_native.c
 * links the same object normally: the truth for the costs. */

/* Branches on *p: memcheck reports the jump where *p was never written
 * (the empty asm keeps the branch a branch). */
long peek(const long *p) {
    if (*p > 0) {
        __asm__ volatile("" ::: "memory");
        return 1;
    }
    return 2;
}

static long __attribute__((noinline, used)) squares(long n) {
    long s = 0;
    for (long i = 0; i < n; i++)
        s += i * i;
    return s;
}

long triangle(long n) {
    long s = 0;
    for (long i = 0; i < n; i++)
        s += i;
    return s + squares(n / 2);
}
