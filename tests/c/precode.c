/* A table of entry points, as .NET's precode blocks: one range,
 * `stub<1> AllocateTemporaryEntryPoints<PRECODE_FIXUP>`, holding two
 * 8-byte entries, each a jmp to its method. `walk` calls the second entry
 * (sum_b, N) and then the first (sum_a, M).
 * Usage: precode N M   (walk 5 instructions, each entry 1, sum_b 3N + 4,
 * sum_a 3M + 4) */
#include "callgrind_jit.h"
#include "common.h"

static void rel32(uint8_t *at, const uint8_t *next, const uint8_t *to) {
    int32_t rel = (int32_t)(to - next);
    memcpy(at, &rel, 4);
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: precode N M\n"); return 2; }
    int32_t n = atoi(argv[1]), m = atoi(argv[2]);
    uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); return 1; }
    uint8_t *sum_a = p, *sum_b = p + 64, *table = p + 1024, *walk = p + 2048;
    memcpy(sum_a, SUM_LOOP, sizeof SUM_LOOP);
    memcpy(sum_b, SUM_LOOP, sizeof SUM_LOOP);
    /* entry 0: jmp sum_a; int3 x3. entry 1: jmp sum_b; int3 x3 */
    memset(table, 0xcc, 16);
    table[0] = 0xe9; rel32(table + 1, table + 5, sum_a);
    table[8] = 0xe9; rel32(table + 9, table + 13, sum_b);
    /* walk: mov edi, n; call entry 1; mov edi, m; call entry 0; ret */
    walk[0] = 0xbf; memcpy(walk + 1, &n, 4);
    walk[5] = 0xe8; rel32(walk + 6, walk + 10, table + 8);
    walk[10] = 0xbf; memcpy(walk + 11, &m, 4);
    walk[15] = 0xe8; rel32(walk + 16, walk + 20, table);
    walk[20] = 0xc3;
    if (mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0) { perror("mprotect"); return 1; }
    cgjit_line a_lines[] = {{0, 10, 1, "precode.calc"}};
    cgjit_line b_lines[] = {{0, 20, 1, "precode.calc"}};
    cgjit_line walk_lines[] = {{0, 30, 1, "precode.calc"}};
    cgjit_code_loaded(sum_a, sizeof SUM_LOOP, "sum_a", a_lines, 1);
    cgjit_code_loaded(sum_b, sizeof SUM_LOOP, "sum_b", b_lines, 1);
    cgjit_code_loaded(table, 16, "stub<1> AllocateTemporaryEntryPoints<PRECODE_FIXUP>", NULL, 0);
    cgjit_code_loaded(walk, 21, "walk", walk_lines, 1);
    printf("%d\n", ((int (*)(void))walk)());
    cgjit_close();
    return 0;
}
