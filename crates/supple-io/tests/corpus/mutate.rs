//! Deterministic mutations of text and bytes: line and token edits, extreme numbers, unknown
//! keys, wrong types, empty arrays, truncation, non-UTF-8 bytes. Each one says what it did, so
//! that a failing case can be read as well as rerun.

/// SplitMix64: a small, fixed generator (no dependency, same numbers on every platform).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Numbers that break naive readers: zero, signs, overflow of every integer width, the ends
/// of `f64`, NaN and infinities, and a few ordinary ones (to move counts and indices).
pub const EXTREMES: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "3",
    "1e308",
    "-1e308",
    "1e-308",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "4294967296",
    "4294967295",
    "2147483648",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
    "340282366920938463463374607431768211456",
    "0.0",
    "-0.0",
    "1e9",
    "100000",
    "0.5",
];

const WRONG_VALUES: &[&str] = &[
    "\"text\"",
    "[]",
    "{}",
    "true",
    "-1",
    "[1, 2]",
    "[[1.0]]",
    "1.5",
    "\"box\"",
    "{ kind = \"box\" }",
    "\"\"",
    "[\"a\", 1]",
];

const UNKNOWN_KEYS: &[&str] = &["bogus", "Name", "mesh_x", "kind2", "x.y", "\"\"", "é"];

const GARBAGE: &[&[u8]] = &[
    b"\xff\xfe",
    b"\xc3",
    b"\x80\x80",
    b"\0",
    b"\xed\xa0\x80",
    b"\n\n",
    b"[[body]]\n",
    b"$EndElements\n",
    b"</Piece>",
    b"f 1 2\n",
    b"v 1 2\n",
    b"End\n",
    b" -1 ",
];

/// Byte ranges of the lines of `b` (without their `\n`).
fn lines(b: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &c) in b.iter().enumerate() {
        if c == b'\n' {
            out.push((start, i));
            start = i + 1;
        }
    }
    if start < b.len() {
        out.push((start, b.len()));
    }
    out
}

