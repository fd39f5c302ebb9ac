/* A JIT that registers its one function under an Itanium C++ name, as
 * LLVM JITs do: app::sum(int). */
#include "callgrind_jit.h"
#include "common.h"

int main(void) {
    uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); return 1; }
    memcpy(p, SUM_LOOP, sizeof SUM_LOOP);
    if (mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0) { perror("mprotect"); return 1; }
    cgjit_code_loaded(p, sizeof SUM_LOOP, "_ZN3app3sumEi", NULL, 0);
    int (*sum)(int) = (int (*)(int))p;
    long total = 0;
    for (int i = 0; i < 100; i++) total += sum(1000);
    printf("%ld\n", total);
    return 0;
}
