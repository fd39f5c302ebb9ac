//! Writes a large, realistic callgrind profile and its jitdump, for the
//! performance measurements (scripts/bench-annotate.sh).
//!
//! The profile has callgrind's structure: compressed names in three id
//! spaces, `positions: instr line` with relative positions, calls with
//! `cob=`/`cfi=`/`cfn=`, and address-named JIT pseudo-functions under `???`
//! among named native functions. The jitdump covers the JIT ranges with
//! line tables.
//!
//! Usage: gen_profile SIZE_MB OUT_DIR [JIT_PERCENT [CALL_JIT_PERCENT]]
//! Writes callgrind.out.4242 and jit-4242.dump. By default 10% of the
//! function blocks are JIT code and 15% of calls go into JIT code, close to
//! the real MoarVM profile in tests/fixtures/moarvm-words (12% of cost
//! lines in JIT code, 13% of calls from native code into it).

use std::fs::File;
use std::io::{BufWriter, Write};

use jitdump::write;
use jitdump::{CodeLoad, DebugEntry};

const PID: u32 = 4242;
const JIT_BASE: u64 = 0x4000_0000;
const JIT_FUNCTIONS: u64 = 4000;
const JIT_SIZE: u64 = 0x400;
const NATIVE_FUNCTIONS: u64 = 3000;
const OBJECTS: u64 = 12;
const FILES: u64 = 300;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Which ids the output has defined so far, per space.
struct Defined {
    ob: Vec<bool>,
    fl: Vec<bool>,
    func: Vec<bool>,
}

impl Defined {
    fn name(slot: &mut [bool], id: u64, name: impl FnOnce() -> String) -> String {
        if std::mem::replace(&mut slot[id as usize], true) {
            format!("({id})")
        } else {
            format!("({id}) {}", name())
        }
    }
}

/// Function ids: natives first, then JIT entry and mid-range pseudo-functions.
fn function(id: u64) -> (u64, u64, String) {
    if id < NATIVE_FUNCTIONS {
        (
            1 + id % OBJECTS,
            1 + id % FILES,
            format!("native_function_{id}"),
        )
    } else {
        let jit = (id - NATIVE_FUNCTIONS) / 2;
        let mid = (id - NATIVE_FUNCTIONS) % 2 * 0x100;
        (0, 0, format!("{:#018x}", JIT_BASE + jit * JIT_SIZE + mid))
    }
}

fn object_name(ob: u64) -> String {
    if ob == 0 {
        "???".into()
    } else {
        format!("/usr/lib/x86_64-linux-gnu/libobject{ob}.so")
    }
}

fn file_name(fl: u64) -> String {
    if fl == 0 {
        "???".into()
    } else {
        format!("./src/module{}/file{fl}.c", fl % 17)
    }
}

/// Shares of JIT code in percent: of function blocks, and of callees.
struct Mix {
    blocks: u64,
    callees: u64,
}

/// A random function: JIT code `percent`% of the time.
fn pick(rng: &mut Rng, percent: u64) -> u64 {
    if rng.below(100) < percent {
        NATIVE_FUNCTIONS + rng.below(JIT_FUNCTIONS * 2)
    } else {
        rng.below(NATIVE_FUNCTIONS)
    }
}

