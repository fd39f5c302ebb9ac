use super::*;

/// `f` at 0x1000 (rows: 0x1000 line 3, 0x1010 line 5, 0x1020 line 0, in
/// `src/f.toy`) and `g` at 0x2000 (no rows) from a jitdump; from a perf
/// map `h` (declared at `/app/h.js:7`), `k` (file `k.lua`, line 0), a
/// name that needs escaping, and `r` (declared at `/r.js:2`).
fn table() -> SymbolTable {
    let code = [0x90u8; 0x40];
    let loads = [(0x1000, &code[..], "f"), (0x2000, &code[..], "g")];
    let rows = [(0, 3), (0x10, 5), (0x20, 0)];
    let dump = crate::symbols::test_dump::jitdump(&loads, &rows, b"src/f.toy");
    let mut table = SymbolTable::builder();
    let bias = crate::symbols::BiasMode::None;
    table.add_jitdump("jit-1.dump".into(), &dump, bias).unwrap();
    let map = b"3000 10 JS:*h /app/h.js:7:2\n3100 10 TRACE_4::k.lua:0\n4000 10 a<b>&\"c\\\n\
                5000 10 JS:*r /r.js:2:1\n";
    table.add_perf_map("perf-1.map".into(), map);
    table.build()
}

/// `log` named with the table of [`table`] for each of `pids`: the
/// output, and the counts.
fn named(log: &str, pids: &[u32]) -> (String, (usize, usize)) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log");
    std::fs::write(&path, log).unwrap();
    let input = Input::open(&path).unwrap();
    let out_path = dir.path().join("out");
    let out = std::fs::File::create(&out_path).unwrap();
    let tables = pids.iter().map(|&pid| (pid, table())).collect();
    let counts = name_frames(&input, &out, &tables).unwrap();
    (std::fs::read_to_string(out_path).unwrap(), counts)
}

#[test]
fn a_text_log_s_frames_are_named_as_valgrind_names_native_ones() {
    let log = "\
==7== Invalid read of size 4
==7==    at 0x1000: ???
==7==    by 0x101F: ???
==7==    by 0x1020: ???
==7==    by 0x2008: ???
==7==    by 0x3004: ???
==7==    by 0x310F: ???
==7==    by 0x6000: ???
==7==    by 0x2008: ??? (in /lib/x.so)
==7==    by 0x401000: main (live.c:42)
==8==    at 0x1000: ???
";
    let want = "\
==7== Invalid read of size 4
==7==    at 0x1000: f (src/f.toy:3)
==7==    by 0x101F: f (src/f.toy:5)
==7==    by 0x1020: f (src/f.toy:3)
==7==    by 0x2008: g (in jit-1.dump)
==7==    by 0x3004: h (/app/h.js:7)
==7==    by 0x310F: TRACE_4 (k.lua)
==7==    by 0x6000: ???
==7==    by 0x2008: ??? (in /lib/x.so)
==7==    by 0x401000: main (live.c:42)
==8==    at 0x1000: ???
";
    // A row of line 0 (0x1020) gives the function's own place, its
    // first row's; pid 8 has no table: its frame stays, counted as not named.
    assert_eq!(named(log, &[7]), (want.to_string(), (6, 2)));
    // Each line's pid picks its table.
    let (out, counts) = named(log, &[7, 8]);
    assert!(
        out.ends_with("==8==    at 0x1000: f (src/f.toy:3)\n"),
        "{out}"
    );
    assert_eq!(counts, (7, 1));
}

