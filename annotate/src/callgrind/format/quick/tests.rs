//! Each one-pass reader held to its reference, on every shape of line.

use super::super::position::{decode_one, first_cost_checked, has_relative, Columns};
use super::*;

/// Position and cost texts of every shape the readers meet, and broken ones.
fn shapes() -> Vec<Vec<u8>> {
    let tokens: [&[u8]; 16] = [
        b"*",
        b"+3",
        b"-2",
        b"0x1f",
        b"0X1F",
        b"17",
        b"+0x10",
        b"-0x99999",
        b"**",
        b"+",
        b"0x",
        b"12a",
        b"99999999999999999999",
        b"9999999999999999999",
        b"18446744073709551616",
        b"0xffffffffffffffff",
    ];
    let mut shapes = Vec::new();
    for a in tokens {
        for b in tokens {
            for sep in [&b" "[..], b"\t ", b""] {
                let line = [a, sep, b, b" 5 6"].concat();
                shapes.push(line.clone());
                shapes.push([a, sep, b].concat());
            }
        }
    }
    shapes
}

#[test]
fn one_pass_decoding_agrees_with_the_token_wise_one() {
    let cols = Columns::parse(b"instr line").unwrap();
    for prev in [[0, 0, 0], [0x1000, 7, 0], [u64::MAX, 3, 0]] {
        for text in shapes() {
            let (tokens, rest) = cols.split(&text).unwrap_or_default();
            let absolute = match cols.split(&text) {
                Err(e) => Err(Some(e)),
                Ok(_) if has_relative(&tokens[..2]) => Err(None),
                Ok(_) => {
                    let values: Result<Vec<u64>, _> =
                        tokens[..2].iter().map(|t| decode_one(t, 0)).collect();
                    values.map(|v| ([v[0], v[1], 0], rest)).map_err(Some)
                }
            };
            assert_eq!(cols.decode_absolute(&text), absolute);
            let want = cols.decode_checked(&text, &prev);
            let got = cols.decode(&text, &prev);
            let text = String::from_utf8_lossy(&text);
            assert_eq!(got, want, "{text:?} after {prev:?}");
        }
    }
}

#[test]
fn instr_line_answers_as_the_token_wise_decoder_where_it_answers() {
    let cols = Columns::parse(b"instr line").unwrap();
    assert!(cols.is_instr_line());
    let mut answered = 0;
    let mut texts = shapes();
    texts.extend([&b"+3 +1  466"[..], b"+3 +1 \t466", b"+3 +1 ", b"* *"].map(<[u8]>::to_vec));
    for prev in [[0, 0, 0], [0x1000, 7, 0], [u64::MAX, 3, 0]] {
        for text in &texts {
            let Some((addr, line, costs)) = instr_line(text, &prev) else {
                continue;
            };
            answered += 1;
            let name = String::from_utf8_lossy(text);
            let (pos, rest) = cols.decode_checked(text, &prev).expect(&name);
            assert_eq!(([addr, line], costs), ([pos[0], pos[1]], rest), "{name:?}");
        }
    }
    assert!(answered > 100, "{answered}");
    let mut absolute = 0;
    for text in &texts {
        let Some((addr, line, costs)) = absolute_instr_line(text) else {
            continue;
        };
        absolute += 1;
        let name = String::from_utf8_lossy(text);
        let (pos, rest) = cols.decode_absolute(text).expect(&name);
        assert_eq!(([addr, line], costs), ([pos[0], pos[1]], rest), "{name:?}");
    }
    assert!(absolute > 20, "{absolute}");
    for other in [&b"line"[..], b"instr", b"line instr", b"instr line x"] {
        assert!(!Columns::parse(other).unwrap().is_instr_line());
    }
}

#[test]
fn one_pass_cost_check_agrees_with_the_token_wise_one() {
    let mut texts = shapes();
    // Blanks before the first cost or between two, and line ends, which
    // only the run's reader (`first_cost_to_lf`) stops at.
    let odd: [&[u8]; 7] = [b" 5", b"\t5 6", b"5  6", b"5\n", b"5\n6", b"\n", b""];
    texts.extend(odd.map(<[u8]>::to_vec));
    for text in texts {
        let name = String::from_utf8_lossy(&text);
        assert_eq!(
            super::super::position::first_cost(&text),
            first_cost_checked(&text),
            "{name:?}"
        );
    }
}

