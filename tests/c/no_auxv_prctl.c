/* Runs a command with prctl(PR_GET_AUXV) failing (EINVAL), through a
 * seccomp filter the command inherits.
 * Why: under Valgrind 3.19, wasmtime's rustix asks the kernel for the
 * auxiliary vector with PR_GET_AUXV and gets the host's, whose vDSO is not
 * mapped in the guest; it then crashes in check_elf_base (rustix issue
 * 1559). When the prctl fails, rustix reads /proc/self/auxv instead,
 * which Valgrind answers with the guest's.
 * Usage: no_auxv_prctl CMD [ARG...]   (e.g. valgrind --tool=callgrind python3 x.py) */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef PR_GET_AUXV
#define PR_GET_AUXV 0x41555856
#endif

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: no_auxv_prctl CMD [ARG...]\n"); return 2; }
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_GET_AUXV, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EINVAL & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof filter / sizeof filter[0], .filter = filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) { perror("PR_SET_NO_NEW_PRIVS"); return 1; }
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) { perror("PR_SET_SECCOMP"); return 1; }
    execvp(argv[1], argv + 1);
    perror(argv[1]);
    return 127;
}
