//! Number formatting: binary units with exact bytes, signed differences, ratios, durations.

/// `12582912` → `"12.00 MiB"`; below 1 KiB the plain byte count (`"512 B"`): core's
/// [`memplan_core::units::binary`], the CLI's form.
pub fn binary(bytes: u64) -> String {
    memplan_core::units::binary(bytes)
}

/// `"12.00 MiB (12582912 B)"`; small values just `"512 B"`: core's
/// [`memplan_core::units::with_exact`], the CLI's form.
pub fn bytes(bytes: u64) -> String {
    memplan_core::units::with_exact(bytes)
}

/// A length of text (a link's): `1500000` → `"1,500,000 characters"`. Links are ASCII, so
/// characters are bytes too, but a user measures a URL in characters, not KiB.
pub fn chars(n: usize) -> String {
    let unit = if n == 1 { "character" } else { "characters" };
    format!("{} {unit}", grouped(n as u64))
}

/// Signed difference `b - a`: `"+1.50 MiB = +1572864 B (+12.5%)"`, `"−512 B (−0.4%)"`,
/// `"−4.50 KiB = −4608 B (−0.04%)"`, `"same"`.
pub fn diff(a: u64, b: u64) -> String {
    if a == b {
        return "same".to_string();
    }
    let (sign, d) = if b > a { ('+', b - a) } else { ('−', a - b) };
    let pct = if a == 0 {
        String::new()
    } else {
        let p = d as f64 * 100.0 / a as f64;
        // a difference too small for one decimal is not "0.0%"
        if p < 0.005 {
            format!(" ({sign}<0.01%)")
        } else if p < 0.05 {
            format!(" ({sign}{p:.2}%)")
        } else {
            format!(" ({sign}{p:.1}%)")
        }
    };
    let exact = if d >= 1024 {
        format!(" = {sign}{d} B")
    } else {
        String::new()
    };
    format!("{sign}{}{exact}{pct}", binary(d))
}

/// `peak / bound` as `"1.023×"`; `"—"` when the bound is 0.
pub fn ratio(peak: u64, bound: u64) -> String {
    if bound == 0 {
        return "—".to_string();
    }
    format!("{:.3}×", peak as f64 / bound as f64)
}

/// Milliseconds: `"0.42 ms"`, `"12 ms"`, `"1.20 s"`.
pub fn millis(ms: f64) -> String {
    if !ms.is_finite() || ms < 0.0 {
        "—".to_string()
    } else if ms < 10.0 {
        format!("{ms:.2} ms")
    } else if ms < 1000.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{:.2} s", ms / 1000.0)
    }
}

/// Thousands separators: `1234567` → `"1,234,567"` (core's, as its TFLM arena sentences).
pub fn grouped(n: u64) -> String {
    memplan_core::units::grouped(n)
}

/// Escapes text for XML/HTML element content and attribute values.
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_units_and_exact_bytes() {
        // as the CLI prints them (core's units): 12582912 = 12 × 2^20
        assert_eq!(bytes(12_582_912), "12.00 MiB (12582912 B)");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.50 KiB (1536 B)");
        assert_eq!(binary(9_633_792), "9.19 MiB");
        assert_eq!(binary(600_871_392), "573.0 MiB");
        assert_eq!(binary(u64::MAX), "16.00 EiB");
        assert_eq!(chars(1), "1 character");
        assert_eq!(chars(999), "999 characters");
        assert_eq!(chars(1_000), "1,000 characters");
        assert_eq!(chars(1_500_000), "1,500,000 characters");
    }

    #[test]
    fn diffs_are_signed_with_percent() {
        assert_eq!(diff(100, 100), "same");
        assert_eq!(diff(1000, 1100), "+100 B (+10.0%)");
        assert_eq!(diff(2048, 1024), "−1.00 KiB = −1024 B (−50.0%)");
        // GE's −4.5 KiB against 10 MiB: signed in bytes too, and not "−0.0%"
        assert_eq!(diff(10_246_144, 10_241_536), "−4.50 KiB = −4608 B (−0.04%)");
        assert_eq!(diff(0, 5), "+5 B");
    }

    #[test]
    fn misc() {
        assert_eq!(ratio(3, 2), "1.500×");
        assert_eq!(ratio(3, 0), "—");
        assert_eq!(millis(0.4242), "0.42 ms");
        assert_eq!(millis(1234.0), "1.23 s");
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(grouped(12), "12");
        assert_eq!(xml_escape("<a & 'b'>"), "&lt;a &amp; &#39;b&#39;&gt;");
    }
}
