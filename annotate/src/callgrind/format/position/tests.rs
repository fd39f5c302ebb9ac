use super::*;

#[test]
fn cost_columns_add_up_whatever_blanks_part_them() {
    let mut sum = vec![1];
    assert!(add_costs(&mut sum, b"1\t2  3").is_ok());
    assert_eq!(sum, [2, 2, 3]);
    assert_eq!(add_costs(&mut sum, b"1 x"), Err("bad cost 'x'".to_string()));
}

#[test]
fn decodes_with_the_reader_model() {
    let cols = Columns::parse(b"instr line").unwrap();
    let (pos, costs) = cols.decode(b"0x11b3 22 1", &[0; 3]).unwrap();
    assert_eq!((pos[0], pos[1], costs), (0x11b3, 22, &b"1"[..]));
    let (pos, costs) = cols.decode(b"+5 * 1 7", &pos).unwrap();
    assert_eq!((pos[0], pos[1], costs), (0x11b8, 22, &b"1 7"[..]));
    assert!(cols.decode(b"-0x99999 3", &pos).is_err());
    assert!(cols.decode(b"5", &pos).is_err());
    assert_eq!(cols.decode_absolute(b"+1 3 4"), Err(None));
    assert_eq!(cols.decode_absolute(b"0x10 3 4").unwrap().0[..2], [0x10, 3]);
    assert_eq!(cols.skip(b"+1 * 4 5").unwrap(), b"4 5");
    assert!(cols.check(b"+1 * 99999999999999999999").is_err());
    assert!(cols.check(b"+1 * 9999999999999999999").is_ok());
}

#[test]
fn encodes_like_callgrind() {
    let cols = Columns::parse(b"instr line").unwrap();
    let mut out = Vec::new();
    cols.encode(&mut out, &[0x1005, 12, 0], &[0x1000, 200, 0], false);
    assert_eq!(out, b"+5 12");
    out.clear();
    cols.encode(&mut out, &[0x1005, 12, 0], &[0x1005, 12, 0], true);
    assert_eq!(out, b"0x1005 12");
}

#[test]
fn costs_are_checked() {
    assert_eq!(first_cost(b"5 6 7").unwrap(), 5);
    assert_eq!(first_cost(b"").unwrap(), 0);
    assert!(first_cost(b"5 99999999999999999999").is_err());
}

#[test]
fn steps_below_100_are_relative_and_the_rest_absolute_in_both_encoders() {
    // (position, previous position, what callgrind writes): a step of
    // 99 either way is relative, one of 100 is not, nor is anything after
    // a previous value of 0.
    let cases: [([u64; 3], [u64; 3], &[u8]); 6] = [
        ([0x1063, 104, 0], [0x1000, 5, 0], b"+99 +99"),
        ([0x1064, 105, 0], [0x1000, 5, 0], b"0x1064 105"),
        ([0x1000, 5, 0], [0x1063, 104, 0], b"-99 -99"),
        ([0x1000, 5, 0], [0x1064, 105, 0], b"0x1000 5"),
        ([0x5, 3, 0], [0, 0, 0], b"0x5 3"),
        ([0x5, 3, 0], [0x5, 3, 0], b"* *"),
    ];
    let cols = Columns::parse(b"instr line").unwrap();
    for (pos, prev, want) in cases {
        let (mut quick, mut columns) = (Vec::new(), Vec::new());
        cols.encode(&mut quick, &pos, &prev, false);
        cols.encode_columns(&mut columns, &pos, &prev, false);
        assert_eq!(
            (&quick[..], &columns[..]),
            (want, want),
            "{pos:?} after {prev:?}"
        );
    }
    // A layout without the one-go encoder: source lines alone.
    let lines = Columns::parse(b"line").unwrap();
    let mut out = Vec::new();
    for (pos, prev, want) in [(105, 5, &b"105"[..]), (104, 5, b"+99"), (5, 104, b"-99")] {
        out.clear();
        lines.encode(&mut out, &[pos, 0, 0], &[prev, 0, 0], false);
        assert_eq!(out, want);
    }
}

#[test]
fn a_line_copied_undecoded_is_checked_whatever_its_steps() {
    let cols = Columns::parse(b"instr line").unwrap();
    // Relative steps of any size in either direction: the line is read
    // later against a position the check does not know.
    assert!(cols.check(b"-100 +100 1").is_ok());
    assert!(cols.check(b"-0x4000 -200 1 2").is_ok());
    assert!(cols.check(b"*5 * 1").is_err());
    assert!(cols.check(b"+ * 1").is_err());
    assert!(cols.check(b"0x10").is_err());
    assert!(cols.decode(b"*5 3 1", &[1, 1, 0]).is_err());
}

#[test]
fn absolute_lines_are_told_from_relative_ones() {
    let cols = Columns::parse(b"instr line").unwrap();
    assert!(cols.is_absolute(b"0x10 3 4"));
    assert!(!cols.is_absolute(b"+1 3 4"));
    assert!(!cols.is_absolute(b"0x10 * 4"));
    assert!(!cols.is_absolute(b"0x10 -2"));
}

#[test]
fn positions_take_one_to_three_columns_of_any_kind() {
    for bad in [&b""[..], b"  ", b"instr line x y"] {
        assert!(Columns::parse(bad).is_err(), "{bad:?}");
    }
    let cols = Columns::parse(b"instr x line").unwrap();
    assert_eq!(cols.len(), 3);
    assert_eq!(
        [Column::Instr, Column::Other, Column::Line].map(|c| cols.index(c)),
        [Some(0), Some(1), Some(2)]
    );
    assert!(!cols.is_instr_line());
}

#[test]
fn hex_positions_take_1_to_16_digits_of_either_case() {
    assert_eq!(parse_hex(b"ABCdef"), Some(0xabc_def));
    assert_eq!(parse_hex(b"ffffffffffffffff"), Some(u64::MAX));
    for bad in [&b""[..], b"10000000000000000", b"12g"] {
        assert_eq!(parse_hex(bad), None, "{bad:?}");
    }
    let cols = Columns::parse(b"instr line").unwrap();
    assert_eq!(cols.decode(b"0X1F 3 1", &[0; 3]).unwrap().0[0], 0x1f);
    assert!(cols.decode(b"0x 3 1", &[0; 3]).is_err());
}

#[test]
fn costs_are_written_without_trailing_zero_columns() {
    for (costs, want) in [
        (&[5, 0, 3, 0, 0][..], &b"5 0 3"[..]),
        (&[1, 2], b"1 2"),
        (&[0, 0], b"0"),
        (&[7], b"7"),
    ] {
        let mut out = Vec::new();
        push_costs(&mut out, costs);
        assert_eq!(out, want, "{costs:?}");
    }
}
