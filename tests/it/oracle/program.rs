//! The run's program, from the profile's `cmd:` line: QEMU's guest and
//! its symbols (rule 12), and the program's own code (rule 11).

use super::*;

/// Rule 12: the ranges with QEMU's block names replaced by the guest's
/// function names, where the run is QEMU's user mode.
pub(super) fn guest_named(symbols: &Symbols, input: &str) -> Option<Symbols> {
    let cmd = input
        .lines()
        .take(64)
        .find_map(|l| l.strip_prefix("cmd:"))?;
    let mut words = cmd.split_whitespace();
    let program = Path::new(words.next()?)
        .file_name()?
        .to_string_lossy()
        .into_owned();
    if !program.starts_with("qemu-") {
        return None;
    }
    let guest = words.find(|w| !w.starts_with('-') && Path::new(w).is_file())?;
    let out = std::process::Command::new("readelf")
        .arg("-sW")
        .arg(guest)
        .output()
        .ok()?;
    let hex = |s: &str| u64::from_str_radix(s, 16).ok();
    // Num: Value Size Type Bind Vis Ndx Name
    let functions: Vec<(u64, u64, String)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let func = f.len() == 8 && matches!(f[3], "FUNC" | "IFUNC") && f[6] != "UND";
            let size = |s: &str| s.parse().ok().or_else(|| hex(s.trim_start_matches("0x")));
            func.then(|| Some((hex(f[1])?, size(f[2])?, f[7].to_string())))?
        })
        .filter(|f| f.0 != 0)
        .collect();
    // The nearest start at or below; of aliases, the first name.
    let name_of = |addr: u64| {
        let start = functions.iter().map(|f| f.0).filter(|&s| s <= addr).max()?;
        functions
            .iter()
            .filter(|f| f.0 == start)
            .min_by(|a, b| a.2.cmp(&b.2))
            .filter(|f| addr < f.0 + f.1.max(1))
            .map(|f| f.2.clone())
    };
    let mut ranges = symbols.ranges.clone();
    for r in &mut ranges {
        let addr = r.name.strip_prefix("guest-0x").and_then(hex);
        if let Some(name) = addr.and_then(name_of) {
            r.name = name;
        }
    }
    Some(Symbols {
        ranges,
        by_start: Default::default(),
        entered: Default::default(),
        held: Default::default(),
        entry_points: Default::default(),
    })
}

/// Rule 11: the ranges without those in the program's own code, where
/// there are such.
pub(super) fn outside_program(symbols: &Symbols, input: &str) -> Option<Symbols> {
    let segments = program_code(input)?;
    let inside = |r: &&Range| segments.iter().any(|s| s.0 <= r.start && r.end <= s.1);
    if !symbols.ranges.iter().any(|r| inside(&r)) {
        return None;
    }
    Some(Symbols {
        ranges: symbols
            .ranges
            .iter()
            .filter(|r| !inside(r))
            .cloned()
            .collect(),
        by_start: Default::default(),
        entered: Default::default(),
        held: Default::default(),
        entry_points: Default::default(),
    })
}

/// The executable LOAD segments of the run's program, by `readelf`, if it
/// is linked at fixed addresses.
pub(super) fn program_code(input: &str) -> Option<Vec<(u64, u64)>> {
    let cmd = input
        .lines()
        .take(64)
        .find_map(|l| l.strip_prefix("cmd:"))?;
    let program = cmd.split_whitespace().next()?;
    let path = match program.contains('/') {
        true => PathBuf::from(program),
        false => std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|d| d.join(program))
            .find(|p| p.is_file())?,
    };
    let out = std::process::Command::new("readelf")
        .arg("-lW")
        .arg(&path)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !text.contains("Elf file type is EXEC") {
        return None;
    }
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok();
    let segments = text.lines().filter_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        // LOAD offset vaddr paddr filesz memsz FLAGS... align
        let executable =
            f.first() == Some(&"LOAD") && f.len() > 7 && f[6..f.len() - 1].contains(&"E");
        executable.then(|| Some((hex(f[2])?, hex(f[2])? + hex(f[5])?)))?
    });
    Some(segments.collect())
}
