//! What the CLI test files share.

use std::path::Path;
use std::process::Command;

/// Runs `memplan` with `args` in `dir` (relative to the crate); returns the exit code, stdout
/// and stderr.
pub fn run_in(dir: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_memplan"))
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir))
        .output()
        .expect("run memplan");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// What is wrong with a run that should have refused `file` with exactly `want` (exit 1,
/// nothing on stdout, one message, no panic); `None` when it did.
#[allow(dead_code)] // not every test file checks refusals
pub fn refusal_mismatch(file: &str, run: &(i32, String, String), want: &str) -> Option<String> {
    let (code, stdout, stderr) = run;
    let ok = *code == 1
        && stderr.trim_end() == want
        && stdout.is_empty()
        && !stderr.contains("panicked");
    (!ok).then(|| format!("{file}: exit {code}, stderr {stderr:?}\n   want {want:?}"))
}