/// Byte ranges of number-like tokens (`-1`, `0.25`, `1e-3`, `27`).
fn numbers(b: &[u8]) -> Vec<(usize, usize)> {
    let is_num = |c: u8| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-');
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = b[i].is_ascii_digit()
            || (matches!(b[i], b'-' | b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit));
        let word_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if starts && !word_before {
            let mut j = i + 1;
            while j < b.len() && is_num(b[j]) {
                j += 1;
            }
            out.push((i, j));
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// Byte ranges of whitespace-separated tokens.
fn tokens(b: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let s = i;
        while i < b.len() && !b[i].is_ascii_whitespace() {
            i += 1;
        }
        out.push((s, i));
    }
    out
}

/// Byte ranges of TOML keys (`name` in `name = ...`).
fn keys(b: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (i, &c) in b.iter().enumerate() {
        if c != b'=' || b.get(i + 1) == Some(&b'=') || (i > 0 && b[i - 1] == b'=') {
            continue;
        }
        let mut e = i;
        while e > 0 && b[e - 1] == b' ' {
            e -= 1;
        }
        let mut s = e;
        while s > 0 && (b[s - 1].is_ascii_alphanumeric() || b[s - 1] == b'_') {
            s -= 1;
        }
        if s < e {
            out.push((s, e));
        }
    }
    out
}

/// The end of the TOML value starting at `s` (a bracketed array or table, a string, or up to
/// the next `,`, `}`, `]` or line end).
fn value_end(b: &[u8], s: usize) -> usize {
    match b.get(s) {
        Some(&open @ (b'[' | b'{')) => {
            let close = if open == b'[' { b']' } else { b'}' };
            let mut depth = 0usize;
            for (i, &c) in b.iter().enumerate().skip(s) {
                if c == open {
                    depth += 1;
                } else if c == close {
                    depth -= 1;
                    if depth == 0 {
                        return i + 1;
                    }
                }
            }
            b.len()
        }
        Some(b'"') => b[s + 1..]
            .iter()
            .position(|&c| c == b'"')
            .map_or(b.len(), |p| s + p + 2),
        _ => b[s..]
            .iter()
            .position(|&c| matches!(c, b',' | b'}' | b']' | b'\n'))
            .map_or(b.len(), |p| s + p),
    }
}

/// Byte ranges of TOML values (after `=`).
fn values(b: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (i, &c) in b.iter().enumerate() {
        if c == b'=' && b.get(i + 1) == Some(&b' ') {
            let s = i + 2;
            out.push((s, value_end(b, s)));
        }
    }
    out
}

fn replace(b: &mut Vec<u8>, (s, e): (usize, usize), with: &[u8]) {
    b.splice(s..e, with.iter().copied());
}

/// Applies one random mutation to `b` and says what it was.
pub fn mutate_once(b: &mut Vec<u8>, rng: &mut Rng) -> String {
    for _ in 0..8 {
        let op = rng.below(13);
        let ls = lines(b);
        match op {
            0 if !ls.is_empty() => {
                let k = rng.below(ls.len());
                let (s, e) = ls[k];
                replace(b, (s, (e + 1).min(b.len())), b"");
                return format!("delete line {}", k + 1);
            }
            1 if !ls.is_empty() => {
                let k = rng.below(ls.len());
                let (s, e) = ls[k];
                let mut line = b[s..e].to_vec();
                line.push(b'\n');
                replace(b, (s, s), &line);
                return format!("duplicate line {}", k + 1);
            }
            2 if ls.len() >= 2 => {
                let (i, j) = (rng.below(ls.len()), rng.below(ls.len()));
                let (i, j) = (i.min(j), i.max(j));
                if i == j {
                    continue;
                }
                let (a, c) = (b[ls[i].0..ls[i].1].to_vec(), b[ls[j].0..ls[j].1].to_vec());
                replace(b, ls[j], &a);
                replace(b, ls[i], &c);
                return format!("swap lines {} and {}", i + 1, j + 1);
            }
            3..=5 => {
                let ns = numbers(b);
                if ns.is_empty() {
                    continue;
                }
                let r = ns[rng.below(ns.len())];
                let old = String::from_utf8_lossy(&b[r.0..r.1]).into_owned();
                let new = *rng.pick(EXTREMES);
                replace(b, r, new.as_bytes());
                return format!("number {old:?} at byte {} -> {new}", r.0);
            }
            6 if !b.is_empty() => {
                let at = rng.below(b.len());
                b.truncate(at);
                return format!("truncate at byte {at}");
            }
            7 => {
                let ks = keys(b);
                if ks.is_empty() {
                    continue;
                }
                let r = ks[rng.below(ks.len())];
                let old = String::from_utf8_lossy(&b[r.0..r.1]).into_owned();
                let new = *rng.pick(UNKNOWN_KEYS);
                replace(b, r, new.as_bytes());
                return format!("key {old:?} -> {new}");
            }
            8 => {
                let vs = values(b);
                if vs.is_empty() {
                    continue;
                }
                let r = vs[rng.below(vs.len())];
                let old = String::from_utf8_lossy(&b[r.0..r.1]).into_owned();
                let new = *rng.pick(WRONG_VALUES);
                replace(b, r, new.as_bytes());
                return format!("value {old:?} -> {new}");
            }
            9 => {
                let arrays: Vec<usize> = (0..b.len())
                    .filter(|&i| {
                        b[i] == b'['
                            && b[..i]
                                .iter()
                                .rev()
                                .find(|c| **c != b' ')
                                .is_some_and(|c| matches!(c, b'=' | b',' | b'['))
                    })
                    .collect();
                if arrays.is_empty() {
                    continue;
                }
                let s = arrays[rng.below(arrays.len())];
                replace(b, (s, value_end(b, s)), b"[]");
                return format!("empty array at byte {s}");
            }
            10 => {
                let at = rng.below(b.len() + 1);
                let g = *rng.pick(GARBAGE);
                replace(b, (at, at), g);
                return format!("insert {g:?} at byte {at}");
            }
            11 => {
                let ts = tokens(b);
                if ts.is_empty() {
                    continue;
                }
                let r = ts[rng.below(ts.len())];
                let old = String::from_utf8_lossy(&b[r.0..r.1]).into_owned();
                if rng.below(2) == 0 {
                    replace(b, r, b"");
                    return format!("delete token {old:?} at byte {}", r.0);
                }
                let mut twice = b[r.0..r.1].to_vec();
                twice.push(b' ');
                replace(b, (r.0, r.0), &twice);
                return format!("duplicate token {old:?} at byte {}", r.0);
            }
            12 if !b.is_empty() => {
                let at = rng.below(b.len());
                let v = rng.next() as u8;
                b[at] = v;
                return format!("byte {at} -> {v:#04x}");
            }
            _ => continue,
        }
    }
    b.clear();
    "empty the file".into()
}

/// One to three mutations; their descriptions joined.
pub fn mutate(b: &mut Vec<u8>, rng: &mut Rng) -> String {
    let n = 1 + rng.below(3);
    (0..n)
        .map(|_| mutate_once(b, rng))
        .collect::<Vec<_>>()
        .join("; ")
}
