//! The doctor for a server that could not start: `D` in the Messages pane
//! opens its checklist, which the loop runs off the screen's thread
//! (`engine::doctor`) and hands back.

use crate::app::{App, Effect};
use crate::overlay::{DoctorView, Overlay};

impl App {
    /// Opens the doctor's view of `server` (over the Messages pane, which
    /// Esc goes back to) and asks the loop to run its checklist.
    pub(crate) fn doctor(&mut self, server: String) -> Vec<Effect> {
        let Some(pipeline) = self.pipeline.clone() else {
            self.say("the doctor needs a file that loads", true);
            return Vec::new();
        };
        let vars = match self.comp.clone() {
            Some(comp) => self.vars(&pipeline, &comp),
            None => pipeline.vars.clone(),
        };
        match self.overlay.take() {
            // `r`: the same view, running again.
            Some(Overlay::Doctor(_)) => {}
            other => self.overlay_under = other,
        }
        self.overlay = Some(Overlay::Doctor(Box::new(DoctorView::examining(
            server.clone(),
        ))));
        vec![Effect::Doctor {
            server,
            pipeline,
            vars,
        }]
    }

    /// The checklist of `server` came: shown if its view is still open.
    pub(crate) fn on_doctored(
        &mut self,
        server: &str,
        result: Result<Box<pipewright_engine::doctor::Report>, String>,
    ) {
        if let Some(failing) = result.as_ref().ok().and_then(|r| r.first_failure()) {
            let fix = failing.fix.as_deref().unwrap_or_default();
            self.note(format!(
                "doctor: server {server} fails at `{}`: {fix}",
                failing.name
            ));
        }
        if let Some(Overlay::Doctor(view)) = &mut self.overlay
            && view.server() == server
        {
            view.show(result.map(|r| *r));
        }
    }
}
