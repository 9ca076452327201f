//! A saved run written again in place: a run judged after it was saved
//! (`serve --eval` grades a served run once the agent has its answer) gets
//! its graded trace and its index line rewritten, under the directory's
//! lock, the trace through a temporary file so a reader never sees half
//! of it.

use std::path::PathBuf;

use super::{Entry, Runs, disk, is_plain_name};
use crate::run::trace::Trace;

impl Runs {
    /// Writes `trace` over the saved run with its id, and its index line;
    /// `NotFound` when no saved run has that id.
    pub fn replace(&self, trace: &Trace) -> std::io::Result<PathBuf> {
        let _lock = self.lock()?;
        let mut entries = self.indexed();
        let Some(at) = entries.iter().position(|e| e.id == trace.run_id) else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("no saved run has the id `{}`", trace.run_id),
            ));
        };
        let name = entries[at].path.clone();
        if !is_plain_name(&name) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "run `{}` names a trace outside the runs directory",
                    trace.run_id
                ),
            ));
        }
        let path = self.dir.join(&name);
        let tmp = self.dir.join(format!("{name}.{}.tmp", std::process::id()));
        disk::write(trace, std::fs::File::create(&tmp)?)?;
        std::fs::rename(&tmp, &path)?;
        entries[at] = Entry::of(trace, &name);
        self.write_index(&entries)?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::trace::{EvalRow, EvalStatus, RunSummary};

    #[test]
    fn a_judged_run_replaces_its_saved_trace_and_index_line() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let runs = Runs::at(dir.path().join("runs"));
        let mut t = Trace {
            run_id: "20261126-100000-aaaa".into(),
            file: "f.yml".into(),
            composition: RunSummary {
                name: "c".into(),
                started_at: Some("2026-11-26T10:00:00Z".into()),
                cost_total: 0.001,
                ..Default::default()
            },
            eval: vec![EvalRow::deferred("rubric")],
            ..Trace::default()
        };
        runs.save(&t).unwrap_or_else(|e| panic!("{e}"));
        t.eval[0].status = EvalStatus::Pass;
        t.eval[0].score = Some(0.9);
        t.composition.cost_total = 0.002;
        runs.replace(&t).unwrap_or_else(|e| panic!("{e}"));
        let entries = runs.entries();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].cost_usd, 0.002);
        let back = runs.load(&entries[0]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.eval[0].score, Some(0.9));
        let other = Trace {
            run_id: "20261126-100001-bbbb".into(),
            ..t.clone()
        };
        assert!(runs.replace(&other).is_err());
    }
}
