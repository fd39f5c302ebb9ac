/* JITs whose pages live mode must not map over, with live mode on:
 *   rwx   code in a read-write-execute page, written again after the first
 *         function is registered (a read-only mapping would crash it);
 *   dual  W^X with a dual mapping: a memfd mapped writable and executable;
 *         code rewritten through the writable view must run from the other
 *         (a private copy would run stale bytes).
 *   neighbour  two functions on one page, the second 64 bytes in and
 *         registered after the first was mapped live: both must be named.
 *   arena  two functions at both ends of a 2.5 MB arena, the arena above a
 *         freed hole where jit-client's rw- page may then go (the image's
 *         program headers must still be in address order).
 *   fork  a function registered, a fork; the child registers one, then
 *         the parent (each in its own live folder).
 * Prints the values the functions return: "7 8". */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "callgrind_jit.h"

static const cgjit_line lines[] = {{0, 1, 1, "pages.calc"}};

/* mov eax, n; ret */
static void emit(uint8_t *p, int n) {
    uint8_t code[] = {0xb8, 0, 0, 0, 0, 0xc3};
    memcpy(code + 1, &n, 4);
    memcpy(p, code, sizeof code);
}

static int call(void *f) { return ((int (*)(void))f)(); }

static int rwx(void) {
    uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); return 1; }
    emit(p, 7);
    cgjit_code_loaded(p, 6, "rwx_first", lines, 1);
    emit(p + 64, 8); /* the JIT writes into its RWX page again */
    cgjit_code_loaded(p + 64, 6, "rwx_second", lines, 1);
    printf("%d %d\n", call(p), call(p + 64));
    return 0;
}

static int dual(void) {
    int fd = memfd_create("jit", 0);
    if (fd < 0 || ftruncate(fd, 4096) != 0) { perror("memfd"); return 1; }
    uint8_t *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    uint8_t *x = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
    if (w == MAP_FAILED || x == MAP_FAILED) { perror("mmap"); return 1; }
    emit(w, 7);
    cgjit_code_loaded(x, 6, "dual_first", lines, 1);
    int a = call(x);
    cgjit_code_unloaded(x, 6);
    emit(w, 8); /* rewritten through the writable view */
    cgjit_code_loaded(x, 6, "dual_second", lines, 1);
    printf("%d %d\n", a, call(x));
    return 0;
}

static int neighbour(void) {
    uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); return 1; }
    static const cgjit_line second[] = {{0, 5, 1, "pages.calc"}};
    emit(p, 7);
    mprotect(p, 4096, PROT_READ | PROT_EXEC);
    cgjit_code_loaded(p, 6, "neighbour_first", lines, 1);
    /* W^X in place: writable for a moment, then executable again. */
    mprotect(p, 4096, PROT_READ | PROT_WRITE);
    emit(p + 64, 8);
    mprotect(p, 4096, PROT_READ | PROT_EXEC);
    cgjit_code_loaded(p + 64, 6, "neighbour_second", second, 1);
    printf("%d %d\n", call(p), call(p + 64));
    return 0; /* the code stays mapped: callgrind reads lines at exit */
}

/* Like neighbour, but the second function is never registered. */
static int unregistered(void) {
    uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); return 1; }
    emit(p, 7);
    emit(p + 64, 8);
    mprotect(p, 4096, PROT_READ | PROT_EXEC);
    cgjit_code_loaded(p, 6, "registered", lines, 1);
    int sum = 0;
    for (int i = 0; i < 1000; i++) sum += call(p) + call(p + 64);
    printf("%d\n", sum);
    return 0;
}

static int arena(void) {
    size_t size = 2560 * 1024;
    uint8_t *hole = mmap(NULL, 64 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uint8_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (hole == MAP_FAILED || p == MAP_FAILED) { perror("mmap"); return 1; }
    munmap(hole, 64 * 4096);
    uint8_t *last = p + size - 4096;
    emit(p, 7);
    emit(last, 8);
    mprotect(p, size, PROT_READ | PROT_EXEC);
    cgjit_code_loaded(last, 6, "arena_top", lines, 1);
    cgjit_code_loaded(p, 6, "arena_bottom", lines, 1);
    int a = 0, b = 0;
    for (int i = 0; i < 100; i++) a = call(p), b = call(last);
    printf("%d %d\n", a, b);
    return 0;
}

static void *exec_page(int n) {
    uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); _exit(1); }
    emit(p, n);
    mprotect(p, 4096, PROT_READ | PROT_EXEC);
    return p;
}

static int forked(void) {
    void *f = exec_page(7);
    cgjit_code_loaded(f, 6, "fork_parent", lines, 1);
    pid_t child = fork();
    if (child == 0) {
        void *g = exec_page(9);
        cgjit_code_loaded(g, 6, "fork_child", lines, 1);
        for (int i = 0; i < 100; i++) call(g);
        _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    void *h = exec_page(8);
    cgjit_code_loaded(h, 6, "fork_parent_after", lines, 1);
    int a = 0, b = 0;
    for (int i = 0; i < 100; i++) a = call(f), b = call(h);
    printf("%d %d\n", a, b);
    return WEXITSTATUS(status);
}

int main(int argc, char **argv) {
    cgjit_open();
    cgjit_set_live(1);
    if (argc > 1 && strcmp(argv[1], "dual") == 0) return dual();
    if (argc > 1 && strcmp(argv[1], "neighbour") == 0) return neighbour();
    if (argc > 1 && strcmp(argv[1], "unregistered") == 0) return unregistered();
    if (argc > 1 && strcmp(argv[1], "arena") == 0) return arena();
    if (argc > 1 && strcmp(argv[1], "fork") == 0) return forked();
    return rwx();
}
