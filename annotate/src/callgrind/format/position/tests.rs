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
