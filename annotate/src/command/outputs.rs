//! One profile's outputs: its rewrite and the code image beside it, both
//! written whole or neither, and `--merge`'s joined profile.

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use super::{Report, Request, Rewritten};
use crate::callgrind::{self, Ending, RewriteError, Stats};
use crate::code_image;
use crate::input::{self, Input, OUTPUT_MARK};
use crate::output::{self, Target};
use crate::symbols::{object_name, SymbolTable};

/// Rewrites one profile into its output, and the machine code of the JIT
/// functions it names into a code image beside it: both written, or
/// neither.
pub(super) fn rewrite_one(
    request: &Request,
    profile: &Input,
    symbols: &SymbolTable,
    protected: &[&Path],
) -> Result<Rewritten> {
    let allow = request.allow_truncated;
    let whole;
    let profile = match profile.cut()? {
        None => profile,
        Some((_, cut)) if !allow => return Err(ends_early(&profile.path, cut.describe())),
        Some((end, _)) => {
            whole = profile.prefix(end)?;
            &whole
        }
    };
    let own_output = request.output.as_deref().filter(|_| !request.merge);
    let target = target_for(own_output, profile);
    let image = match &target {
        Target::File(out) if !request.no_code && code_image::wanted(symbols) => {
            Some(code_image::path_for(out))
        }
        _ => None,
    };
    // A jitdump's functions are under the code image where one is written.
    let image_object = image.as_deref().map(object_name);
    let named = (symbols, image_object.as_deref());
    let (stats, code_image) = match &target {
        Target::Stdout => (
            output::write_to_stdout(|file| rewrite_into(profile, file, named, allow))?,
            None,
        ),
        Target::File(out) => {
            let paths = (out.as_path(), image.as_deref());
            write_with_image(profile, paths, named, protected, allow)?
        }
    };
    let output = match target {
        Target::Stdout => PathBuf::from("-"),
        Target::File(out) => out,
    };
    Ok(Rewritten {
        input: profile.path.clone(),
        output,
        stats,
        code_image,
        epoch: super::Epoch::None,
    })
}

/// `profile` rewritten into the file `out`, and the code image of the JIT
/// functions it names into `image` (where one is wanted): both written,
/// or neither. Gives the counts, and the image written with how many
/// functions it holds (none: no file).
fn write_with_image(
    profile: &Input,
    (out, image): (&Path, Option<&Path>),
    named: (&SymbolTable, Option<&str>),
    protected: &[&Path],
    allow: bool,
) -> Result<(Stats, Option<(PathBuf, usize)>)> {
    check_profile_target(out, protected)?;
    if let Some(image) = image {
        code_image::check_target(image, protected)?;
    }
    let mut code_image = None;
    let stats = output::write_atomically(out, profile.mode, |file| {
        let stats = rewrite_into(profile, file, named, allow)?;
        if let Some(image) = image {
            let functions = stats.jit_cost.keys().copied();
            let mode = profile.mode & 0o666;
            let written = code_image::write(named.0, functions, image, mode)?;
            code_image = (written > 0).then(|| (image.to_path_buf(), written));
        }
        Ok(stats)
    })?;
    Ok((stats, code_image))
}

/// `--merge`: where a process's outputs are joined: `-o` (`-` for
/// stdout), else `callgrind.jit.merged.PID` beside the first output (a
/// name KCachegrind does not load as one more part of the run). Decided
/// and checked before any part is written.
pub(super) fn merge_target(
    request: &Request,
    pid: Option<u32>,
    profiles: &[Input],
    protected: &[&Path],
) -> Result<Target> {
    if profiles.iter().any(Input::is_spooled) {
        bail!("--merge joins files: it cannot take a profile read from a pipe or standard input");
    }
    let target = match &request.output {
        Some(out) => Target::from_arg(out),
        None => {
            let first = output::default_output(&profiles[0].path);
            let pid = pid.map_or_else(|| "nopid".to_string(), |p| p.to_string());
            Target::File(first.with_file_name(format!("callgrind.jit.merged.{pid}")))
        }
    };
    if let Target::File(path) = &target {
        check_profile_target(path, protected)?;
        refuse_own_output(path, profiles)?;
    }
    Ok(target)
}

