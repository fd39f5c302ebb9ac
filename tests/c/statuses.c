/* Prints the status of each call of the C ABI, one per line: misuses, an
 * unload, and a load from an atexit handler that runs after the exit-time
 * close. With the argument `close`, the session is closed by cgjit_close
 * first and used after that. */
#include <stdlib.h>
#include <string.h>
#include "callgrind_jit.h"
#include "common.h"

static void *f;

static void late_load(void) {
    printf("after exit-time close: %d\n", cgjit_code_loaded(f, 6, "late", NULL, 0));
    printf("open after close: %d\n", cgjit_open());
}

int main(int argc, char **argv) {
    atexit(late_load); /* runs after jit-client's own exit handler */
    f = make_function(7);
    printf("normal: %d\n", cgjit_code_loaded(f, 6, "normal", NULL, 0));
    printf("enabled: %d\n", cgjit_is_enabled());
    if (argc > 1 && strcmp(argv[1], "close") == 0) {
        printf("close: %d\n", cgjit_close());
        printf("load after close: %d\n", cgjit_code_loaded(f, 6, "after", NULL, 0));
        printf("unload after close: %d\n", cgjit_code_unloaded(f, 6));
        printf("enabled after close: %d\n", cgjit_is_enabled());
        printf("close again: %d\n", cgjit_close());
        fflush(stdout);
        return 0;
    }
    printf("unload: %d\n", cgjit_code_unloaded(f, 6));
    printf("unload zero size: %d\n", cgjit_code_unloaded(f, 0));
    printf("zero size: %d\n", cgjit_code_loaded(f, 0, "empty", NULL, 0));
    printf("null code: %d\n", cgjit_code_loaded(NULL, 6, "null", NULL, 0));
    printf("wraps: %d\n", cgjit_code_loaded((void *)-16, 32, "wraps", NULL, 0));
    printf("null lines: %d\n", cgjit_code_loaded(f, 6, "lines", NULL, 2));
    fflush(stdout);
    return 0;
}
