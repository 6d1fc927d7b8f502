//! MiniMalloc CSV: `id,lower,upper,size[,alignment][,offset]`, one buffer a row, lifetimes
//! **half-open** `[lower, upper)`. Converted to the crate's inclusive `[lower, upper - 1]`.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::problem::{Buffer, Problem};

/// Parses MiniMalloc CSV text. A header row is required (`id,lower,upper,size` with optional
/// `alignment` and `offset` columns, any order). Errors say `line N: ...` (1-based); the caller
/// adds the file name with [`Error::at`].
///
/// # Errors
/// [`crate::ErrorKind::Parse`] for a malformed row or number (negative, fractional, beyond
/// `u64`); [`crate::ErrorKind::Invalid`] for `lower >= upper` or a duplicate id.
pub fn parse(name: &str, text: &str) -> Result<Problem> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((_, header)) = lines.next() else {
        return Err(Error::parse(
            "empty file: expected a header 'id,lower,upper,size'",
        ));
    };
    let cols: Vec<String> = header
        .split(',')
        .map(|c| c.trim().to_ascii_lowercase())
        .collect();
    let col = |n: &str| cols.iter().position(|c| c == n);
    let (Some(id_c), Some(lo_c), Some(up_c), Some(sz_c)) =
        (col("id"), col("lower"), col("upper"), col("size"))
    else {
        return Err(Error::parse(alloc::format!(
            "header '{}' must name the columns id, lower, upper, size",
            header.trim()
        ))
        .at("line 1"));
    };
    let (al_c, off_c) = (col("alignment"), col("offset"));
    let mut buffers = Vec::new();
    let mut seen: alloc::collections::BTreeMap<String, usize> = alloc::collections::BTreeMap::new();
    for (i, line) in lines {
        let at = alloc::format!("line {}", i + 1);
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != cols.len() {
            return Err(Error::parse(alloc::format!(
                "expected {} fields, found {}",
                cols.len(),
                fields.len()
            ))
            .at(at));
        }
        let num = |c: usize, what: &str| -> Result<u64> {
            let f = fields[c];
            f.parse::<u64>().map_err(|_| {
                let why = if f.starts_with('-') {
                    "is negative"
                } else if f.contains('.') || f.contains('e') {
                    "is not an integer"
                } else if !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) {
                    "exceeds u64"
                } else {
                    "is not a number"
                };
                Error::parse(alloc::format!("{what} '{f}' {why}")).at(at.clone())
            })
        };
        let (lower, upper, size) = (num(lo_c, "lower")?, num(up_c, "upper")?, num(sz_c, "size")?);
        if lower >= upper {
            return Err(Error::invalid(alloc::format!(
                "buffer '{}': lower {lower} >= upper {upper} (lifetimes are half-open [lower, upper))",
                fields[id_c]
            ))
            .at(at));
        }
        if let Some(first) = seen.insert(String::from(fields[id_c]), i + 1) {
            return Err(Error::invalid(alloc::format!(
                "duplicate id '{}' (first on line {first})",
                fields[id_c]
            ))
            .at(at));
        }
        let mut b = Buffer::new(fields[id_c], size, lower, upper - 1);
        if let Some(c) = al_c {
            // an empty cell: no alignment constraint (as an empty offset leaves it free)
            if !fields[c].is_empty() {
                b.alignment = num(c, "alignment")?.max(1);
            }
        }
        if let Some(c) = off_c {
            if !fields[c].is_empty() {
                b.fixed_offset = Some(num(c, "offset")?);
            }
        }
        buffers.push(b);
    }
    let p = Problem::from_buffers(name, buffers);
    p.check()?;
    Ok(p)
}

/// Writes `problem` (and, if given, the plan's offsets) as MiniMalloc CSV, half-open.
pub fn write(problem: &Problem, plan: Option<&Plan>) -> String {
    let aligned = problem.buffers.iter().any(|b| b.alignment > 1);
    let mut s = String::from("id,lower,upper,size");
    if aligned {
        s.push_str(",alignment");
    }
    s.push_str(if plan.is_some() { ",offset\n" } else { "\n" });
    for (i, b) in problem.buffers.iter().enumerate() {
        let _ = write!(
            s,
            "{},{},{},{}",
            b.name,
            b.start,
            b.end.saturating_add(1),
            b.size
        );
        if aligned {
            let _ = write!(s, ",{}", b.alignment.max(1));
        }
        if let Some(p) = plan {
            let _ = write!(s, ",{}", p.offsets[i]);
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn half_open_becomes_inclusive() {
        let p = parse("t", "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\n").unwrap();
        assert_eq!((p.buffers[0].start, p.buffers[0].end), (0, 2));
        assert_eq!((p.buffers[1].start, p.buffers[1].end), (3, 8));
        assert!(!p.buffers[0].conflicts(&p.buffers[1]));
        assert_eq!(write(&p, None), "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\n");
    }

    #[test]
    fn bad_rows_are_named() {
        let e = |t: &str| parse("t", t).unwrap_err().to_string();
        assert_eq!(
            e("id,lower,upper,size\nb,0,3,-4\n"),
            "line 2: size '-4' is negative"
        );
        assert_eq!(
            e("id,lower,upper,size\nb,0,3,4.5\n"),
            "line 2: size '4.5' is not an integer"
        );
        assert_eq!(
            e("id,lower,upper,size\nb,0,3,99999999999999999999\n"),
            "line 2: size '99999999999999999999' exceeds u64"
        );
        assert_eq!(
            e("id,lower,upper,size\nb,3,3,4\n"),
            "line 2: buffer 'b': lower 3 >= upper 3 (lifetimes are half-open [lower, upper))"
        );
        assert_eq!(
            e("id,lower,upper,size\nb,0,3\n"),
            "line 2: expected 4 fields, found 3"
        );
        assert_eq!(
            e("id,lower,upper,size\nb,0,3,1\nb,1,2,1\n"),
            "line 3: duplicate id 'b' (first on line 2)"
        );
        assert_eq!(e(""), "empty file: expected a header 'id,lower,upper,size'");
    }

    #[test]
    fn alignment_and_offset_columns() {
        let p = parse(
            "t",
            "id,lower,upper,size,alignment,offset\na,0,2,8,4,16\nb,0,2,8,8,\n",
        )
        .unwrap();
        assert_eq!(p.buffers[0].fixed_offset, Some(16));
        assert_eq!(p.buffers[1].alignment, 8);
        assert_eq!(p.buffers[1].fixed_offset, None);
    }
}
