/* Unload and reload at the same address: `sum_to` runs, is unloaded,
 * and `sum_v2` is loaded where it was and runs. Callgrind adds costs up
 * per address, so jit-client asks for a dump before the second load: one
 * part per epoch.
 * Usage: reload N M   (sum_to runs 3*N + 4 instructions, sum_v2 3*M + 4) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "callgrind_jit.h"
#include "common.h"


static int load_and_run(uint8_t *p, const char *name, const char *file, int n) {
    if (mprotect(p, 4096, PROT_READ | PROT_WRITE) != 0) { perror("mprotect"); exit(1); }
    memcpy(p, SUM_LOOP, sizeof SUM_LOOP);
    if (mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0) { perror("mprotect"); exit(1); }
    cgjit_line lines[] = {{0, 1, 1, file}, {6, 2, 1, NULL}, {12, 3, 1, NULL}};
    cgjit_code_loaded(p, sizeof SUM_LOOP, name, lines, 3);
    return ((int (*)(int))p)(n);
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: reload N M\n"); return 2; }
    uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); return 1; }
    int a = load_and_run(p, "sum_to", "first.calc", atoi(argv[1]));
    cgjit_code_unloaded(p, sizeof SUM_LOOP);
    int b = load_and_run(p, "sum_v2", "second.calc", atoi(argv[2]));
    printf("%d %d\n", a, b);
    cgjit_close();
    return 0;
}
