//! Small jitdumps for unit tests.

use jitdump::{write, CodeLoad, DebugEntry};

/// A jitdump's bytes: each load at its address with its code, the first
/// with line rows (offset, line) in `file`.
pub fn jitdump(loads: &[(u64, &[u8], &str)], rows: &[(u64, u32)], file: &[u8]) -> Vec<u8> {
    let mut buf = Vec::new();
    write::header(&mut buf, 62, 1, 0);
    for (i, &(addr, code, name)) in loads.iter().enumerate() {
        if i == 0 {
            let entries = rows.iter().map(|&(offset, line)| DebugEntry {
                addr: addr + offset,
                line,
                discrim: 0,
                file,
            });
            write::debug_info(&mut buf, 0, addr, entries);
        }
        let load = CodeLoad {
            pid: 1,
            tid: 1,
            code_addr: addr,
            code_size: code.len() as u64,
            code_index: i as u64,
            name: name.as_bytes(),
            code: None,
        };
        write::code_load_head(&mut buf, 0, &load);
        buf.extend_from_slice(code);
    }
    buf
}
