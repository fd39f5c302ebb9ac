//! `callgrind-jit annotate`: sort the inputs, load the symbols, rewrite
//! each profile, report.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::callgrind::{self, Mode, RewriteError, Stats};
use crate::cli::{AnnotateArgs, Bias};
use crate::symbols::{BiasMode, SymbolTable};
use crate::{discover, output};

/// What one `annotate` run did.
#[derive(Debug, Default)]
pub struct Report {
    /// (input, output, stats) per profile rewritten.
    pub profiles: Vec<(PathBuf, PathBuf, Stats)>,
    /// Profiles skipped because they were empty (thread runs leave one).
    pub empty: Vec<PathBuf>,
    /// The symbol table used.
    pub symbols: SymbolTable,
}

/// What an input file is, by content.
#[derive(Debug, PartialEq, Eq)]
enum Kind {
    Profile,
    EmptyProfile,
    Jitdump,
    PerfMap,
}

/// The comment that ends every output of ours (both readers skip `#`
/// lines): it tells an annotated profile from the one valgrind wrote.
pub const OUTPUT_MARK: &str = "# annotated by callgrind-jit\n";

/// Compressed formats, by their magic bytes, and how to undo them.
const COMPRESSED: [(&[u8], &str, &str); 4] = [
    (b"\x1f\x8b", "gzip", "gunzip -k"),
    (b"\xfd7zXZ\x00", "xz", "unxz -k"),
    (b"\x28\xb5\x2f\xfd", "zstd", "unzstd"),
    (b"BZh", "bzip2", "bunzip2 -k"),
];

/// Runs `annotate`.
pub fn annotate(args: &AnnotateArgs) -> Result<Report> {
    let mut profiles = Vec::new();
    let mut sources = Vec::new();
    let mut report = Report::default();
    for path in &args.inputs {
        match kind(path)? {
            Kind::Profile => profiles.push(path.clone()),
            Kind::EmptyProfile => report.empty.push(path.clone()),
            Kind::Jitdump | Kind::PerfMap => sources.push(path.clone()),
        }
    }
    if profiles.is_empty() {
        match report.empty.first() {
            Some(empty) => bail!("'{}' is empty: nothing to annotate", empty.display()),
            None => bail!("no callgrind profile among the inputs"),
        }
    }
    if args.output.is_some() && profiles.len() > 1 {
        bail!(
            "-o names one output, but {} profiles were given",
            profiles.len()
        );
    }
    if sources.is_empty() {
        sources = discover_sources(&profiles)?;
    }
    report.symbols = load_symbols(&sources, bias_mode(args.bias))?;
    for profile in &profiles {
        let out = args
            .output
            .clone()
            .unwrap_or_else(|| output::default_output(profile));
        output::check_not_input(&out, &args.inputs)?;
        let stats = rewrite_file(profile, &out, &report.symbols)?;
        report.profiles.push((profile.clone(), out, stats));
    }
    Ok(report)
}

fn bias_mode(bias: Bias) -> BiasMode {
    match bias {
        Bias::Detect => BiasMode::Detect,
        Bias::None => BiasMode::None,
        Bias::Elf64 => BiasMode::Fixed(0x40),
        Bias::Elf32 => BiasMode::Fixed(0x34),
    }
}

/// Reads the first bytes of `path` to tell what it is.
fn kind(path: &Path) -> Result<Kind> {
    let mut head = Vec::with_capacity(512);
    File::open(path)
        .and_then(|f| f.take(512).read_to_end(&mut head))
        .with_context(|| format!("cannot read '{}'", path.display()))?;
    if head.is_empty() {
        return Ok(Kind::EmptyProfile);
    }
    if crate::jitdump::is_jitdump(&head) {
        return Ok(Kind::Jitdump);
    }
    let text = String::from_utf8_lossy(&head);
    if let Some(what) = foreign(path, &head, &text) {
        bail!("{what}");
    }
    let profile_keys = [
        "# callgrind format",
        "version:",
        "creator:",
        "events:",
        "positions:",
        "cmd:",
        "pid:",
    ];
    if profile_keys.iter().any(|k| text.starts_with(k)) {
        if is_our_output(path) {
            bail!(
                "'{}' is already annotated by callgrind-jit: annotate the profile valgrind \
                 wrote (callgrind.out.PID) instead",
                path.display()
            );
        }
        return Ok(Kind::Profile);
    }
    if crate::perfmap::looks_like_perf_map(&head) {
        return Ok(Kind::PerfMap);
    }
    bail!(
        "'{}' is neither a callgrind profile, a jitdump nor a perf map",
        path.display()
    )
}

/// No symbol file was given, and none was found where runtimes put them.
#[derive(Debug)]
pub struct NoSymbols {
    /// The profiles' pids (empty: no profile has a `pid:` line).
    pub pids: Vec<u32>,
    /// Every place looked at.
    pub looked: Vec<PathBuf>,
}

