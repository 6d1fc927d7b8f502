//! Human-readable byte sizes in binary units, and their parser for budgets.

use alloc::format;
use alloc::string::String;

/// `bytes` in binary units with three significant decimals: `512 B`, `1.50 KiB`, `9.00 MiB`,
/// `1.23 GiB`.
pub fn binary(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return alloc::format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    let digits = if v >= 100.0 { 1 } else { 2 };
    alloc::format!("{v:.digits$} {}", UNITS[u])
}

/// `binary(bytes)` followed by the exact count: `9.00 MiB (9438720 B)`.
pub fn with_exact(bytes: u64) -> String {
    if bytes < 1024 {
        return alloc::format!("{bytes} B");
    }
    alloc::format!("{} ({bytes} B)", binary(bytes))
}

/// A byte count as a user types it: `1048576`, `512 B`, `200MiB`, `1.5 GiB`, `8 GB`. Units:
/// B, KiB/MiB/GiB/TiB (also K/M/G/T, powers of 1024) and KB/MB/GB/TB (powers of 1000), any
/// case; a fraction is allowed with a unit other than B and rounds down to whole bytes.
///
/// # Errors
/// A sentence naming the text when it is not a number with a known unit, or when the count
/// does not fit in `u64`.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    // before the unit: '-1' would otherwise read as the unknown unit '-1'
    if t.starts_with('-') {
        return Err(format!("'{t}': a byte count cannot be negative"));
    }
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        u => {
            return Err(format!(
                "'{t}': unknown unit '{u}' (use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)"
            ))
        }
    };
    let (whole, frac) = num.split_once('.').unwrap_or((num, ""));
    if whole.is_empty() && frac.is_empty() || frac.contains('.') || frac.len() > 9 {
        return Err(format!("'{t}' is not a byte count"));
    }
    if !frac.is_empty() && scale == 1 {
        return Err(format!(
            "'{t}': whole bytes only (a fraction needs a unit: 1.5KiB)"
        ));
    }
    let bad = || format!("'{t}' is not a byte count that fits in 64 bits");
    let w: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| bad())?
    };
    let mut bytes = w.checked_mul(scale).ok_or_else(bad)?;
    if !frac.is_empty() {
        let f: u128 = frac.parse().map_err(|_| bad())?;
        let den = 10u128.pow(u32::try_from(frac.len()).map_err(|_| bad())?);
        let part = u64::try_from(f * u128::from(scale) / den).map_err(|_| bad())?;
        bytes = bytes.checked_add(part).ok_or_else(bad)?;
    }
    Ok(bytes)
}

/// `n` with a comma between each group of three digits, `55,296` (the page's figures and the
/// TFLM arena sentences, [`crate::report::tflm_arena`]).
pub fn grouped(n: u64) -> String {
    use alloc::string::ToString;
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_budgets() {
        assert_eq!(parse_bytes("1048576"), Ok(1_048_576));
        assert_eq!(parse_bytes(" 512 B "), Ok(512));
        assert_eq!(parse_bytes("200MiB"), Ok(200 * 1_048_576));
        assert_eq!(parse_bytes("200m"), Ok(200 * 1_048_576));
        assert_eq!(parse_bytes("1.5 GiB"), Ok(1_610_612_736));
        assert_eq!(parse_bytes("8 GB"), Ok(8_000_000_000));
        assert_eq!(parse_bytes("0.001 KB"), Ok(1));
        assert_eq!(parse_bytes("18446744073709551615"), Ok(u64::MAX));
        for bad in [
            "",
            ".",
            "1..2 MiB",
            "18446744073709551616",
            "17179869184 GiB",
            "-1",
            "12 XB",
            "MiB",
        ] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
        // a minus sign is named as such, with or without a unit
        for neg in ["-1", "-2 MiB"] {
            let e = parse_bytes(neg).expect_err(neg);
            assert!(e.contains("cannot be negative"), "{neg}: {e}");
        }
    }

    #[test]
    fn formats() {
        assert_eq!(binary(512), "512 B");
        assert_eq!(binary(1536), "1.50 KiB");
        assert_eq!(with_exact(9_438_720), "9.00 MiB (9438720 B)");
        assert_eq!(binary(600_871_392), "573.0 MiB");
        assert_eq!(binary(u64::MAX), "16.00 EiB");
    }
}
