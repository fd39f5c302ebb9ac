/* A JIT-to-JIT tail jump: `tramp` sets the argument and jumps into
 * `sum_to`, as trampolines and HotSpot's adapters do. Callgrind charges
 * code entered by a jump to the function that jumped.
 * Usage: tail_jump N [unnamed]   (sum_to runs 3*N + 4 instructions,
 * tramp 3; with `unnamed` tramp is left out of the jitdump, an unlisted
 * stub as QEMU's TCG prologue is) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "callgrind_jit.h"
#include "common.h"


int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: tail_jump N\n"); return 2; }
    int32_t n = atoi(argv[1]);
    uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); return 1; }
    memcpy(p, SUM_LOOP, sizeof SUM_LOOP);
    /* tramp: mov edi, n; movabs rax, sum_to; jmp rax */
    uint8_t *t = p + 2048;
    uint64_t target = (uint64_t)p;
    t[0] = 0xbf; memcpy(t + 1, &n, 4);
    t[5] = 0x48; t[6] = 0xb8; memcpy(t + 7, &target, 8);
    t[15] = 0xff; t[16] = 0xe0;
    if (mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0) { perror("mprotect"); return 1; }
    cgjit_line sum_lines[] = {{0, 10, 1, "jump.calc"}, {6, 11, 1, NULL}, {12, 12, 1, NULL}};
    cgjit_line tramp_lines[] = {{0, 20, 1, "jump.calc"}};
    cgjit_code_loaded(p, sizeof SUM_LOOP, "sum_to", sum_lines, 3);
    if (argc < 3 || strcmp(argv[2], "unnamed") != 0)
        cgjit_code_loaded(t, 17, "tramp", tramp_lines, 1);
    printf("%d\n", ((int (*)(void))t)());
    cgjit_close();
    return 0;
}
