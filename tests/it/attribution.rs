//! Cost goes where the code is, on real valgrind runs: JIT code entered by
//! a jump is charged to its own function, not to the one that jumped.

use crate::util;

#[test]
fn a_jit_tail_jump_leaves_the_callee_its_own_cost() {
    let dir = util::scratch("attr-tail-jump");
    let prog = util::c_program(&dir, "tail_jump");
    let n: u64 = 1000;
    let env = [("CALLGRIND_JIT_PERF_MAP", "0")];
    let (pid, _) = util::callgrind(&dir, &[], &prog, &[&n.to_string()], &env);
    let out = util::annotate(&dir, &[&format!("callgrind.out.{pid}"), "-o", "named"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    let listing = util::callgrind_annotate(&dir.join("named"), &["--auto=no", "--threshold=100"]);
    // The truth from the program: the loop and its entry and exit are
    // sum_to's; mov, movabs and jmp are tramp's.
    let sum_to = util::costs_where(&listing, |l| l.contains(" jump.calc:sum_to "));
    let tramp = util::costs_where(&listing, |l| l.contains(" jump.calc:tramp "));
    assert_eq!((sum_to, tramp), (3 * n + 4, 3), "{listing}\n{said}");
    assert!(
        said.contains("moved to the JIT function whose code it is"),
        "{said}"
    );
}
