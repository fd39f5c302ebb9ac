use jitdump::{read, Record};
use std::collections::HashMap;
fn main() {
    let data = std::fs::read(std::env::args().nth(1).unwrap()).unwrap();
    let dump = read(&data).unwrap();
    println!("reserved {:#x}", dump.header.reserved);
    let mut pending: HashMap<u64, Vec<u64>> = HashMap::new();
    let (mut n, mut first40, mut past, mut inwin, mut first0) = (0, 0, 0, 0, 0);
    for (_, r) in &dump.records {
        match r {
            Record::DebugInfo { code_addr, entries } => {
                pending.insert(*code_addr, entries.iter().map(|e| e.addr).collect());
            }
            Record::Load(l) => {
                if let Some(addrs) = pending.remove(&l.code_addr) {
                    if addrs.is_empty() {
                        continue;
                    }
                    n += 1;
                    let offs: Vec<i128> = addrs
                        .iter()
                        .map(|&a| a as i128 - l.code_addr as i128)
                        .collect();
                    if offs[0] == 0x40 {
                        first40 += 1;
                    }
                    if offs[0] == 0 {
                        first0 += 1;
                    }
                    if offs.iter().any(|&o| o > l.code_size as i128) {
                        past += 1;
                    }
                    if offs
                        .iter()
                        .all(|&o| o >= 0x40 && o <= l.code_size as i128 + 0x40)
                    {
                        inwin += 1;
                    }
                }
            }
            _ => {}
        }
    }
    println!(
        "records {n} first==0x40 {first40} first==0 {first0} past-end {past} all-in-window {inwin}"
    );
}
