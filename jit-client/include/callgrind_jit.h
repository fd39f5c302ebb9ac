/* callgrind_jit.h: tell Valgrind and perf about JIT-compiled code.
 *
 * Installed by scripts/install-c.sh: cc jit.c $(pkg-config --cflags --libs callgrind-jit)
 * (libcallgrind_jit.so.0). From a build tree: target/release/libjit_client.a -lpthread -ldl -lm.
 * Call cgjit_code_loaded() when code is committed (after the final mprotect
 * to r-x, before it runs). The session is on under Valgrind or with
 * CALLGRIND_JIT=1 (CALLGRIND_JIT=0 forces it off); off, calls return at once.
 * It writes jit-PID.dump (in $JITDUMPDIR, else the current directory) and
 * /tmp/perf-PID.map (one that belongs to another user is left alone, with one
 * message); `callgrind-jit annotate` reads them.
 *
 * No call ever aborts the JIT: a failure is reported once on stderr and the
 * file that failed is no longer written. All functions are thread-safe.
 *
 * SPDX-License-Identifier: MIT OR Apache-2.0
 */
#ifndef CALLGRIND_JIT_H
#define CALLGRIND_JIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. None of them needs handling: the JIT can always go on. */
#define CGJIT_OK 0           /* success, or the session is off */
#define CGJIT_EINVAL (-1)    /* nothing written: NULL code, zero-size code, a range that
                              * wraps around, NULL lines with nlines > 0, or records
                              * over the jitdump's 4 GiB record size */
#define CGJIT_EIO (-2)       /* a file could not be written (reported once on stderr);
                              * that file is no longer written */
#define CGJIT_EINTERNAL (-3) /* an internal error was caught; nothing more happened */
#define CGJIT_ECLOSED (-4)   /* the session was closed (cgjit_close or process exit):
                              * nothing written (reported once on stderr) */

/* The source position of the instructions from `offset` (bytes from the
 * code's address) up to the next entry's offset (or the end of the code).
 * `file` NULL means the same file as the previous entry. */
typedef struct cgjit_line {
    uint32_t offset;
    uint32_t line;
    uint32_t column; /* 1-based, 0 if unknown */
    const char *file;
} cgjit_line;

/* Opens the process's session. Optional: the first load opens it too.
 * Returns CGJIT_OK, or CGJIT_ECLOSED after cgjit_close: a process's session
 * is not opened again (its jitdump has one writer, from start to close). */
int cgjit_open(void);

/* 1 if the session is writing files, else 0. */
int cgjit_is_enabled(void);

/* Registers `size` (> 0) bytes of committed code at `addr`. `name` may be
 * NULL; `lines` may be NULL when `nlines` is 0. The code bytes are copied
 * into the jitdump; Valgrind drops its translations of the range. Where the
 * range overlaps code registered before (unloaded or not), callgrind is
 * first asked to dump the profile so far: one part per epoch, so that each
 * address holds one function in each part (callgrind-jit annotate names
 * each part with its own code).
 * Returns CGJIT_OK, CGJIT_EINVAL, CGJIT_EIO or CGJIT_ECLOSED. */
int cgjit_code_loaded(const void *addr, size_t size, const char *name,
                      const cgjit_line *lines, size_t nlines);

/* Live mode (also CALLGRIND_JIT_LIVE=1), only under Valgrind: the pages
 * holding each function are mapped from a small ELF file with the same bytes,
 * a symbol and line table for every function on them, so Valgrind names the
 * code (and its lines) itself, in every tool, with no annotate step.
 * Returns 1 if on now.
 * The rule (the JIT's promise when it turns live mode on): every page that
 * holds registered code belongs to the JIT whole, and the JIT changes it only
 * with mprotect and writes at the same addresses. Pages that are writable
 * (RWX), shared or file-backed (a dual mapping) are detected and left to the
 * jitdump, with one message.
 * When freeing live-mode code, munmap (or mmap fresh memory over) its pages
 * before reusing the addresses: Valgrind drops the symbols on munmap. */
int cgjit_set_live(int on);

/* The code at `addr` is gone: Valgrind drops its translations. */
int cgjit_code_unloaded(const void *addr, size_t size);

/* Writes the close record and closes the files (also done at exit). */
int cgjit_close(void);

#ifdef __cplusplus
}
#endif

#endif /* CALLGRIND_JIT_H */
