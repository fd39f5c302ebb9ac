/* The program ends while the process it started goes on (as Erlang's erl
 * script ends before beam.smp's helper): the parent runs parent_fn and
 * exits at once; the child, three seconds later, registers and runs late_fn
 * 1000 times, then exits. Each writes its own profile when it ends.
 * With the argument "spoil" the child also leaves a file named like a
 * profile that is none (callgrind.out.999999999): its annotation fails,
 * the two processes' must not. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "callgrind_jit.h"
#include "common.h"

int main(int argc, char **argv) {
    cgjit_open();
    if (fork() == 0) {
        sleep(3);
        int (*late)(void) = (int (*)(void))make_function(7);
        cgjit_code_loaded((void *)late, 6, "late_fn", NULL, 0);
        int sum = 0;
        for (int i = 0; i < 1000; i++)
            sum += late();
        if (argc > 1 && strcmp(argv[1], "spoil") == 0) {
            int fd = open("callgrind.out.999999999", O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd < 0 || write(fd, "not a profile at all", 20) != 20)
                _exit(2);
            close(fd);
        }
        _exit(sum == 7000 ? 0 : 1);
    }
    int (*f)(void) = (int (*)(void))make_function(1);
    cgjit_code_loaded((void *)f, 6, "parent_fn", NULL, 0);
    return f() - 1;
}
