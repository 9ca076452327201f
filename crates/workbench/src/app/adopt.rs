//! The plan on screen: a validation adopted (errors keep the last good
//! plan; a good plan replaces it and the session's, keeping the outputs
//! still valid), and another composition of the file chosen.

use super::*;

impl App {
    /// Adopts a validation result: errors keep the last good plan; a good
    /// plan replaces it (and the session's, keeping valid outputs).
    pub fn on_validated(&mut self, loaded: &Loaded) -> Vec<Effect> {
        use pipewright_engine::diag::Severity;
        self.errors = loaded
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        self.warnings = loaded.diagnostics.len() - self.errors;
        self.editor.set_diagnostics(loaded.diagnostics.clone());
        let first = !self.validated_once;
        self.validated_once = true;
        if loaded.has_errors() {
            // A file that does not load at all has nothing to show but the
            // editor: start there, so typing is text and not commands.
            if first && self.comp.is_none() && self.overlay.is_none() {
                self.focus = Focus::Editor;
            }
            return Vec::new();
        }
        let Some(pipeline) = loaded.pipeline.clone() else {
            return Vec::new();
        };
        self.plan_source = Some(self.editor.text());
        let pipeline = Arc::new(pipeline);
        // A saved run on screen: the live plan behind it is kept current.
        self.behind_viewing(|app| {
            let mut effects = app.adopt(pipeline);
            effects.extend(app.live_preflight());
            effects
        })
    }

    fn adopt(&mut self, pipeline: Arc<Pipeline>) -> Vec<Effect> {
        let name = self
            .comp
            .as_ref()
            .map(|c| c.name.clone())
            .or_else(|| self.opts.composition.clone());
        let comp = name
            .as_deref()
            .and_then(|n| pipeline.composition(n))
            .or_else(|| pipeline.compositions.first())
            .cloned();
        let Some(comp) = comp else {
            self.say("the file has no composition to run", true);
            return Vec::new();
        };
        let comp = Arc::new(comp);
        let key = session_key(&pipeline, &comp);
        let mut effects = Vec::new();
        let same_session = self.session.is_for(&key);
        let same_comp = self.comp.as_ref().is_some_and(|c| c.name == comp.name);
        if !same_session && self.session.close() {
            effects.push(Effect::DropSession);
            if self.run_in_progress() {
                self.run = RunState::Idle;
                self.say(
                    "the file's servers changed: the run was stopped; F5 starts a new one",
                    true,
                );
            }
        }
        // Keep what each surviving node showed; the session says which of
        // them went stale. Without a session (its servers changed), the
        // nodes on a changed server and their descendants are stale here.
        let old: IndexMap<String, NodeVisual> = match &self.comp {
            Some(c) if same_comp => c
                .nodes
                .iter()
                .map(|n| n.id.clone())
                .zip(self.visuals.iter().cloned())
                .collect(),
            _ => IndexMap::new(),
        };
        let servers_stale = if same_comp && !same_session {
            self.pipeline
                .as_ref()
                .map(|p| stale_by_servers(p, &pipeline, &comp))
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        self.visuals = comp
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let mut v = old.get(&n.id).cloned().unwrap_or_default();
                v.mocked = n.mock.is_some();
                v.breakpoint = self.breakpoints.contains(&n.id);
                if servers_stale.contains(&i) && v.record.is_some() {
                    v.status = NodeStatus::Stale;
                }
                if !same_session {
                    // Nothing runs without a session.
                    v.paused_before = false;
                    v.asking = false;
                    v.live_args = None;
                    if v.status == NodeStatus::Running {
                        v.status = NodeStatus::Cancelled;
                    }
                }
                v
            })
            .collect();
        self.breakpoints.retain(|b| comp.index_of(b).is_some());
        self.dag.show(&comp);
        if same_session {
            effects.push(Effect::Send(Command::ReplacePlan(comp.clone())));
            // A changed `vars:` (or case row) makes its readers stale.
            effects.push(Effect::Send(Command::SetVars(self.vars(&pipeline, &comp))));
        }
        self.pipeline = Some(pipeline);
        self.comp = Some(comp.clone());
        let sel = self
            .dag
            .selected_id()
            .and_then(|s| comp.index_of(s))
            .or(if comp.nodes.is_empty() { None } else { Some(0) });
        self.dag.select(sel);
        self.refresh_inspector();
        effects
    }

    /// Switches to another composition of the file.
    pub fn choose_composition(&mut self, name: &str) -> Vec<Effect> {
        let Some(p) = self.pipeline.clone() else {
            return Vec::new();
        };
        if p.composition(name).is_none() {
            self.say(format!("no composition named {name}"), true);
            return Vec::new();
        }
        self.opts.composition = Some(name.to_owned());
        // A case row belongs to its composition.
        self.opts.case = None;
        self.comp = None;
        self.dag.remember(None);
        self.adopt(p)
    }
}
