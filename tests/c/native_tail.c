/* Native code that tail-calls JIT code: `tail_into` is `return f(n)`
 * compiled to a jump (`jmp *%rsi`), as an interpreter's dispatch or a
 * runtime stub does. Callgrind takes a jump into another object (here
 * from the program into anonymous memory) for a call, so sum_to keeps
 * its own cost.
 * Usage: native_tail N   (sum_to runs 3*N + 4 instructions, tail_into 1) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "callgrind_jit.h"
#include "common.h"

/* int tail_into(int n, int (*f)(int)): jumps to f with n in place. */
__asm__(".text\n"
        ".globl tail_into\n"
        ".type tail_into, @function\n"
        "tail_into:\n"
        "  jmp *%rsi\n"
        ".size tail_into, .-tail_into\n");
int tail_into(int n, int (*f)(int));


int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: native_tail N\n"); return 2; }
    int n = atoi(argv[1]);
    uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); return 1; }
    memcpy(p, SUM_LOOP, sizeof SUM_LOOP);
    if (mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0) { perror("mprotect"); return 1; }
    cgjit_line lines[] = {{0, 10, 1, "tail.calc"}, {6, 11, 1, NULL}, {12, 12, 1, NULL}};
    cgjit_code_loaded(p, sizeof SUM_LOOP, "sum_to", lines, 3);
    printf("%d\n", tail_into(n, (int (*)(int))p));
    cgjit_close();
    return 0;
}
