/* Loads N functions, each on a page of its own (mapped one at a time, as
 * a JIT with W^X pages does), for scripts/bench-client.sh: callgrind's
 * inclusive count of cgjit_code_loaded over N is jit-client's cost per
 * load, with or without live mode (CALLGRIND_JIT_LIVE=1).
 * Usage: live_many N   (prints the sum of what the functions return) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "callgrind_jit.h"

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: live_many N\n"); return 2; }
    int n = atoi(argv[1]);
    long sum = 0;
    cgjit_line lines[] = {{0, 1, 1, "many.calc"}};
    for (int i = 0; i < n; i++) {
        /* mov eax, i; ret */
        uint8_t code[] = {0xb8, 0, 0, 0, 0, 0xc3};
        memcpy(code + 1, &i, 4);
        uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) { perror("mmap"); return 1; }
        memcpy(p, code, sizeof code);
        if (mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0) { perror("mprotect"); return 1; }
        char name[32];
        snprintf(name, sizeof name, "f%d", i);
        cgjit_code_loaded(p, sizeof code, name, lines, 1);
        sum += ((int (*)(void))p)();
    }
    printf("%ld\n", sum);
    cgjit_close();
    return 0;
}