impl std::fmt::Display for NoSymbols {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.pids.is_empty() {
            return f.write_str(
                "nothing to name: the profile has no pid: line to find its jitdump or perf map by; \
                 give them after the profile",
            );
        }
        let pids: Vec<String> = self.pids.iter().map(u32::to_string).collect();
        let looked: Vec<String> = self
            .looked
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        write!(
            f,
            "nothing to name: no jitdump or perf map of pid {} (looked for {}); \
             give them after the profile",
            pids.join(", "),
            looked.join(", ")
        )
    }
}

impl std::error::Error for NoSymbols {}

/// What a file we cannot read is, with what to do, for the error.
fn foreign(path: &Path, head: &[u8], text: &str) -> Option<String> {
    let name = path.display();
    if let Some((_, format, undo)) = COMPRESSED.iter().find(|(m, _, _)| head.starts_with(m)) {
        return Some(format!(
            "'{name}' is {format}-compressed: decompress it first ({undo} '{name}')"
        ));
    }
    let cachegrind = text.starts_with("# cachegrind format")
        || (text.starts_with("desc:") && !text.contains("creator: callgrind"));
    cachegrind.then(|| {
        format!(
            "'{name}' is a cachegrind profile, which has no calls or JIT call sites to name: \
             record with valgrind --tool=callgrind (or callgrind-jit record)"
        )
    })
}

/// True if `path` ends with [`OUTPUT_MARK`] (a file we cannot seek in is
/// taken as not ours).
fn is_our_output(path: &Path) -> bool {
    let tail = (|| {
        let mut file = File::open(path)?;
        let len = file.seek(SeekFrom::End(0))?;
        let n = (OUTPUT_MARK.len() as u64).min(len);
        file.seek(SeekFrom::End(-(n as i64)))?;
        let mut tail = Vec::new();
        file.take(n).read_to_end(&mut tail)?;
        std::io::Result::Ok(tail)
    })();
    tail.is_ok_and(|t| t == OUTPUT_MARK.as_bytes())
}

fn discover_sources(profiles: &[PathBuf]) -> Result<Vec<PathBuf>, NoSymbols> {
    let mut missing = NoSymbols {
        pids: Vec::new(),
        looked: Vec::new(),
    };
    let mut found: Vec<PathBuf> = Vec::new();
    for profile in profiles {
        let Some(pid) = discover::profile_pid(profile) else {
            continue;
        };
        let discovery = discover::sources_for(pid, profile);
        for path in discovery.found {
            if !found.contains(&path) {
                found.push(path);
            }
        }
        if !missing.pids.contains(&pid) {
            missing.pids.push(pid);
        }
        missing.looked.extend(discovery.looked);
    }
    if found.is_empty() {
        return Err(missing);
    }
    Ok(found)
}

fn load_symbols(sources: &[PathBuf], bias: BiasMode) -> Result<SymbolTable> {
    let mut table = SymbolTable::new();
    for path in sources {
        let data =
            std::fs::read(path).with_context(|| format!("cannot read '{}'", path.display()))?;
        if crate::jitdump::is_jitdump(&data) {
            table
                .add_jitdump(path.clone(), &data, bias)
                .with_context(|| format!("cannot read jitdump '{}'", path.display()))?;
        } else {
            table.add_perf_map(path.clone(), &data);
        }
    }
    table.finish();
    Ok(table)
}

fn rewrite_file(input: &Path, out: &Path, symbols: &SymbolTable) -> Result<Stats> {
    // The rewriter buffers its output itself (and writes copied lines
    // straight from its input buffers): the file takes no buffer of its own.
    output::write_atomically(out, |mut file| {
        let result = match rewrite_once(input, file, symbols, Mode::Fast)? {
            Err(RewriteError::NeedsExactMode { .. }) => {
                // Not laid out as callgrind writes: start over, decoding everything.
                file.set_len(0)?;
                file.seek(SeekFrom::Start(0))?;
                rewrite_once(input, file, symbols, Mode::Exact)?
            }
            result => result,
        };
        let stats = result.map_err(|e| match e {
            RewriteError::Parse { line, message } => {
                anyhow::anyhow!("{}:{line}: {message}", input.display())
            }
            other => anyhow::anyhow!("cannot rewrite '{}': {other}", input.display()),
        })?;
        // A blank line first, in case the input lacks its last newline.
        let mut end = file;
        end.seek(SeekFrom::End(0))?;
        end.write_all(format!("\n{OUTPUT_MARK}").as_bytes())?;
        Ok(stats)
    })
}

fn rewrite_once<W: Write + Send>(
    input: &Path,
    w: W,
    symbols: &SymbolTable,
    mode: Mode,
) -> Result<Result<Stats, RewriteError>> {
    let file = File::open(input).with_context(|| format!("cannot read '{}'", input.display()))?;
    Ok(callgrind::rewrite(file, w, symbols, mode))
}
