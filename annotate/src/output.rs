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
    check_not_input(output, protected)?;
    if let Some(what) = not_regular(output) {
        let advice = match what {
            NotRegular::Link => "give the file it points to",
            NotRegular::Folder => "give a file name",
            NotRegular::Fifo => "use -o - and a pipe",
            NotRegular::Device => "use -o - to write to standard output",
        };
        bail!(
            "refusing to replace '{}': it is {} ({advice})",
            output.display(),
            what.describe()
        );
    }
    Ok(())
}

/// Refuses `output` if it is one of `protected`, by path or by file.
pub fn check_not_input(output: &Path, protected: &[&Path]) -> Result<()> {
    let out = std::path::absolute(output).unwrap_or_else(|_| output.to_path_buf());
    let out_real = output.canonicalize().ok();
    for input in protected {
        let same_path = std::path::absolute(input).is_ok_and(|i| i == out);
        let same_file = out_real.is_some() && input.canonicalize().ok() == out_real;
        if same_path || same_file {
            bail!("refusing to overwrite input '{}'", input.display());
        }
    }
    Ok(())
}

/// What is at a path that a rename must not replace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotRegular {
    /// A symbolic link.
    Link,
    /// A folder.
    Folder,
    /// A FIFO.
    Fifo,
    /// A device or a socket.
    Device,
}

impl NotRegular {
    /// Its name in an error.
    pub fn describe(self) -> &'static str {
        match self {
            NotRegular::Link => "a symbolic link",
            NotRegular::Folder => "a folder",
            NotRegular::Fifo => "a FIFO",
            NotRegular::Device => "a device or socket",
        }
    }
}

/// What is at `path` if it exists and is not a regular file.
pub fn not_regular(path: &Path) -> Option<NotRegular> {
    let kind = std::fs::symlink_metadata(path).ok()?.file_type();
    Some(if kind.is_file() {
        return None;
    } else if kind.is_symlink() {
        NotRegular::Link
    } else if kind.is_dir() {
        NotRegular::Folder
    } else if kind.is_fifo() {
        NotRegular::Fifo
    } else {
        NotRegular::Device
    })
}

/// Writes `path` through a temporary file beside it (a name no other user
/// can guess), with permission bits `mode`, renamed into place only when
/// `fill` succeeds; on failure nothing is left behind.
pub fn write_atomically<T>(
    path: &Path,
    mode: u32,
    fill: impl FnOnce(&File) -> Result<T>,
) -> Result<T> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| unwritable_folder(path, dir, &e))?;
    // Exactly the input's bits, whatever the umask: a 0600 profile stays
    // private.
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))?;
    let filling = crate::memory::filling(tmp.path());
    let value = fill(tmp.as_file())?;
    drop(filling);
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot rename to '{}'", path.display()))?;
    Ok(value)
}

/// Why `path` cannot be written in `dir`, from the error creating a file
/// there (its kind only: the temporary file's name means nothing to a
/// user).
fn unwritable_folder(path: &Path, dir: &Path, e: &std::io::Error) -> anyhow::Error {
    use std::io::ErrorKind;
    let why: String = match e.kind() {
        ErrorKind::PermissionDenied => "no permission to create files there".into(),
        ErrorKind::ReadOnlyFilesystem => "its file system is read-only".into(),
        ErrorKind::NotFound => "it does not exist".into(),
        kind => kind.to_string(),
    };
    anyhow::anyhow!(
        "cannot write '{}' in '{}': {why}; give -o a path in a folder you can write to",
        path.display(),
        dir.display()
    )
}

/// Fills an unlinked temporary file, then copies it to standard output:
/// whole or not at all there too.
pub fn write_to_stdout<T>(fill: impl FnOnce(&File) -> Result<T>) -> Result<T> {
    let file = unlinked_temp_file().context("cannot create a temporary file")?;
    let value = fill(&file)?;
    let mut from = &file;
    std::io::Seek::seek(&mut from, std::io::SeekFrom::Start(0))?;
    let mut out = std::io::stdout().lock();
    std::io::copy(&mut from, &mut out).context("cannot write to standard output")?;
    out.flush()?;
    Ok(value)
}

/// A new file in $TMPDIR, readable and writable, already unlinked (or
/// never linked): nothing is left behind, whatever happens next.
pub fn unlinked_temp_file() -> std::io::Result<File> {
    tempfile::tempfile()
}

/// An unlinked temporary file holding `data`.
pub fn file_holding(data: &[u8]) -> std::io::Result<File> {
    use std::io::Write;
    let mut file = unlinked_temp_file()?;
    file.write_all(data)?;
    Ok(file)
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
