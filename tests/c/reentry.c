/* Re-entry from a helper: the JIT function `f` calls a native helper
 * with the address of its own continuation, and the helper calls into
 * the middle of `f` (as V8's out-of-line prologue returns into the
 * function, seen by callgrind as a call). The continuation is f's code:
 * its cost is f's, once.
 * With "chain", f calls `outer`, which calls the helper: the continuation
 * comes back through a chain of two calls. With "jit-chain", the helper
 * is a JIT function too (a copy of its code, registered as `helper`),
 * called by `outer_to`: the calls into it held the continuation.
 * Usage: reentry N [chain|jit-chain]   (f runs 3*N + 11 instructions,
 * helper 5, outer 4) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "callgrind_jit.h"
#include "common.h"

/* int helper(int (*k)(int), int n): returns k(n) + 1. */
__asm__(".text\n"
        ".globl helper\n"
        ".type helper, @function\n"
        "helper:\n"
        "  mov %rdi, %rax\n"
        "  mov %esi, %edi\n"
        "  call *%rax\n"
        "  add $1, %eax\n"
        "  ret\n"
        ".size helper, .-helper\n");
int helper(int (*k)(int), int n);

/* int outer(int (*k)(int), int n): returns helper(k, n). */
__asm__(".text\n"
        ".globl outer\n"
        ".type outer, @function\n"
        "outer:\n"
        "  sub $8, %rsp\n"
        "  call helper\n"
        "  add $8, %rsp\n"
        "  ret\n"
        ".size outer, .-outer\n");
int outer(int (*k)(int), int n);

/* The helper's code, to copy into JIT memory. */
static const uint8_t HELPER[] = {0x48, 0x89, 0xf8, 0x89, 0xf7, 0xff, 0xd0, 0x83, 0xc0, 0x01, 0xc3};

/* int outer_to(int (*k)(int), int n): returns jit_helper(k, n). */
void *jit_helper;
__asm__(".text\n"
        ".globl outer_to\n"
        ".type outer_to, @function\n"
        "outer_to:\n"
        "  sub $8, %rsp\n"
        "  call *jit_helper(%rip)\n"
        "  add $8, %rsp\n"
        "  ret\n"
        ".size outer_to, .-outer_to\n");
int outer_to(int (*k)(int), int n);

/* f: push rbx; mov esi,edi; lea rdi,[rip+cont]; movabs rax,helper;
 *    call rax; pop rbx; ret
 * cont (f+24): xor eax,eax; test edi,edi; jle end; loop: add eax,edi;
 *    dec edi; jnz loop; end: ret */

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: reentry N [chain]\n"); return 2; }
    int n = atoi(argv[1]);
    int chain = argc > 2 && strcmp(argv[2], "chain") == 0;
    int jit_chain = argc > 2 && strcmp(argv[2], "jit-chain") == 0;
    uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); return 1; }
    uint64_t target = chain       ? (uint64_t)(uintptr_t)outer
                      : jit_chain ? (uint64_t)(uintptr_t)outer_to
                                  : (uint64_t)(uintptr_t)helper;
    int32_t to_cont = 24 - 10;
    p[0] = 0x53;
    p[1] = 0x89; p[2] = 0xfe;
    p[3] = 0x48; p[4] = 0x8d; p[5] = 0x3d; memcpy(p + 6, &to_cont, 4);
    p[10] = 0x48; p[11] = 0xb8; memcpy(p + 12, &target, 8);
    p[20] = 0xff; p[21] = 0xd0;
    p[22] = 0x5b; p[23] = 0xc3;
    memcpy(p + 24, SUM_LOOP, sizeof SUM_LOOP);
    memcpy(p + 64, HELPER, sizeof HELPER);
    jit_helper = p + 64;
    if (mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0) { perror("mprotect"); return 1; }
    cgjit_line lines[] = {{0, 30, 1, "reentry.calc"}, {24, 31, 1, NULL}, {30, 32, 1, NULL}};
    cgjit_code_loaded(p, 24 + sizeof SUM_LOOP, "f", lines, 3);
    if (jit_chain) {
        cgjit_line helper_line[] = {{0, 40, 1, "reentry.calc"}};
        cgjit_code_loaded(p + 64, sizeof HELPER, "helper", helper_line, 1);
    }
    printf("%d\n", ((int (*)(int))p)(n));
    cgjit_close();
    return 0;
}