#[test]
fn an_xml_frame_of_only_an_ip_gets_valgrind_s_elements() {
    let log = "\
<?xml version=\"1.0\"?>
<valgrindoutput>
<pid>7</pid>
  <frame>
    <ip>0x1010</ip>
  </frame>
  <frame>
    <ip>0x2000</ip>
    <obj>/lib/x.so</obj>
  </frame>
  <frame>
    <ip>0x4000</ip>
  </frame>
  <frame>
    <ip>0x3000</ip>
  </frame>
  <frame>
    <ip>0x5000</ip>
  </frame>
  <frame>
    <ip>0x3100</ip>
  </frame>
  <frame>
    <ip>0x9000</ip>
  </frame>
    <ip>0x1000</ip>";
    let want = "\
<?xml version=\"1.0\"?>
<valgrindoutput>
<pid>7</pid>
  <frame>
    <ip>0x1010</ip>
    <fn>f</fn>
    <dir>src</dir>
    <file>f.toy</file>
    <line>5</line>
  </frame>
  <frame>
    <ip>0x2000</ip>
    <obj>/lib/x.so</obj>
  </frame>
  <frame>
    <ip>0x4000</ip>
    <fn>a&lt;b&gt;&amp;\"c\\</fn>
  </frame>
  <frame>
    <ip>0x3000</ip>
    <fn>h</fn>
    <dir>/app</dir>
    <file>h.js</file>
    <line>7</line>
  </frame>
  <frame>
    <ip>0x5000</ip>
    <fn>r</fn>
    <file>/r.js</file>
    <line>2</line>
  </frame>
  <frame>
    <ip>0x3100</ip>
    <fn>TRACE_4</fn>
  </frame>
  <frame>
    <ip>0x9000</ip>
  </frame>
    <ip>0x1000</ip>
";
    // A frame with more than its ip is Valgrind's: neither named nor
    // counted. A file without its line (k.lua, line 0) is not given.
    assert_eq!(named(log, &[7]), (want.to_string(), (5, 1)));
}

#[test]
fn dhat_s_json_frames_are_named_inside_their_strings() {
    let log = "{\"dhatFileVersion\": 2,\"pid\":7,\n\"fs\": [\"0x1000: ???\",\"0x4004: ???\",\"0x9: ???\"]\n}";
    let want = "{\"dhatFileVersion\": 2,\"pid\":7,\n\"fs\": [\"0x1000: f (src/f.toy:3)\",\
                \"0x4004: a<b>&\\\"c\\\\ (in perf-1.map)\",\"0x9: ???\"]\n}\n";
    assert_eq!(named(log, &[7]), (want.to_string(), (2, 1)));
}

#[test]
fn frames_of_every_tools_output_are_found() {
    fn at(line: &str) -> Vec<(&str, u64, bool)> {
        unknown_frames(line)
            .into_iter()
            .map(|(at, addr, json)| (&line[at..at + 3], addr, json))
            .collect()
    }
    assert_eq!(
        at("==31892==    by 0x4854002: ???"),
        [("???", 0x4854002, false)]
    );
    assert_eq!(at("  n1: 4000 0x484C002: ???"), [("???", 0x484c002, false)]);
    assert_eq!(
        at(r#","0x4854002: ???","0x1: ???"]"#),
        [("???", 0x4854002, true), ("???", 1, true)]
    );
    assert!(at("==7==    at 0x4855000: ??? (in /lib/x.so)").is_empty());
    assert!(at("==7==    by 0x1394FA: main (live.c:42)").is_empty());
    assert!(at("==7== Invalid read of size 4: ???").is_empty());
    // Hex digits only: the parser would take a sign.
    assert!(at("==7==    by 0x+1f: ???").is_empty());
    assert!(at("==7==    by 0x: ???").is_empty());
    assert_eq!(json_pid(r#","pid":10053"#), Some(10053));
    assert_eq!(json_escaped("a\"b\\c"), r#"a\"b\\c"#);
    // The table keeps control characters out of names and files; they
    // are escaped all the same.
    assert_eq!(json_escaped("a\u{1}b\n"), r"a\u0001b\u000a");
}

#[test]
fn a_log_s_processes_are_its_pids_in_order_else_its_name_s_number() {
    let dir = tempfile::tempdir().unwrap();
    let pids = |name: &str, log: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, log).unwrap();
        pids_of(&Input::open(&path).unwrap()).map_err(|e| e.to_string())
    };
    let text = "==9== Memcheck\n==7== child\n==9== again\n";
    assert_eq!(pids("log", text), Ok((vec![9, 7], true)));
    let xml = "<?xml version=\"1.0\"?>\n<valgrindoutput>\n  <pid>12</pid>\n";
    assert_eq!(pids("log.3", xml), Ok((vec![12], false)));
    let dhat = "{\"dhatFileVersion\": 2,\n\"pid\": 31,\n";
    assert_eq!(pids("dhat.out.5", dhat), Ok((vec![31], false)));
    let massif = "desc: (none)\ncmd: ./a\ntime_unit: i\n";
    assert_eq!(pids("massif.out.4242", massif), Ok((vec![4242], false)));
    let error = pids("massif.out", massif).unwrap_err();
    assert!(error.ends_with("names no process (no ==PID== lines, no \"pid\", no .PID ending): rename it massif.out.PID"), "{error}");
}
