/* Prints the status of each misuse of the C ABI, one per line, including a
 * load from an atexit handler that runs after the exit-time close. */
#include <stdlib.h>
#include "callgrind_jit.h"
#include "common.h"

static void *f;

static void late_load(void) {
    printf("after exit-time close: %d\n", cgjit_code_loaded(f, 6, "late", NULL, 0));
    printf("open after close: %d\n", cgjit_open());
}

int main(void) {
    atexit(late_load); /* runs after jit-client's own exit handler */
    f = make_function(7);
    printf("normal: %d\n", cgjit_code_loaded(f, 6, "normal", NULL, 0));
    printf("zero size: %d\n", cgjit_code_loaded(f, 0, "empty", NULL, 0));
    printf("null code: %d\n", cgjit_code_loaded(NULL, 6, "null", NULL, 0));
    printf("wraps: %d\n", cgjit_code_loaded((void *)-16, 32, "wraps", NULL, 0));
    printf("null lines: %d\n", cgjit_code_loaded(f, 6, "lines", NULL, 2));
    fflush(stdout);
    return 0;
}
