/* A guest program for QEMU's user mode (tests/it/runtimes.rs): built
 * static with its symbols, run by qemu-x86_64 under callgrind. collatz
 * runs most of the guest's instructions. Prints 215015. */
#include <stdio.h>

__attribute__((noinline)) long collatz(long n) {
    long steps = 0;
    while (n != 1) {
        n = n % 2 ? 3 * n + 1 : n / 2;
        steps++;
    }
    return steps;
}

__attribute__((noinline)) long walk(long k) {
    long total = 0;
    for (long i = 1; i < k; i++)
        total += collatz(i);
    return total;
}

int main(void) {
    printf("%ld\n", walk(3000));
    return 0;
}