/// The function the instruction at `addr` of function `f` calls, if it
/// is a call (one in 12): the same at every visit, as a program's call
/// site calls what it names. The profile's arcs are then as many as the
/// program's call sites, whatever its length.
fn call_at(f: u64, addr: u64, percent: u64) -> Option<u64> {
    let mut site = Rng(((f << 32) ^ addr).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    (site.below(12) == 0).then(|| pick(&mut site, percent))
}

fn write_profile(out: &mut impl Write, target: u64, mix: Mix) -> std::io::Result<()> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let functions = NATIVE_FUNCTIONS + JIT_FUNCTIONS * 2;
    let mut d = Defined {
        ob: vec![false; OBJECTS as usize + 1],
        fl: vec![false; FILES as usize + 1],
        func: vec![false; functions as usize],
    };
    writeln!(out, "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: {PID}\ncmd:  ./bench-jit\npart: 1\n\ndesc: I1 cache: \ndesc: D1 cache: \ndesc: LL cache: \n\ndesc: Timerange: Basic block 0 - 1\ndesc: Trigger: Program termination\n\npositions: instr line\nevents: Ir\nsummary: 0\n\n")?;
    let (mut written, mut total) = (0u64, 0u64);
    let mut line = String::with_capacity(128);
    // Like callgrind: ob=/fl= (and cob=/cfi=) only where they change.
    let (mut cur_ob, mut cur_fl) = (u64::MAX, u64::MAX);
    while written < target {
        let f = pick(&mut rng, mix.blocks);
        let (ob, fl, name) = function(f);
        line.clear();
        if ob != cur_ob {
            line.push_str(&format!(
                "ob={}\n",
                Defined::name(&mut d.ob, ob, || object_name(ob))
            ));
        }
        if fl != cur_fl || ob != cur_ob {
            line.push_str(&format!(
                "fl={}\n",
                Defined::name(&mut d.fl, fl, || file_name(fl))
            ));
        }
        (cur_ob, cur_fl) = (ob, fl);
        line.push_str(&format!(
            "fn={}\n",
            Defined::name(&mut d.func, f, || name.clone())
        ));
        let mut addr = if ob == 0 {
            u64::from_str_radix(&name[2..], 16).unwrap_or(0)
        } else {
            0x1000 + f * 0x80
        };
        let src_line = if ob == 0 { 0 } else { 10 + f % 400 };
        line.push_str(&format!("{addr:#x} {src_line} {}\n", 1 + rng.below(50)));
        for _ in 0..rng.below(30) + 5 {
            let step = 1 + rng.below(7);
            addr += step;
            let cost = 1 + rng.below(1000);
            total += cost;
            if let Some(callee) = call_at(f, addr, mix.callees) {
                let (cob, cfl, cname) = function(callee);
                let target = if cob == 0 {
                    u64::from_str_radix(&cname[2..], 16).unwrap_or(0)
                } else {
                    0x1000 + callee * 0x80
                };
                if cob != ob {
                    line.push_str(&format!(
                        "cob={}\n",
                        Defined::name(&mut d.ob, cob, || object_name(cob))
                    ));
                }
                if cfl != fl {
                    line.push_str(&format!(
                        "cfi={}\n",
                        Defined::name(&mut d.fl, cfl, || file_name(cfl))
                    ));
                }
                let target_line = if cob == 0 { 0 } else { 10 + callee % 400 };
                let callee_name = Defined::name(&mut d.func, callee, || cname.clone());
                let calls = 1 + rng.below(100);
                line.push_str(&format!(
                    "cfn={callee_name}\ncalls={calls} {target:#x} {target_line}\n+{step} * {}\n",
                    cost * 10
                ));
            } else if ob == 0 {
                line.push_str(&format!("+{step} * {cost}\n"));
            } else {
                line.push_str(&format!("+{step} +{} {cost}\n", rng.below(3)));
            }
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
        written += line.len() as u64;
    }
    writeln!(out, "totals: {total}")
}

fn write_jitdump(out: &mut impl Write) -> std::io::Result<()> {
    let mut buf = Vec::new();
    write::header(&mut buf, 62, PID, 0);
    let code = vec![0x90u8; JIT_SIZE as usize];
    for i in 0..JIT_FUNCTIONS {
        let addr = JIT_BASE + i * JIT_SIZE;
        let file = format!("/src/bench/script{}.js", i % 50);
        let rows: Vec<_> = (0..16)
            .map(|k| DebugEntry {
                addr: addr + k * 0x40,
                line: (i % 500 + k) as u32 + 1,
                discrim: 1,
                file: file.as_bytes(),
            })
            .collect();
        write::debug_info(&mut buf, 0, addr, rows.into_iter());
        let name = format!("jit_function_{i}");
        let load = CodeLoad {
            pid: PID,
            tid: PID,
            code_addr: addr,
            code_size: JIT_SIZE,
            code_index: i,
            name: name.as_bytes(),
            code: Some(&code),
        };
        write::code_load_head(&mut buf, 0, &load);
        buf.extend_from_slice(&code);
    }
    out.write_all(&buf)
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(size), Some(dir)) = (args.get(1).and_then(|s| s.parse::<u64>().ok()), args.get(2))
    else {
        eprintln!("usage: gen_profile SIZE_MB OUT_DIR [JIT_PERCENT [CALL_JIT_PERCENT]]");
        std::process::exit(2);
    };
    let percent = |i: usize, default| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(default);
    let mix = Mix {
        blocks: percent(3, 10),
        callees: percent(4, 15),
    };
    std::fs::create_dir_all(dir)?;
    let mut profile =
        BufWriter::with_capacity(1 << 20, File::create(format!("{dir}/callgrind.out.{PID}"))?);
    write_profile(&mut profile, size << 20, mix)?;
    profile.flush()?;
    write_jitdump(&mut BufWriter::new(File::create(format!(
        "{dir}/jit-{PID}.dump"
    ))?))
}
