//! Output files: default names, and writing whole or not at all.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// The default output for `input`: `callgrind.out.X` becomes
/// `callgrind.jit.out.X` beside it, any other name gets a `jit.` prefix.
/// KCachegrind loads every file whose name starts with the one opened, so
/// the output must not start with the input's name.
pub fn default_output(input: &Path) -> PathBuf {
    let name = input
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let new = match name.strip_prefix("callgrind.out") {
        Some(rest) => format!("callgrind.jit.out{rest}"),
        None => format!("jit.{name}"),
    };
    input.with_file_name(new)
}

/// Refuses an output that is one of the inputs.
pub fn check_not_input(output: &Path, inputs: &[PathBuf]) -> Result<()> {
    let out = std::path::absolute(output).unwrap_or_else(|_| output.to_path_buf());
    let out_real = output.canonicalize().ok();
    for input in inputs {
        let same_path = std::path::absolute(input).is_ok_and(|i| i == out);
        let same_file = out_real.is_some() && input.canonicalize().ok() == out_real;
        if same_path || same_file {
            bail!("refusing to overwrite input '{}'", input.display());
        }
    }
    Ok(())
}

/// Writes `path` through a temporary file beside it, renamed into place
/// only when `fill` succeeds; on failure nothing is left behind.
pub fn write_atomically<T>(path: &Path, fill: impl FnOnce(&File) -> Result<T>) -> Result<T> {
    let tmp = tempfile_for(path);
    let file = File::options()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .with_context(|| format!("cannot create '{}'", tmp.display()))?;
    let result = (|| {
        let value = fill(&file)?;
        std::fs::rename(&tmp, path)
            .with_context(|| format!("cannot rename to '{}'", path.display()))?;
        Ok(value)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn tempfile_for(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names_do_not_extend_the_input() {
        assert_eq!(
            default_output(Path::new("/d/callgrind.out.12.2")),
            Path::new("/d/callgrind.jit.out.12.2")
        );
        assert_eq!(default_output(Path::new("cg.out")), Path::new("jit.cg.out"));
    }
}
