//! MiniMalloc CSV: `id,lower,upper,size[,alignment][,offset]`, one buffer a row, lifetimes
//! **half-open** `[lower, upper)`. Converted to the crate's inclusive `[lower, upper - 1]`.
//!
//! Read and written as RFC 4180: a field may be quoted (`"a,b"`, `"say ""hi"""`, newlines
//! inside quotes), records end with CRLF, LF or a lone CR (old Mac files), a leading UTF-8
//! byte-order mark is ignored. Unquoted fields are trimmed.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::problem::{Buffer, Problem};

/// The columns a header may name (any case, any order); any other name is refused, so that a
/// misspelt `alignment` or `offset` is not silently dropped.
pub const COLUMNS: [&str; 6] = ["id", "lower", "upper", "size", "alignment", "offset"];

/// Parses MiniMalloc CSV text. A header row is required (`id,lower,upper,size` with optional
/// `alignment` and `offset` columns, any order; no other column: [`COLUMNS`]). Errors say `line N: ...` (1-based); the caller
/// adds the file name with [`Error::at`].
///
/// # Errors
/// [`crate::ErrorKind::Parse`] for an unknown column, a malformed row or number (negative,
/// fractional, beyond `u64`); [`crate::ErrorKind::Invalid`] for `lower >= upper` or a duplicate id.
pub fn parse(name: &str, text: &str) -> Result<Problem> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // Two passes over the text, no row kept: the first finds the syntax errors (reported
    // before any row's, as when every row was stored first) and counts the rows; the second
    // reads them. Storing every field as a string was a third of the peak memory at 10^6
    // rows (issue 30).
    let mut count = 0usize;
    records(text, |_, _| {
        count += 1;
        Ok(())
    })?;
    let mut header: Option<Header> = None;
    let mut buffers = Vec::with_capacity(count.saturating_sub(1));
    let mut seen: alloc::collections::BTreeMap<String, usize> = alloc::collections::BTreeMap::new();
    records(text, |line_no, row| {
        if row.len() == 1 && row[0].is_empty() {
            return Ok(());
        }
        match &header {
            None => {
                header = Some(Header::of(row)?);
                Ok(())
            }
            Some(h) => {
                buffers.push(h.buffer(line_no, row, &mut seen)?);
                Ok(())
            }
        }
    })?;
    if header.is_none() {
        return Err(Error::parse(
            "empty file: expected a header 'id,lower,upper,size'",
        ));
    }
    let p = Problem::from_buffers(name, buffers);
    p.check()?;
    Ok(p)
}

/// The header row: the columns and where the known ones are.
struct Header {
    cols: Vec<String>,
    id_c: usize,
    lo_c: usize,
    up_c: usize,
    sz_c: usize,
    al_c: Option<usize>,
    off_c: Option<usize>,
}

impl Header {
    fn of(header: &[String]) -> Result<Header> {
        let cols: Vec<String> = header.iter().map(|c| c.to_ascii_lowercase()).collect();
        for (k, c) in cols.iter().enumerate() {
            if !c.is_empty() && cols[..k].contains(c) {
                return Err(Error::parse(alloc::format!(
                    "column '{c}' appears twice in the header (which one holds the value?)"
                ))
                .at("line 1"));
            }
        }
        let col = |n: &str| cols.iter().position(|c| c == n);
        let (Some(id_c), Some(lo_c), Some(up_c), Some(sz_c)) =
            (col("id"), col("lower"), col("upper"), col("size"))
        else {
            return Err(Error::parse(alloc::format!(
                "header '{}' must name the columns id, lower, upper, size",
                header.join(",")
            ))
            .at("line 1"));
        };
        if let Some(c) = cols
            .iter()
            .find(|c| !c.is_empty() && !COLUMNS.contains(&c.as_str()))
        {
            return Err(Error::parse(alloc::format!(
                "unknown column '{c}' (known: {})",
                COLUMNS.join(", ")
            ))
            .at("line 1"));
        }
        let (al_c, off_c) = (col("alignment"), col("offset"));
        Ok(Header {
            cols,
            id_c,
            lo_c,
            up_c,
            sz_c,
            al_c,
            off_c,
        })
    }

