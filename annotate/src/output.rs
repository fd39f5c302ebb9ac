//! Output files: default names, where an output may go, and writing whole
//! or not at all.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// Where an annotated profile goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Standard output (`-o -`).
    Stdout,
    /// A file, written through a temporary file and renamed into place.
    File(PathBuf),
}

impl Target {
    /// `-o VALUE`: `-` is standard output.
    pub fn from_arg(value: &Path) -> Target {
        if value == Path::new("-") {
            Target::Stdout
        } else {
            Target::File(value.to_path_buf())
        }
    }
}

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

/// Refuses an output that is one of `protected` (the inputs, given or
/// found), or that is not a regular file: a rename would replace a link,
/// a device or a FIFO instead of writing to it.
pub fn check_target(output: &Path, protected: &[&Path]) -> Result<()> {
    let out = std::path::absolute(output).unwrap_or_else(|_| output.to_path_buf());
    let out_real = output.canonicalize().ok();
    for input in protected {
        let same_path = std::path::absolute(input).is_ok_and(|i| i == out);
        let same_file = out_real.is_some() && input.canonicalize().ok() == out_real;
        if same_path || same_file {
            bail!("refusing to overwrite input '{}'", input.display());
        }
    }
    let Ok(meta) = std::fs::symlink_metadata(output) else {
        return Ok(());
    };
    let kind = meta.file_type();
    let what = if kind.is_file() {
        return Ok(());
    } else if kind.is_symlink() {
        "a symbolic link (give the file it points to)"
    } else if kind.is_dir() {
        "a folder"
    } else if kind.is_fifo() {
        "a FIFO (use -o - and a pipe)"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device (use -o - to write to standard output)"
    } else {
        "not a regular file"
    };
    bail!("refusing to replace '{}': it is {what}", output.display())
}

/// Writes `path` through a temporary file beside it, with permission bits
/// `mode`, renamed into place only when `fill` succeeds; on failure
/// nothing is left behind.
pub fn write_atomically<T>(
    path: &Path,
    mode: u32,
    fill: impl FnOnce(&File) -> Result<T>,
) -> Result<T> {
    let tmp = tempfile_for(path);
    let file = File::options()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .with_context(|| format!("cannot create '{}'", tmp.display()))?;
    let result = (|| {
        // Exactly the input's bits, whatever the umask: a 0600 profile
        // stays private.
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
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

/// Fills an unlinked temporary file, then copies it to standard output:
/// whole or not at all there too.
pub fn write_to_stdout<T>(fill: impl FnOnce(&File) -> Result<T>) -> Result<T> {
    let file = unlinked_temp_file("stdout").context("cannot create a temporary file")?;
    let value = fill(&file)?;
    let mut from = &file;
    std::io::Seek::seek(&mut from, std::io::SeekFrom::Start(0))?;
    let mut out = std::io::stdout().lock();
    std::io::copy(&mut from, &mut out).context("cannot write to standard output")?;
    out.flush()?;
    Ok(value)
}

/// A new file in $TMPDIR, readable and writable, already unlinked: nothing
/// is left behind, whatever happens next. `purpose` goes into its name.
pub fn unlinked_temp_file(purpose: &str) -> std::io::Result<File> {
    let dir = std::env::temp_dir();
    let pid = std::process::id();
    for n in 0..100 {
        let path = dir.join(format!(".callgrind-jit-{purpose}.{pid}.{n}"));
        match File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => {
                std::fs::remove_file(&path)?;
                return Ok(file);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        format!("no free temporary file name in '{}'", dir.display()),
    ))
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
