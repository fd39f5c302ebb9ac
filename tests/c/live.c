/* Live mode: three hand-assembled functions, each on pages of its own, so
 * Valgrind names them itself (no annotate step).
 *   jit_loop(n)      sums n..1                       live.calc lines 2-5
 *   jit_caller(fn)   calls a native function          live.calc lines 8-9
 *   jit_read(p)      reads an int through p           live.calc line 12
 * Usage: live N [plain]  (N loop iterations; then a backtrace, an allocation
 * made from jit_caller (4,000 bytes kept, 100 leaked) and an invalid
 * read; with "plain", live mode stays off: the jitdump alone names them) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <valgrind/valgrind.h>
#include "callgrind_jit.h"

static const uint8_t loop_code[] = {0x31, 0xc0, 0x85, 0xff, 0x7e, 0x06, 0x01, 0xf8, 0xff, 0xcf, 0x75, 0xfa, 0xc3};
static const cgjit_line loop_lines[] = {{0, 2, 1, "live.calc"}, {2, 3, 1, NULL}, {6, 4, 1, NULL}, {12, 5, 1, NULL}};
static const uint8_t caller_code[] = {0x53, 0xff, 0xd7, 0x5b, 0xc3}; /* push rbx; call rdi; pop rbx; ret */
static const cgjit_line caller_lines[] = {{0, 8, 1, "live.calc"}, {1, 9, 5, NULL}, {3, 10, 1, NULL}};
static const uint8_t read_code[] = {0x8b, 0x07, 0xc3}; /* mov eax, [rdi]; ret */
static const cgjit_line read_lines[] = {{0, 12, 5, "live.calc"}, {2, 13, 1, NULL}};

static void *commit(const char *name, const uint8_t *code, size_t size, const cgjit_line *lines, size_t n) {
    uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); exit(1); }
    memcpy(p, code, size);
    if (mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0) { perror("mprotect"); exit(1); }
    cgjit_code_loaded(p, size, name, lines, n);
    return p;
}

static void native_backtrace(void) { VALGRIND_PRINTF_BACKTRACE("backtrace from native code\n"); }

/* Allocated from JIT code (through jit_caller) and never freed: massif's
 * and DHAT's trees hold jit_caller's frame. */
void *kept; /* external: the store stays */
static void native_alloc(void) {
    kept = malloc(4000);
    void *volatile lost = malloc(100); /* leaked: definitely lost */
    lost = NULL;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    cgjit_open();
    if (argc < 3 || strcmp(argv[2], "plain") != 0) cgjit_set_live(1);
    int (*jit_loop)(int) = (int (*)(int))commit("jit_loop", loop_code, sizeof loop_code, loop_lines, 4);
    void (*jit_caller)(void (*)(void)) = (void (*)(void (*)(void)))commit("jit_caller", caller_code, sizeof caller_code, caller_lines, 3);
    int (*jit_read)(int *) = (int (*)(int *))commit("jit_read", read_code, sizeof read_code, read_lines, 2);
    printf("sum %d\n", jit_loop(n));
    jit_caller(native_backtrace);
    jit_caller(native_alloc);
    int *gone = malloc(sizeof *gone);
    free(gone);
    printf("read %d\n", jit_read(gone) != 0 ? 1 : 0);
    return 0;
}
