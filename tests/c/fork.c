/* Registers one function, forks; the child registers another. Prints the
 * child's pid. The child's record must land in its own files. */
#include <sys/wait.h>
#include <unistd.h>
#include "callgrind_jit.h"
#include "common.h"

int main(void) {
    cgjit_open();
    void *f = make_function(1);
    cgjit_code_loaded(f, 6, "parent_fn", NULL, 0);
    pid_t child = fork();
    if (child == 0) {
        void *g = make_function(2);
        cgjit_code_loaded(g, 6, "child_fn", NULL, 0);
        _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    void *h = make_function(3);
    cgjit_code_loaded(h, 6, "parent_after_fork", NULL, 0);
    printf("%d\n", (int)child);
    return WEXITSTATUS(status);
}
