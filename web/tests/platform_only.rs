//! `web/src/platform.rs` is the one module of the app that talks to the browser
//! (ARCHITECTURE.md): every other module of the page reaches `web_sys`, `js_sys` and `gloo`
//! through it, so the page's logic stays plain Rust that native tests can run. (The worker
//! binary, `src/bin/plan_worker.rs`, is its own small platform module.)

#[test]
fn only_platform_names_the_browser() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut checked = 0;
    let mut leaks = Vec::new();
    // the component's own modules (src/app/) too
    let files = std::fs::read_dir(&src)
        .expect("web/src")
        .chain(std::fs::read_dir(src.join("app")).expect("web/src/app"));
    for entry in files {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|x| x != "rs") || path.ends_with("platform.rs") {
            continue;
        }
        checked += 1;
        let text = std::fs::read_to_string(&path).expect("read");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if ["web_sys", "js_sys", "gloo"]
                .iter()
                .any(|c| code.contains(c))
            {
                leaks.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(checked > 10, "web/src has its modules ({checked})");
    assert!(
        leaks.is_empty(),
        "browser APIs outside platform.rs:\n{}",
        leaks.join("\n")
    );
}
