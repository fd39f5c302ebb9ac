/* A tiny hand-assembled x86-64 JIT that registers its code through
 * callgrind_jit.h. It "compiles" the two functions of sum.calc:
 *
 *   sum_to(n)  loops n times adding n, n-1, ... 1
 *   report(n)  calls sum_to(n), then the native helper print_result()
 *
 * Build: gcc demo.c -I../../jit-client/include ../../target/release/libjit_client.a -lpthread -ldl -lm
 * Run:   valgrind --tool=callgrind --dump-instr=yes ./a.out 1000
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "callgrind_jit.h"

static void print_result(int value) { printf("sum = %d\n", value); }

/* sum_to: xor eax,eax; test edi,edi; jle done; loop: add eax,edi;
 * dec edi; jnz loop; done: ret */
static const uint8_t sum_to_code[] = {
    0x31, 0xc0,             /* 0: xor eax, eax      line 2 */
    0x85, 0xff,             /* 2: test edi, edi     line 3 */
    0x7e, 0x06,             /* 4: jle +6            line 3 */
    0x01, 0xf8,             /* 6: add eax, edi      line 4 */
    0xff, 0xcf,             /* 8: dec edi           line 5 */
    0x75, 0xfa,             /* 10: jnz -6           line 5 */
    0xc3,                   /* 12: ret              line 6 */
};

static const cgjit_line sum_to_lines[] = {
    {0, 2, 3, "sum.calc"}, {2, 3, 3, NULL}, {6, 4, 5, NULL}, {8, 5, 5, NULL}, {12, 6, 3, NULL},
};

/* report: push rbx; call sum_to; mov edi,eax; mov rax,helper; call rax;
 * pop rbx; ret (the call's rel32 is patched in at run time) */
static const uint8_t report_code[] = {
    0x53,                         /* 0: push rbx           line 9 */
    0xe8, 0, 0, 0, 0,             /* 1: call sum_to        line 10 */
    0x89, 0xc7,                   /* 6: mov edi, eax       line 11 */
    0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, /* 8: mov rax, imm64 line 11 */
    0xff, 0xd0,                   /* 18: call rax          line 11 */
    0x5b,                         /* 20: pop rbx           line 12 */
    0xc3,                         /* 21: ret               line 12 */
};

static const cgjit_line report_lines[] = {
    {0, 9, 1, "sum.calc"}, {1, 10, 3, NULL}, {6, 11, 3, NULL}, {20, 12, 1, NULL},
};

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    uint8_t *buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED) { perror("mmap"); return 1; }
    uint8_t *sum_to = buf, *report = buf + 64;
    memcpy(sum_to, sum_to_code, sizeof sum_to_code);
    memcpy(report, report_code, sizeof report_code);
    int32_t rel = (int32_t)(sum_to - (report + 6));
    memcpy(report + 2, &rel, 4);
    uint64_t helper = (uint64_t)(uintptr_t)&print_result;
    memcpy(report + 10, &helper, 8);
    if (mprotect(buf, 4096, PROT_READ | PROT_EXEC) != 0) { perror("mprotect"); return 1; }

    cgjit_open();
    cgjit_code_loaded(sum_to, sizeof sum_to_code, "sum_to", sum_to_lines, 5);
    cgjit_code_loaded(report, sizeof report_code, "report", report_lines, 4);

    void (*report_fn)(int) = (void (*)(int))report;
    for (int i = 0; i < 10; i++) report_fn(n);

    cgjit_code_unloaded(buf, 4096);
    cgjit_close();
    munmap(buf, 4096);
    return 0;
}
