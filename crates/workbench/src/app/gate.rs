//! What a key that runs the file checks before it runs: that the plan is
//! the buffer's current text (not its last debounced parse), and that a
//! node re-run alone has no stale ancestor whose old output it would read.

use super::*;

impl App {
    /// Adopts the validation of the buffer's current text when the
    /// debounced one has not delivered it yet (a run key pressed right
    /// after typing). Nothing while a saved run is on screen.
    pub(crate) fn catch_up(&mut self) -> Vec<Effect> {
        if self.viewing.is_some() {
            return Vec::new();
        }
        match self.editor.validate_now() {
            Some(loaded) => self.on_validated(&loaded),
            None => Vec::new(),
        }
    }

    /// The earliest stale (◌) ancestors of node `id`: those whose output
    /// is older than their inputs while no ancestor of theirs is stale.
    pub(super) fn stale_ancestors(&self, id: &str) -> Vec<String> {
        let Some(comp) = &self.comp else {
            return Vec::new();
        };
        let Some(i) = comp.index_of(id) else {
            return Vec::new();
        };
        let stale = |n: usize| {
            self.visuals
                .get(n)
                .is_some_and(|v| v.status == NodeStatus::Stale)
        };
        let ancestors = comp.ancestors(i);
        ancestors
            .iter()
            .copied()
            .filter(|&a| stale(a) && !comp.ancestors(a).iter().any(|&b| stale(b)))
            .map(|a| comp.nodes[a].id.clone())
            .collect()
    }

    /// Re-running a node below a stale one would feed it the stale node's
    /// old output and show a fresh ✓: refuses it (saying which node is
    /// stale and what to run instead) and returns true.
    pub(super) fn refused_below_stale(&mut self, cmd: &Command) -> bool {
        if let Command::Rerun(id) | Command::RerunFrom(id) = cmd
            && self.viewing.is_none()
            && !self.run_in_progress()
        {
            let stale = self.stale_ancestors(id);
            if !stale.is_empty() {
                let names = stale
                    .iter()
                    .map(|s| format!("`{s}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let first = &stale[0];
                let r = self.keymap.label(Action::Rerun);
                let from = self.keymap.label(Action::RerunFrom);
                let run = self.keymap.label(Action::Run);
                self.say(
                    format!(
                        "not run: `{id}` reads stale ◌ {names}: re-run `{first}` first ({r}; {from} with all after it) or {run} runs the whole file"
                    ),
                    true,
                );
                return true;
            }
        }
        false
    }
}
