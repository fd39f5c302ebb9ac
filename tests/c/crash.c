/* Registers functions until killed: prints a line after the first 200 so
 * the test knows when to send SIGKILL. */
#include <unistd.h>
#include "callgrind_jit.h"
#include "common.h"

int main(void) {
    char name[32];
    void *f = make_function(7);
    cgjit_line line = {0, 1, 1, "crash.toy"};
    for (int i = 0;; i++) {
        snprintf(name, sizeof name, "fn_%d", i);
        cgjit_code_loaded(f, 6, name, &line, 1);
        if (i == 200) { printf("ready\n"); fflush(stdout); }
        if (i > 200) usleep(100);
    }
}
