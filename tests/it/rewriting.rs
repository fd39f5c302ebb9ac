//! Rewriting as the command does, for tests: a symbol table from files,
//! and the rewrite read through a buffer of a given size. Shared by the integration suite
//! and the package's fast tests (annotate/tests/fast.rs).

use std::io::BufReader;
use std::path::PathBuf;

use annotate::callgrind::{Rewrite, RewriteError, Stats};
use annotate::symbols::{BiasMode, SymbolTable};

/// A symbol table from jitdump and perf map files.
pub fn table(sources: &[PathBuf]) -> SymbolTable {
    table_for(None, sources)
}

/// [`table`] for the profile `profile`, as the command builds it: the
/// ranges in the code of the program its `cmd:` line ran left out.
pub fn table_for(profile: Option<&std::path::Path>, sources: &[PathBuf]) -> SymbolTable {
    table_keeping(profile, sources, None)
}

/// [`table_for`], its perf maps keeping only what `touched` keeps.
pub fn table_keeping(
    profile: Option<&std::path::Path>,
    sources: &[PathBuf],
    touched: Option<annotate::symbols::Touched>,
) -> SymbolTable {
    let program = profile.and_then(|p| {
        let file = std::fs::File::open(p).ok()?;
        annotate::symbols::mapped::MappedCode::of_profile(&file)
    });
    let mut table = SymbolTable::builder().outside(program).touched(touched);
    for path in sources {
        let data = std::fs::read(path).unwrap();
        if jitdump::is_jitdump(&data) {
            table
                .add_jitdump(path.clone(), &data, BiasMode::Detect)
                .unwrap();
        } else {
            table.add_perf_map(path.clone(), &data);
        }
    }
    table.build()
}

/// Which of the rewrite's passes to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// The default reading, the fast one (held here to read every input
    /// it is given without falling back to the reference).
    Lazy,
    /// `Rewrite::every_position`, the reference.
    Exact,
}

impl Pass {
    /// Both passes.
    pub const BOTH: [Pass; 2] = [Pass::Lazy, Pass::Exact];

    /// Runs this pass on `input`.
    pub fn run<W: annotate::callgrind::Output + Send>(
        self,
        input: &[u8],
        output: W,
        table: &SymbolTable,
    ) -> Result<Stats, RewriteError> {
        self.run_reader(std::io::Cursor::new(input), output, table)
    }

    /// Runs this pass, reading from `input`.
    pub fn run_reader<R, W>(
        self,
        input: R,
        output: W,
        table: &SymbolTable,
    ) -> Result<Stats, RewriteError>
    where
        R: std::io::Read + std::io::Seek + Send,
        W: annotate::callgrind::Output + Send,
    {
        match self {
            Pass::Lazy => {
                let stats = Rewrite::new(table).run(input, output)?;
                let read_back = stats.read_back.times;
                assert_eq!(
                    read_back, 0,
                    "positions were read back: not callgrind's layout"
                );
                Ok(stats)
            }
            Pass::Exact => Rewrite::new(table).every_position().run(input, output),
        }
    }
}

/// Runs one pass, reading through a `chunk`-byte buffer.
pub fn rewrite_pass(
    input: &[u8],
    table: &SymbolTable,
    chunk: usize,
    pass: Pass,
) -> (Vec<u8>, Stats) {
    let mut out = Vec::new();
    let input = BufReader::with_capacity(chunk, std::io::Cursor::new(input));
    let stats = pass.run_reader(input, &mut out, table).unwrap();
    (out, stats)
}

/// Rewrites as the command does (`callgrind::rewrite`), reading through a
/// `chunk`-byte buffer.
pub fn rewrite_bytes(input: &[u8], table: &SymbolTable, chunk: usize) -> (Vec<u8>, Stats) {
    let mut out = Vec::new();
    let input = BufReader::with_capacity(chunk, std::io::Cursor::new(input));
    let stats = annotate::callgrind::rewrite(input, &mut out, table).unwrap();
    (out, stats)
}