/// Refuses to write an annotated profile over what is at `out` unless it
/// is nothing, an empty file or a profile callgrind-jit wrote (a run
/// again): a file of anything else is the user's, and stays.
fn check_profile_target(out: &Path, protected: &[&Path]) -> Result<()> {
    output::check_target(out, protected)?;
    let occupied = std::fs::metadata(out).is_ok_and(|m| m.len() > 0);
    if occupied && !input::is_our_output_at(out) {
        bail!(
            "refusing to replace '{}': it is not a profile callgrind-jit wrote \
             (remove it, or give another -o)",
            out.display()
        );
    }
    Ok(())
}

/// Refuses a `--merge` target that is a file the run itself writes: a
/// part's output (its costs would be counted twice) or a code image
/// (every later annotate of the run would refuse to replace it).
fn refuse_own_output(target: &Path, profiles: &[Input]) -> Result<()> {
    for profile in profiles {
        let out = output::default_output(&profile.path);
        let image = code_image::path_for(&out);
        for written in [&out, &image] {
            if output::check_not_input(target, &[written]).is_err() {
                bail!(
                    "--merge -o '{}' names a file this run writes itself ('{}'): choose another name",
                    target.display(),
                    written.display()
                );
            }
        }
    }
    Ok(())
}

/// Joins the process's outputs into `target` (see [`merge_target`]).
pub(super) fn merge_parts(report: &Report, target: Target, mode: u32) -> Result<PathBuf> {
    let parts: Vec<&Path> = report.profiles.iter().map(|p| p.output.as_path()).collect();
    let join = |file: &File| crate::merge::write(&parts, file);
    match target {
        Target::Stdout => {
            output::write_to_stdout(join)?;
            Ok(PathBuf::from("-"))
        }
        Target::File(path) => {
            output::write_atomically(&path, mode, join)?;
            Ok(path)
        }
    }
}

/// `-o` if given; a profile read from a pipe goes to stdout; else the
/// default name beside it.
fn target_for(output: Option<&Path>, profile: &Input) -> Target {
    match output {
        Some(o) => Target::from_arg(o),
        None if profile.is_spooled() => Target::Stdout,
        None => Target::File(output::default_output(&profile.path)),
    }
}

/// Rewrites `input` into `file`, then marks it as ours.
fn rewrite_into(
    input: &Input,
    mut file: &File,
    (symbols, image): (&SymbolTable, Option<&str>),
    allow_truncated: bool,
) -> Result<Stats> {
    // The rewriter buffers its output itself (and writes copied lines
    // straight from its input buffers): the file takes no buffer of its own.
    let name = input.path.display();
    let read = |e| anyhow::Error::new(e).context(format!("cannot read '{name}'"));
    let input_file = input.rewound().map_err(read)?;
    let rewrite = callgrind::Rewrite::new(symbols);
    let rewrite = image.map_or(rewrite, |image| rewrite.image(image));
    let result = rewrite.run(input_file, file);
    let stats = result.map_err(|e| match e {
        RewriteError::Parse { line, message } => anyhow::anyhow!("{name}:{line}: {message}"),
        RewriteError::SymbolFile(why) => anyhow::anyhow!("cannot name '{name}': {why}"),
        other => anyhow::anyhow!("cannot rewrite '{name}': {other}"),
    })?;
    if !allow_truncated {
        check_ending(&input.path, stats.ending)?;
    }
    // A blank line first, in case the input lacks its last newline.
    file.seek(SeekFrom::End(0))?;
    file.write_all(format!("\n{OUTPUT_MARK}").as_bytes())?;
    Ok(stats)
}

/// A profile that ends early is refused: its costs are partial, and its
/// header's `summary:` would give wrong shares.
fn check_ending(path: &Path, ending: Ending) -> Result<()> {
    let what = match ending {
        Ending::Complete => return Ok(()),
        Ending::NoTotals => "its last part has no totals: line",
        Ending::CutLine => "its last line is cut off",
    };
    Err(ends_early(path, what))
}

fn ends_early(path: &Path, what: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "'{}' ends early ({what}): callgrind may still be writing it, or the disk was full; \
         --allow-truncated annotates what is there",
        path.display()
    )
}
