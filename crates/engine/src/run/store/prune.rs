//! Retention: dropping old runs, and holding the ones a workbench shows.

use std::path::PathBuf;
use std::time::Duration;

use super::{Entry, Hold, Pruned, Runs};

impl Drop for Hold {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.marker);
    }
}

impl Runs {
    fn holds_dir(&self) -> PathBuf {
        self.dir.join("held")
    }

    /// Marks run `id` as open by this process.
    pub fn hold(&self, id: &str) -> std::io::Result<Hold> {
        let dir = self.holds_dir();
        std::fs::create_dir_all(&dir)?;
        let marker = dir.join(format!("{id}.{}", std::process::id()));
        std::fs::write(&marker, b"")?;
        Ok(Hold { marker })
    }

    /// Ids held by a process that is still alive (stale markers are
    /// removed).
    fn held(&self) -> Vec<String> {
        let Ok(dir) = std::fs::read_dir(self.holds_dir()) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some((id, pid)) = name.rsplit_once('.') else {
                continue;
            };
            let alive = pid
                .parse::<u32>()
                .is_ok_and(|p| p == std::process::id() || process_alive(p));
            if alive {
                out.push(id.to_owned());
            } else {
                let _ = std::fs::remove_file(e.path());
            }
        }
        out
    }

    /// Removes runs beyond the newest `keep`, and runs older than
    /// `older_than`; held runs stay.
    pub fn prune(
        &self,
        keep: Option<usize>,
        older_than: Option<Duration>,
    ) -> std::io::Result<Pruned> {
        let _lock = self.lock()?;
        self.prune_locked(keep, older_than)
    }

    /// [`Runs::prune`] under the lock a save already holds: the index read
    /// here and written back must not miss a parallel run's line.
    pub(super) fn prune_locked(
        &self,
        keep: Option<usize>,
        older_than: Option<Duration>,
    ) -> std::io::Result<Pruned> {
        let entries = self.entries();
        let held = self.held();
        let now = time::OffsetDateTime::now_utc();
        let n = entries.len();
        let mut kept: Vec<Entry> = Vec::with_capacity(n);
        let mut out = Pruned::default();
        for (i, e) in entries.into_iter().enumerate() {
            let too_many = keep.is_some_and(|k| n - i > k);
            let too_old = older_than.is_some_and(|d| {
                e.started_at
                    .as_deref()
                    .and_then(|t| {
                        time::OffsetDateTime::parse(
                            t,
                            &time::format_description::well_known::Rfc3339,
                        )
                        .ok()
                    })
                    .is_some_and(|t| now - t > d)
            });
            if !(too_many || too_old) {
                kept.push(e);
            } else if held.contains(&e.id) {
                out.held.push(e.id.clone());
                kept.push(e);
            } else {
                let _ = std::fs::remove_file(self.dir.join(&e.path));
                let _ = std::fs::remove_file(self.dir.join(format!("{}{}", e.path, super::SOURCE)));
                out.removed.push(e.id);
            }
        }
        out.kept = kept.len();
        // Interrupted runs are listed from their own files, not the index.
        kept.retain(|e| !e.is_interrupted());
        if !out.removed.is_empty() {
            self.write_index(&kept)?;
        }
        Ok(out)
    }
}

/// Whether a process with this id exists (Linux: `/proc/PID`; elsewhere
/// assumed alive, so a hold is never dropped early).
fn process_alive(pid: u32) -> bool {
    let proc = std::path::Path::new("/proc");
    if !proc.exists() {
        return true;
    }
    proc.join(pid.to_string()).exists()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::trace::{RunSummary, Trace};

    fn trace(id: &str, started: &str) -> Trace {
        Trace {
            run_id: id.to_owned(),
            file: "p.yml".to_owned(),
            composition: RunSummary {
                name: "c".to_owned(),
                started_at: Some(started.to_owned()),
                ..RunSummary::default()
            },
            ..Trace::default()
        }
    }

    #[test]
    fn keep_older_than_and_holds() {
        let dir = tempfile::tempdir().unwrap();
        let runs = Runs::at(dir.path().join("runs"));
        // Saving prunes to the default cap only, far above these few.
        for (i, day) in ["2020-01-01", "2020-01-02", "2020-01-03", "2099-01-04"]
            .iter()
            .enumerate()
        {
            let t = trace(
                &format!("2020010{i}-000000-000{i}"),
                &format!("{day}T00:00:00Z"),
            );
            runs.save(&t).unwrap();
        }
        assert_eq!(runs.entries().len(), 4);
        let hold = runs.hold("20200100-000000-0000").unwrap();
        let p = runs.prune(Some(2), None).unwrap();
        assert_eq!(p.removed, ["20200101-000000-0001"]);
        assert_eq!(p.held, ["20200100-000000-0000"]);
        assert_eq!(runs.entries().len(), 3);
        drop(hold);
        let p = runs
            .prune(None, Some(Duration::from_secs(86_400 * 30)))
            .unwrap();
        assert_eq!(p.removed, ["20200100-000000-0000", "20200102-000000-0002"]);
        let left: Vec<String> = runs.entries().into_iter().map(|e| e.id).collect();
        assert_eq!(left, ["20200103-000000-0003"]);
        assert!(runs.load(&runs.find("latest").unwrap()).is_ok());
        let files = std::fs::read_dir(&runs.dir).unwrap().count();
        assert_eq!(files, 4, "one trace, the index, the lock and the holds dir");
    }
}
