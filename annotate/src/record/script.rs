//! A command that is a script (`erl`, `elixir`, `mix`...): valgrind runs
//! its interpreter, and the program the script starts (BEAM) is profiled
//! only with `--trace-children=yes`. Without it the run leaves an empty
//! profile, or one of the shell alone.

use std::path::{Path, PathBuf};

/// The valgrind options to run `command` with: `options`, and
/// `--trace-children=yes` where the command is a script and the options
/// leave tracing unsaid; with what to tell the user of it.
pub(super) fn traced(options: &[String], command: &[String]) -> (Vec<String>, Option<String>) {
    let mut options = options.to_vec();
    let said = options.iter().any(|o| o.starts_with("--trace-children="));
    let program = command.first().map(String::as_str).unwrap_or_default();
    if said || !is_script(program) {
        return (options, None);
    }
    options.push("--trace-children=yes".into());
    let line = format!(
        "'{program}' is a script: --trace-children=yes added, so that the program it starts is \
         profiled (--trace-children=no keeps it off)"
    );
    (options, Some(line))
}

/// An error where every profile valgrind wrote is empty: what callgrind
/// leaves of a process that replaced itself (exec) with a program it was
/// not told to follow.
pub(super) fn none_left_empty(profiles: &[PathBuf]) -> anyhow::Result<()> {
    let empty = |p: &PathBuf| std::fs::metadata(p).is_ok_and(|m| m.len() == 0);
    match profiles.first() {
        Some(first) if profiles.iter().all(empty) => anyhow::bail!(
            "valgrind's profile '{}' is empty: the program replaced itself (exec) with one \
             valgrind did not follow; record with --trace-children=yes",
            first.display()
        ),
        _ => Ok(()),
    }
}

/// True where `program` (a path, or a name looked up on `PATH`) starts
/// with `#!`.
fn is_script(program: &str) -> bool {
    let Some(path) = resolve(program) else {
        return false;
    };
    let mut head = [0; 2];
    std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok_and(|()| &head == b"#!")
}

/// The file `program` names, as the shell finds it.
fn resolve(program: &str) -> Option<PathBuf> {
    resolve_in(program, &std::env::var_os("PATH")?)
}

/// The file `program` names, looked up in the folders of `path` where it
/// has no `/`: the first executable file of that name.
fn resolve_in(program: &str, path: &std::ffi::OsStr) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    std::env::split_paths(path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn a_script_is_traced_into_the_program_it_starts_unless_said_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("launch");
        std::fs::write(&script, "#!/bin/sh\nexec true\n").unwrap();
        let binary = dir.path().join("binary");
        std::fs::write(&binary, b"\x7fELF").unwrap();
        let run = |options: &[&str], program: &Path| {
            let command = strings(&[program.to_str().unwrap(), "arg"]);
            traced(&strings(options), &command)
        };
        let (options, line) = run(&["--dump-instr=yes"], &script);
        assert_eq!(options, ["--dump-instr=yes", "--trace-children=yes"]);
        assert!(line.is_some_and(|l| l.contains("is a script")));
        for given in ["--trace-children=no", "--trace-children=yes"] {
            assert_eq!(run(&[given], &script), (strings(&[given]), None));
        }
        assert_eq!(run(&[], &binary), (Vec::new(), None));
        assert_eq!(run(&[], &dir.path().join("missing")), (Vec::new(), None));
    }

    #[test]
    fn only_a_run_whose_every_profile_is_empty_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let (empty, full) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&empty, "").unwrap();
        std::fs::write(&full, "events: Ir\n").unwrap();
        let err = none_left_empty(std::slice::from_ref(&empty)).unwrap_err();
        assert!(err.to_string().contains("--trace-children=yes"), "{err}");
        // --separate-threads=yes leaves an empty file beside the threads'.
        assert!(none_left_empty(&[empty, full]).is_ok());
        assert!(none_left_empty(&[]).is_ok());
    }

    #[test]
    fn the_first_executable_file_of_the_name_on_the_path_is_the_program() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let folder = |name: &str| {
            let path = dir.path().join(name);
            std::fs::create_dir(&path).unwrap();
            path
        };
        let (plain, nested, bin) = (folder("plain"), folder("nested"), folder("bin"));
        // Not it: a file without an execute bit, a folder of the name.
        std::fs::write(plain.join("launch"), "#!/bin/sh\n").unwrap();
        std::fs::create_dir(nested.join("launch")).unwrap();
        let it = bin.join("launch");
        std::fs::write(&it, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&it, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths([&plain, &nested, &bin]).unwrap();
        assert_eq!(resolve_in("launch", &path), Some(it));
        let mode = std::fs::Permissions::from_mode(0o644);
        std::fs::set_permissions(bin.join("launch"), mode).unwrap();
        assert_eq!(resolve_in("launch", &path), None);
    }

    #[test]
    fn a_name_is_found_on_the_path_as_the_shell_finds_it() {
        // `sh` itself is a program, not a script, wherever it is.
        assert!(resolve("sh").is_some());
        assert!(!is_script("sh"));
        assert_eq!(resolve("no-such-program-anywhere"), None);
    }
}
