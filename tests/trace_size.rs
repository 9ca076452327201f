//! A node's big output is stored once: the saved run of a multi-megabyte
//! `big_output` call is about the size of the payload, and reading it back
//! gives the whole envelope (output, raw result, composition output).

use std::time::Duration;

use serde_json::Value;

mod common;

#[test]
fn a_big_output_is_saved_once_and_read_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.yml");
    std::fs::write(
        &file,
        "pipe:\n  - id: big\n    tool: big_output\n    args: { kb: 2048 }\n",
    )
    .unwrap();
    let data = dir.path().join("data");
    let out = assert_cmd::Command::from_std(common::pipewright())
        .arg("run")
        .arg(&file)
        .env("PIPEWRIGHT_DATA_DIR", &data)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let saved: Vec<_> = std::fs::read_dir(data.join("runs"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(saved.len(), 1);
    let size = std::fs::metadata(&saved[0]).unwrap().len();
    let payload = 2048 * 1024;
    assert!(
        size as f64 <= 1.2 * payload as f64,
        "the saved run is {size} bytes for a {payload}-byte payload"
    );
    let shown = assert_cmd::Command::from_std(common::pipewright())
        .args(["runs", "show", "latest", "--format", "json"])
        .env("PIPEWRIGHT_DATA_DIR", &data)
        .output()
        .unwrap();
    let t: Value = serde_json::from_slice(&shown.stdout).unwrap();
    let node = &t["nodes"]["big"];
    assert_eq!(node["output"]["count"], 8192);
    assert_eq!(
        node["output"]["records"].as_array().map(Vec::len),
        Some(8192)
    );
    assert_eq!(t["output"], node["output"], "the composition output");
    assert_eq!(node["raw"]["structuredContent"], node["output"]);
    let text = node["raw"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(serde_json::from_str::<Value>(text).unwrap(), node["output"]);
    assert_eq!(node["rpc"]["response"]["jsonrpc"], "2.0");
    assert_eq!(node["rpc"]["response"]["id"], node["rpc"]["request"]["id"]);
}
