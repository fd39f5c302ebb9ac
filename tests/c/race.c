/* Two threads each run a JIT function of its own that adds 1 to one
 * shared int, unlocked: a data race between two JIT functions for
 * helgrind and DRD. Each function is `add dword [rdi], 1; ret`, on a page
 * of its own, registered with a line: bump_a at race.calc:3, bump_b at
 * race.calc:7. Prints the count (at most 2,000). */
#include <pthread.h>
#include "callgrind_jit.h"
#include "common.h"

static const uint8_t BUMP[] = {0x83, 0x07, 0x01, 0xc3};

static void *commit(const char *name, int line) {
    uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); exit(1); }
    memcpy(p, BUMP, sizeof BUMP);
    if (mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0) { perror("mprotect"); exit(1); }
    cgjit_line lines[] = {{0, line, 1, "race.calc"}};
    cgjit_code_loaded(p, sizeof BUMP, name, lines, 1);
    return p;
}

static int shared;

static void *run(void *f) {
    for (int i = 0; i < 1000; i++) ((void (*)(int *))f)(&shared);
    return NULL;
}

int main(void) {
    void *a = commit("bump_a", 3), *b = commit("bump_b", 7);
    pthread_t ta, tb;
    pthread_create(&ta, NULL, run, a);
    pthread_create(&tb, NULL, run, b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    printf("%d\n", shared);
    return 0;
}
