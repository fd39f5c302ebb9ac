/* The body of the wrapper Valgrind puts in front of
 * __jit_debug_register_code (lib.rs exports the wrapper's name, so that a
 * stripped library keeps it). Valgrind's wrapping macros are C macros with
 * inline assembly per architecture, hence this file.
 *
 * SPDX-License-Identifier: MIT OR Apache-2.0
 */
#include <valgrind/valgrind.h>

/* In Rust (registry.rs): reads the descriptor of the object holding `original`. */
void cgjit_gdb_registered(void *original);

void cgjit_gdb_wrapper_body(void);
void cgjit_gdb_wrapper_body(void) {
    OrigFn fn;
    /* Valgrind set the original's address on entry to the wrapper; the one
     * plain call from the wrapper to here leaves it as it was. */
    VALGRIND_GET_ORIG_FN(fn);
    cgjit_gdb_registered((void *)fn.nraddr);
    /* The original is empty; a debugger attached through vgdb breaks in it. */
    CALL_FN_v_v(fn);
}