#[test]
fn a_line_read_to_its_lf_reads_as_the_line_alone() {
    let mut answered = 0;
    for prev in [[0, 0, 0], [0x1000, 7, 0]] {
        for line in shapes() {
            let name = String::from_utf8_lossy(&line);
            let alone = instr_line(&line, &prev)
                .and_then(|(a, l, costs)| Some((a, l, first_cost(costs)?, costs.len())));
            for more in [&b"\n+1 0 9\n"[..], b"\n", b"\nx y"] {
                let text = [&line[..], more].concat();
                let on = instr_line(&text, &prev).and_then(|(a, l, costs)| {
                    let (cost, len) = first_cost_to_lf(costs)?;
                    Some((a, l, cost, len))
                });
                // A line without costs ends at its LF: the run gives it up.
                match alone {
                    Some((.., 0)) => assert_eq!(on, None, "{name:?}"),
                    _ => assert_eq!(on, alone, "{name:?}"),
                }
                answered += usize::from(on.is_some());
            }
        }
    }
    assert!(answered > 100, "{answered}");
    assert_eq!(first_cost_to_lf(b"5 6"), None, "no LF");
    assert_eq!(first_cost_to_lf(b"5 6\n7"), Some((5, 3)));
    assert_eq!(first_cost_to_lf(b"\n"), Some((0, 0)));
}

#[test]
fn keyed_ids_are_only_bare_ids_of_name_keys() {
    type Case = (&'static [u8], Option<(IdKey, u64)>);
    let cases: &[Case] = &[
        (b"ob=(3)", Some((IdKey::Ob, 3))),
        (b"fl=(12)", Some((IdKey::Fl, 12))),
        (b"fi=(0)", Some((IdKey::Fi, 0))),
        (b"fe=(7)", Some((IdKey::Fi, 7))),
        (b"fn=(1487)", Some((IdKey::Fn, 1487))),
        (b"cob=(4)", Some((IdKey::Cob, 4))),
        (b"cfi=(220)", Some((IdKey::Cfi, 220))),
        (b"cfl=(220)", Some((IdKey::Cfi, 220))),
        (b"cfn=(2919)", Some((IdKey::Cfn, 2919))),
        (
            b"fn=(9999999999999999999)",
            Some((IdKey::Fn, 9_999_999_999_999_999_999)),
        ),
        (b"fn=(18446744073709551616)", None),
        (b"fn=(12) main", None),
        (b"fn=main", None),
        (b"fn=()", None),
        (b"fn=(1x)", None),
        (b"fn=(", None),
        (b"cfn=2919", None),
        (b"jfn=(3)", None),
        (b"calls=(3)", None),
        (b"fnx=(1)", None),
        (b"", None),
    ];
    for &(line, want) in cases {
        assert_eq!(keyed_id(line), want, "{}", line.escape_ascii());
    }
}

#[test]
fn a_plain_count_is_one_the_full_parse_accepts() {
    let cases: &[(&[u8], bool)] = &[
        (b"86 0x43200 126", true),
        (b"1", true),
        (b"7\t0x10", true),
        (b"1234567890123456789 0x1", true),
        (b"12345678901234567890 0x1", false),
        (b"", false),
        (b" 86 0x1", false),
        (b"8/6 0x1", false),
        (b"86x 0x1", false),
    ];
    for &(value, plain) in cases {
        assert_eq!(plain_count(value), plain, "{}", value.escape_ascii());
        let line = [b"calls=".as_slice(), value].concat();
        if plain {
            assert!(super::super::line::CountLine::parse("calls", &line).is_ok());
        }
    }
}

#[test]
fn encoding_instr_line_in_one_go_agrees_with_the_column_wise_one() {
    let cols = Columns::parse(b"instr line").unwrap();
    let values = [0, 1, 9, 10, 99, 100, 101, 0x401000, u64::MAX - 1, u64::MAX];
    let steps = [0, 1, 9, 10, 11, 99, 100, 101];
    let mut near = Vec::new();
    for &v in &values {
        for &s in &steps {
            near.extend([v.wrapping_add(s), v.wrapping_sub(s)]);
        }
    }
    for (&a, &b) in near.iter().zip(near.iter().rev()) {
        for &p in near.iter().step_by(7) {
            for absolute in [false, true] {
                let (pos, prev) = ([a, b, 0], [p, b.wrapping_add(3), 0]);
                let (mut quick, mut reference) = (Vec::new(), Vec::new());
                encode_instr_line(&mut quick, &pos, &prev, absolute);
                cols.encode_columns(&mut reference, &pos, &prev, absolute);
                assert_eq!(quick, reference, "{pos:?} after {prev:?}");
            }
        }
    }
}
