//! The app's side of what a run proved: each case's PASS/FAIL, its
//! expectations, its judged metrics and the composition's output (the
//! Results view), and choosing the composition and case the next run uses — by the palette, by `c`, by moving the
//! editor's cursor into another composition, or every case in turn (`A`).

use serde_json::Value;

use super::{App, Effect};
use crate::keys::Action;
use crate::overlay::{Overlay, TextWindow};
use pipewright_engine::run::session::Command;
use pipewright_engine::run::trace::{RunStatus, Trace};

use crate::results::CaseResult;

impl App {
    /// Keeps a finished run's verdict (replacing the last one of the same
    /// composition and case), and starts the next queued case.
    pub(crate) fn record_result(&mut self, trace: &Trace) -> Vec<Effect> {
        let result = CaseResult {
            composition: trace.composition.name.clone(),
            case: trace.composition.case.clone(),
            passed: trace.passed(),
            status: trace.composition.status,
            expect: trace.expect.clone(),
            eval: trace.eval.clone(),
            output: trace.output.clone(),
            run_id: trace.run_id.clone(),
        };
        self.results.record(result);
        if trace.composition.status == RunStatus::Cancelled {
            self.results.clear_queue();
        }
        match self.results.next_queued() {
            Some(next) => {
                let mut effects = self.choose_case(&next);
                effects.extend(self.command(Command::Run, true));
                effects
            }
            None => Vec::new(),
        }
    }

    /// Uses case `name` of the composition on screen for the next run. A
    /// case brings its own vars and expectations, so the session is
    /// started afresh.
    pub fn choose_case(&mut self, name: &str) -> Vec<Effect> {
        let Some(comp) = self.comp.clone() else {
            return Vec::new();
        };
        if !comp.cases.iter().any(|c| c.name == name) {
            self.say(
                format!("composition {} has no case {name}", comp.name),
                true,
            );
            return Vec::new();
        }
        if self.run_in_progress() {
            self.say("a run is in progress: cancel it (x) first", true);
            return Vec::new();
        }
        self.opts.case = Some(name.to_owned());
        self.say(format!("case {name}: the next run uses its vars"), false);
        self.fresh_session()
    }

    /// `c`: the composition's next case (wrapping around).
    pub(crate) fn next_case(&mut self) -> Vec<Effect> {
        let Some(comp) = self.comp.clone() else {
            return Vec::new();
        };
        if comp.cases.is_empty() {
            self.say(format!("composition {} has no cases", comp.name), true);
            return Vec::new();
        }
        let at = self
            .case_row(&comp)
            .and_then(|row| comp.cases.iter().position(|c| c.name == row.name))
            .unwrap_or(0);
        let next = comp.cases[(at + 1) % comp.cases.len()].name.clone();
        self.choose_case(&next)
    }

    /// `A`: every case of the composition, one after another, each in its
    /// own session; the Results view lists them as they end.
    pub(crate) fn run_cases(&mut self) -> Vec<Effect> {
        // The cases of the buffer as it is now, not of its last parse.
        let mut effects = self.catch_up();
        let Some(comp) = self.comp.clone() else {
            effects.extend(self.command(Command::Run, true));
            return effects;
        };
        if comp.cases.is_empty() {
            effects.extend(self.command(Command::Run, true));
            return effects;
        }
        if self.run_in_progress() {
            self.say("a run is in progress: cancel it (x) first", true);
            return effects;
        }
        let mut names: Vec<String> = comp.cases.iter().map(|c| c.name.clone()).collect();
        let first = names.remove(0);
        self.results.queue(names);
        effects.extend(self.choose_case(&first));
        effects.extend(self.command(Command::Run, true));
        effects
    }

    /// Drops the session, so the next run starts one with the current
    /// composition, case and vars.
    pub(crate) fn fresh_session(&mut self) -> Vec<Effect> {
        if self.session.close() {
            vec![Effect::DropSession]
        } else {
            Vec::new()
        }
    }

    /// The composition whose text holds the editor's cursor line, when the
    /// file has several and it is not the one on screen: switched to.
    pub(crate) fn follow_composition(&mut self, line: usize) -> Vec<Effect> {
        let Some(p) = self.pipeline.clone() else {
            return Vec::new();
        };
        if p.compositions.len() < 2 || self.run_in_progress() {
            return Vec::new();
        }
        let here = p
            .compositions
            .iter()
            .find(|c| (c.span.start.line as usize) <= line && line <= (c.span.end.line as usize));
        match here {
            Some(c) if self.comp.as_ref().is_some_and(|cur| cur.name != c.name) => {
                let name = c.name.clone();
                let mut effects = self.fresh_session();
                effects.extend(self.choose_composition(&name));
                self.say(format!("composition {name}"), false);
                effects
            }
            _ => Vec::new(),
        }
    }

    /// The composition and case the next run uses, for the status bar.
    pub fn run_label(&self) -> Option<String> {
        // A recording's row is the recording itself: the bar counts it.
        if self.recording.is_some() {
            return None;
        }
        let (p, c) = (self.pipeline.as_ref()?, self.comp.as_ref()?);
        if p.compositions.len() < 2 && c.cases.is_empty() {
            return None;
        }
        Some(match self.case_row(c) {
            Some(row) => format!("{} [{}]", c.name, row.name),
            None => c.name.clone(),
        })
    }

    /// The Results view's text: a line per case run (as `pipewright run`
    /// prints them), each expectation under it, and the output.
    pub(crate) fn results_overlay(&self) -> Overlay {
        let mut body = Vec::new();
        if self.results.rows().is_empty() {
            body.push("nothing has run yet: F5 runs the case on screen, A runs every case".into());
        } else if self.results.rows().iter().any(|r| !r.eval.is_empty()) {
            body.push(format!(
                "{} judges every run listed again with the file on screen (no tool is called)",
                self.keymap.label(Action::Judge)
            ));
            body.push(String::new());
        }
        for r in self.results.rows() {
            let case = r
                .case
                .as_ref()
                .map(|c| format!(" [{c}]"))
                .unwrap_or_default();
            let verdict = if r.passed { "PASS" } else { "FAIL" };
            body.push(format!(
                "composition [{verdict}] {}{case}  ({}, run {})",
                r.composition,
                r.status.as_str(),
                r.run_id
            ));
            if r.expect.is_empty() {
                body.push("    no expectations".into());
            }
            for e in &r.expect {
                let mark = if e.pass { "✓" } else { "✗" };
                let mut line = format!(
                    "    {mark} {} {} → actual {}",
                    e.target,
                    compact(&e.matcher, 60),
                    compact(&e.actual, 60)
                );
                if let Some(m) = &e.message {
                    line.push_str(&format!(" ({m})"));
                }
                body.push(line);
            }
            for row in &r.eval {
                for line in pipewright_engine::eval::text::row_lines(row) {
                    body.push(format!("  {line}"));
                }
            }
            body.push(format!("    output {}", compact(r.output.tree(), 200)));
            body.push(String::new());
        }
        let passed = self.results.rows().iter().filter(|r| r.passed).count();
        let title = format!(
            "results: {passed} passed, {} failed",
            self.results.rows().len() - passed
        );
        Overlay::Text(TextWindow::results(title, body))
    }
}

/// A value as one line of JSON, cut to `max` characters.
fn compact(v: &Value, max: usize) -> String {
    let text = serde_json::to_string(v).unwrap_or_default();
    if text.chars().count() > max {
        let cut: String = text.chars().take(max).collect();
        format!("{cut}…")
    } else {
        text
    }
}
