/* A JIT function with a second entry point, as HotSpot's compiled methods
 * have (the verified entry, past the inline-cache check at the start):
 * `g` begins with three nops, then the loop; `walk` calls g+3, which no
 * call of g's own returns to, so it is a call, not a continuation.
 * Usage: entries N   (walk 3 instructions, g 3N + 4 from g+3) */
#include "callgrind_jit.h"
#include "common.h"

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: entries N\n"); return 2; }
    int32_t n = atoi(argv[1]);
    uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); return 1; }
    uint8_t *g = p, *walk = p + 2048;
    memset(g, 0x90, 3);
    memcpy(g + 3, SUM_LOOP, sizeof SUM_LOOP);
    /* walk: mov edi, n; call g+3; ret */
    walk[0] = 0xbf; memcpy(walk + 1, &n, 4);
    walk[5] = 0xe8;
    int32_t rel = (int32_t)((g + 3) - (walk + 10));
    memcpy(walk + 6, &rel, 4);
    walk[10] = 0xc3;
    if (mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0) { perror("mprotect"); return 1; }
    cgjit_line g_lines[] = {{0, 10, 1, "entries.calc"}};
    cgjit_line walk_lines[] = {{0, 20, 1, "entries.calc"}};
    cgjit_code_loaded(g, 3 + sizeof SUM_LOOP, "g", g_lines, 1);
    cgjit_code_loaded(walk, 11, "walk", walk_lines, 1);
    printf("%d\n", ((int (*)(void))walk)());
    cgjit_close();
    return 0;
}