    /// The buffer of data row `row` (on line `line_no`); `seen` holds the ids so far.
    fn buffer(
        &self,
        line_no: usize,
        row: &[String],
        seen: &mut alloc::collections::BTreeMap<String, usize>,
    ) -> Result<Buffer> {
        let Header {
            cols,
            id_c,
            lo_c,
            up_c,
            sz_c,
            al_c,
            off_c,
        } = self;
        let (id_c, lo_c, up_c, sz_c, al_c, off_c) = (*id_c, *lo_c, *up_c, *sz_c, *al_c, *off_c);
        let i = line_no - 1;
        let at = alloc::format!("line {line_no}");
        let fields: Vec<&str> = row.iter().map(String::as_str).collect();
        if fields.len() != cols.len() {
            return Err(Error::parse(alloc::format!(
                "expected {} fields, found {}",
                cols.len(),
                fields.len()
            ))
            .at(at));
        }
        // a column the header leaves unnamed (a trailing comma) may only be empty
        if let Some((k, f)) = fields
            .iter()
            .enumerate()
            .find(|(k, f)| cols[*k].is_empty() && !f.is_empty())
        {
            return Err(Error::parse(alloc::format!(
                "value '{f}' in column {}, which the header leaves unnamed",
                k + 1
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
        let (lower, size) = (num(lo_c, "lower")?, num(sz_c, "size")?);
        // `upper` is exclusive: 2^64 (one past u64::MAX) stands for a buffer live to the last
        // step, u64::MAX, as `write` writes it.
        let upper: u128 = match fields[up_c].parse::<u128>() {
            Ok(u) if u <= u128::from(u64::MAX) + 1 => u,
            _ => u128::from(num(up_c, "upper")?),
        };
        if u128::from(lower) >= upper {
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
        // upper - 1 fits u64: upper <= 2^64 and upper > lower >= 0
        let end = u64::try_from(upper - 1).unwrap_or(u64::MAX);
        let mut b = Buffer::new(fields[id_c], size, lower, end);
        if let Some(c) = al_c {
            // an empty cell: no alignment constraint (as an empty offset leaves it free)
            if !fields[c].is_empty() {
                b.alignment = num(c, "alignment")?;
                if b.alignment == 0 {
                    return Err(Error::parse(
                        "alignment 0: an offset is a multiple of its alignment (1 or empty: none)",
                    )
                    .at(at.clone()));
                }
            }
        }
        if let Some(c) = off_c {
            if !fields[c].is_empty() {
                b.fixed_offset = Some(num(c, "offset")?);
            }
        }
        Ok(b)
    }
}

/// Calls `each` with every record of RFC 4180 text, in order, and the 1-based line it starts
/// on; the first error (the text's or `each`'s) ends the walk. Unquoted fields are trimmed; a
/// quoted field keeps its content exactly (`""` is one quote).
///
/// # Errors
/// [`crate::ErrorKind::Parse`] for a quote left open, or text after a closing quote.
fn records(text: &str, mut each: impl FnMut(usize, &[String]) -> Result<()>) -> Result<()> {
    let mut row: Vec<String> = Vec::new();
    let mut field = String::new();
    let (mut line, mut row_line) = (1usize, 1usize);
    let (mut quoted, mut in_quotes) = (false, false);
    let mut chars = text.chars().peekable();
    let end_field = |field: &mut String, quoted: &mut bool, row: &mut Vec<String>| {
        let f = core::mem::take(field);
        row.push(if *quoted { f } else { String::from(f.trim()) });
        *quoted = false;
    };
    while let Some(c) = chars.next() {
        if in_quotes {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => in_quotes = false,
                _ => {
                    if c == '\n' || (c == '\r' && chars.peek() != Some(&'\n')) {
                        line += 1;
                    }
                    field.push(c);
                }
            }
            continue;
        }
        match c {
            '"' if field.trim().is_empty() && !quoted => {
                field.clear();
                quoted = true;
                in_quotes = true;
            }
            ',' => end_field(&mut field, &mut quoted, &mut row),
            '\r' | '\n' => {
                if c == '\r' && chars.peek() == Some(&'\n') {
                    chars.next();
                }
                end_field(&mut field, &mut quoted, &mut row);
                each(row_line, &row)?;
                row.clear();
                line += 1;
                row_line = line;
            }
            _ if quoted && !c.is_whitespace() => {
                return Err(Error::parse(alloc::format!(
                    "text '{c}' after a closing quote (a quote inside a quoted field is written \"\")"
                ))
                .at(alloc::format!("line {line}")));
            }
            _ => field.push(c),
        }
    }
    if in_quotes {
        return Err(
            Error::parse("a quoted field is never closed").at(alloc::format!("line {row_line}"))
        );
    }
    if !field.is_empty() || quoted || !row.is_empty() {
        end_field(&mut field, &mut quoted, &mut row);
        each(row_line, &row)?;
    }
    Ok(())
}

/// One CSV field: quoted (RFC 4180) when it holds a comma, a quote, a line break or edge
/// whitespace (the reader trims unquoted fields); a leading `'` when it would start a spreadsheet formula (`=`, `+`, `-`, `@`, tab,
/// CR: OWASP's CSV-injection rule), so that opening the file never runs `=HYPERLINK(...)`.
fn field(s: &mut String, text: &str) {
    let formula = text.starts_with(['=', '+', '-', '@', '\t', '\r']);
    let quote = formula
        || text.contains([',', '"', '\n', '\r'])
        || text.starts_with(char::is_whitespace)
        || text.ends_with(char::is_whitespace);
    if quote {
        s.push('"');
    }
    if formula {
        s.push('\'');
    }
    for c in text.chars() {
        if c == '"' {
            s.push('"');
        }
        s.push(c);
    }
    if quote {
        s.push('"');
    }
}

/// Writes `problem` (and, if given, the plan's offsets) as MiniMalloc CSV, half-open. Names are
/// escaped as [`parse`] reads them (RFC 4180); a name that would start a spreadsheet formula
/// gets a leading `'` (so it reads back with it).
pub fn write(problem: &Problem, plan: Option<&Plan>) -> String {
    let aligned = problem.buffers.iter().any(|b| b.alignment > 1);
    let mut s = String::from("id,lower,upper,size");
    if aligned {
        s.push_str(",alignment");
    }
    s.push_str(if plan.is_some() { ",offset\n" } else { "\n" });
    for (i, b) in problem.buffers.iter().enumerate() {
        field(&mut s, &b.name);
        // exclusive upper: u64::MAX + 1 is written as 2^64, never clipped
        let _ = write!(s, ",{},{},{}", b.start, u128::from(b.end) + 1, b.size);
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
    fn a_lifetime_to_the_last_step_round_trips() {
        // [0, u64::MAX] inclusive is [0, 2^64) half-open: written whole, read back whole
        let p = Problem::from_buffers("t", alloc::vec![Buffer::new("a", 4, 0, u64::MAX)]);
        let text = write(&p, None);
        assert_eq!(text, "id,lower,upper,size\na,0,18446744073709551616,4\n");
        assert_eq!(parse("t", &text).unwrap().buffers[0].end, u64::MAX);
        let e = parse("t", "id,lower,upper,size\na,0,18446744073709551617,4\n").unwrap_err();
        assert!(e.to_string().contains("exceeds u64"), "{e}");
    }

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

    #[test]
    fn names_round_trip_rfc4180_and_formulas_are_neutralised() {
        let names = [
            "a,b",
            "say \"hi\"",
            "two\nlines",
            " pad ",
            "=HYPERLINK(\"x\")",
            "@SUM(1)",
            "-1",
            "plain",
        ];
        let bufs = names
            .iter()
            .enumerate()
            .map(|(k, n)| Buffer::new(*n, 4, k as u64, k as u64))
            .collect();
        let p = Problem::from_buffers("t", bufs);
        let text = write(&p, None);
        // by hand (RFC 4180 section 2; OWASP CSV injection: a leading ')
        assert!(text.contains("\"a,b\",0,1,4\n"), "{text}");
        assert!(text.contains("\"say \"\"hi\"\"\",1,2,4\n"), "{text}");
        assert!(text.contains("\"two\nlines\",2,3,4\n"), "{text}");
        assert!(
            text.contains("\"'=HYPERLINK(\"\"x\"\")\",4,5,4\n"),
            "{text}"
        );
        assert!(!text.contains("\n="), "{text}");
        let back = parse("t", &text).unwrap();
        let got: Vec<&str> = back.buffers.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(
            got,
            [
                "a,b",
                "say \"hi\"",
                "two\nlines",
                " pad ",
                "'=HYPERLINK(\"x\")",
                "'@SUM(1)",
                "'-1",
                "plain"
            ]
        );
        assert_eq!(back.buffers[7].start, 7);
        // found by the csv_buffers fuzz target: an edge form feed was trimmed on reading back
        let p = Problem::from_buffers("t", alloc::vec![Buffer::new("ff\u{c}", 4, 0, 0)]);
        let text = write(&p, None);
        assert_eq!(text, "id,lower,upper,size\n\"ff\u{c}\",0,1,4\n");
        assert_eq!(parse("t", &text).unwrap().buffers, p.buffers);
    }

    #[test]
    fn unknown_columns_are_refused_not_dropped() {
        let e = |t: &str| parse("t", t).unwrap_err().to_string();
        // the reviewer's typo.csv: misspelt alignment and offset
        assert_eq!(
            e("id,lower,upper,size,aligment,ofset\na,0,2,10,64,\nb,0,2,10,64,100\n"),
            "line 1: unknown column 'aligment' (known: id, lower, upper, size, alignment, offset)"
        );
        assert_eq!(
            e("ID,Lower,Upper,Size,Foo\na,0,2,10,bar\n"),
            "line 1: unknown column 'foo' (known: id, lower, upper, size, alignment, offset)"
        );
        // a trailing comma (an unnamed, empty column) is fine; a value under it is not
        let p = parse("t", "id,lower,upper,size,\na,0,2,10,\n").unwrap();
        assert_eq!(p.buffers[0].size, 10);
        assert_eq!(
            e("id,lower,upper,size,\na,0,2,10,\nb,0,2,10,64\n"),
            "line 3: value '64' in column 5, which the header leaves unnamed"
        );
    }

    #[test]
    fn cr_only_crlf_bom_and_duplicate_columns() {
        let cr = parse("t", "id,lower,upper,size\ra,0,2,4\rb,2,3,4\r").unwrap();
        assert_eq!(cr.buffers.len(), 2);
        assert_eq!((cr.buffers[1].start, cr.buffers[1].end), (2, 2));
        let crlf = parse("t", "\u{feff}id,lower,upper,size\r\na,0,2,4\r\n").unwrap();
        assert_eq!(crlf.buffers[0].name, "a");
        let e = parse("t", "id,lower,upper,size,size\na,0,2,4,8\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 1: column 'size' appears twice in the header (which one holds the value?)"
        );
        let e = parse("t", "id,lower,upper,size\n\"a,0,2,4\n").unwrap_err();
        assert_eq!(e.to_string(), "line 2: a quoted field is never closed");
        // a record spanning lines: the next one is named by its own line
        let e = parse("t", "id,lower,upper,size\n\"a\nb\",0,2,4\nc,0,2\n").unwrap_err();
        assert_eq!(e.to_string(), "line 4: expected 4 fields, found 3");
    }
}
