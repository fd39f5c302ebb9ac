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
