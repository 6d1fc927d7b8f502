//! The examples of `docs/formats.md` load and plan as documented.

use std::path::PathBuf;
use std::process::Command;

fn blocks(lang: &str) -> Vec<String> {
    let doc = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/formats.md"),
    )
    .expect("docs/formats.md");
    let fence = format!("```{lang}\n");
    doc.split(&fence)
        .skip(1)
        .filter_map(|b| b.split("```").next().map(str::to_string))
        .collect()
}

#[test]
fn the_json_graph_example_plans() {
    let dir = std::env::temp_dir().join(format!("memplan-doc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let examples = blocks("json");
    let graph = examples
        .iter()
        .find(|b| b.contains("memplan.graph/1"))
        .expect("a memplan.graph/1 example");
    let path = dir.join("example.json");
    std::fs::write(&path, graph).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_memplan"))
        .args(["plan", &path.to_string_lossy(), "--dim", "batch=1"])
        .output()
        .expect("run memplan");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
}
