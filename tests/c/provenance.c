/* One JIT function registered through the C ABI, for the provenance tests.
 * Usage: provenance NAME N [PROLOGUE]
 *   NAME      the function's name (any bytes a runtime might write)
 *   N         loop iterations: the loop (line 11 of prov.calc) runs 3*N
 *             instructions
 *   PROLOGUE  bytes of nop before the code, without a line entry (a
 *             64-byte prologue puts the first line entry at offset 0x40);
 *             a twin of the function, never called, is registered too, so
 *             that every record of the file starts at 0x40
 * The code lands at the same address in every run under Valgrind. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "callgrind_jit.h"

/* xor eax,eax; test edi,edi; jle end; loop: add eax,edi; dec edi; jnz loop; end: ret */
static const uint8_t loop_code[] = {0x31, 0xc0, 0x85, 0xff, 0x7e, 0x06, 0x01, 0xf8, 0xff, 0xcf, 0x75, 0xfa, 0xc3};

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: provenance NAME N [PROLOGUE]\n"); return 2; }
    const char *name = argv[1];
    int n = atoi(argv[2]);
    size_t prologue = argc > 3 ? (size_t)atoi(argv[3]) : 0;
    uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); return 1; }
    memset(p, 0x90, prologue);
    memcpy(p + prologue, loop_code, sizeof loop_code);
    if (mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0) { perror("mprotect"); return 1; }
    cgjit_line lines[] = {
        {(uint32_t)prologue, 10, 1, "prov.calc"},
        {(uint32_t)prologue + 6, 11, 1, NULL},
        {(uint32_t)prologue + 12, 12, 1, NULL},
    };
    cgjit_code_loaded(p, prologue + sizeof loop_code, name, lines, 3);
    if (prologue > 0) {
        uint8_t *twin = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (twin == MAP_FAILED) { perror("mmap"); return 1; }
        memcpy(twin, p, prologue + sizeof loop_code);
        if (mprotect(twin, 4096, PROT_READ | PROT_EXEC) != 0) { perror("mprotect"); return 1; }
        cgjit_code_loaded(twin, prologue + sizeof loop_code, "twin", lines, 3);
    }
    int (*f)(int) = (int (*)(int))p;
    printf("%d\n", f(n));
    cgjit_close();
    return 0;
}
