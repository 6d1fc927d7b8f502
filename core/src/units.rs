//! Human-readable byte sizes in binary units.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(binary(512), "512 B");
        assert_eq!(binary(1536), "1.50 KiB");
        assert_eq!(with_exact(9_438_720), "9.00 MiB (9438720 B)");
        assert_eq!(binary(600_871_392), "573.0 MiB");
        assert_eq!(binary(u64::MAX), "16.00 EiB");
    }
}
