//! Where a run's trace is saved: one JSON file per run under the user data
//! directory (`runs/`), so runs can be reopened and compared.

use crate::engine::run::trace::Trace;

/// A run's name as the reports print it: the composition, and its case in
/// brackets.
pub fn label(t: &Trace) -> String {
    match &t.composition.case {
        Some(c) => format!("{} [{c}]", t.composition.name),
        None => t.composition.name.clone(),
    }
}

/// Keeps the trace under the user data directory (`runs/`), so runs can be
/// reopened and compared. Failure to save is only a warning.
pub fn save(trace: &Trace) {
    let Some(dirs) = directories::ProjectDirs::from("dev", "pipewright", "pipewright") else {
        return;
    };
    let dir = dirs.data_dir().join("runs");
    let safe: String = label(trace)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = dir.join(format!("{}-{safe}.json", trace.run_id));
    let res = std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&path, serde_json::to_vec_pretty(trace).unwrap_or_default()));
    if let Err(e) = res {
        eprintln!(
            "warning: could not save the trace to {}: {e}",
            path.display()
        );
    }
}
