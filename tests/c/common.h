/* Helpers for the test programs: executable copies of a tiny function. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* mov eax, N; ret */
static void *make_function(int n) {
    uint8_t code[] = {0xb8, 0, 0, 0, 0, 0xc3};
    memcpy(code + 1, &n, 4);
    uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); exit(1); }
    memcpy(p, code, sizeof code);
    if (mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0) { perror("mprotect"); exit(1); }
    return p;
}

/* int sum(int n), n > 0: xor eax,eax; test edi,edi; jle end; loop: add eax,edi;
 * dec edi; jnz loop; end: ret. Runs 3*n + 4 instructions. */
static const uint8_t SUM_LOOP[] = {0x31, 0xc0, 0x85, 0xff, 0x7e, 0x06, 0x01, 0xf8, 0xff, 0xcf, 0x75, 0xfa, 0xc3};
