//! The app's side of a server's questions: they arrive as messages from
//! the session's responder, wait in the modal (their node shows `?`), and
//! go back answered — or cancelled when the session is dropped or the
//! workbench quits; a sampling question can ask the provider.

use indexmap::IndexMap;

use super::{App, Effect};
use pipewright_engine::file::model::Sampling;
use pipewright_engine::mcp::human::provider::Provider;
use pipewright_engine::redact::Redactor;

impl App {
    pub(crate) fn node_index(&self, id: Option<&str>) -> Option<usize> {
        self.comp.as_ref()?.index_of(id?)
    }

    /// Whether node `id` (if any) still has a question waiting; its `?`
    /// follows.
    pub(crate) fn update_asking(&mut self, id: Option<&str>) {
        if let (Some(id), Some(i)) = (id, self.node_index(id)) {
            self.visuals[i].asking = self.asks.asks_node(id);
            self.sync_live_of(i);
        }
    }

    /// Asks the sampling provider to write question `ticket`'s reply
    /// (its settings resolved with the run's vars, secrets masked in an
    /// error).
    pub(crate) fn ask_provider(&mut self, ticket: u64, request: serde_json::Value) -> Vec<Effect> {
        let redactor = Redactor::default();
        let vars = match (&self.pipeline, &self.comp) {
            (Some(p), Some(c)) => self.vars(p, c),
            _ => IndexMap::new(),
        };
        let resolved = self
            .sampling_provider()
            .map(|p| Provider::resolved(&p, &vars, &self.opts.settings.env, &redactor));
        match resolved {
            Some(Ok(provider)) => vec![Effect::AskProvider {
                ticket,
                provider: Box::new(provider),
                request,
            }],
            Some(Err(e)) => {
                self.asks.provided(ticket, Err(redactor.text(&e)));
                Vec::new()
            }
            None => Vec::new(),
        }
    }

    /// The model of the sampling provider, when one is configured (the
    /// question modal names it).
    pub(crate) fn sampling_model(&self) -> Option<String> {
        self.sampling_provider().map(|p| p.model)
    }

    /// The sampling provider: the file's `sampling:`, else config.yaml's.
    pub fn sampling_provider(&self) -> Option<Sampling> {
        self.pipeline
            .as_ref()
            .and_then(|p| p.sampling.clone())
            .or_else(|| {
                self.sampling.as_ref().map(|p| Sampling {
                    url: p.url.clone(),
                    model: p.model.clone(),
                    api_key: p.api_key.clone(),
                })
            })
    }

    /// Answers every open question `cancel` (the session is dropped, or the
    /// workbench quits), so no server waits on a closed modal.
    pub fn cancel_questions(&mut self, why: &str) {
        for id in self.asks.cancel_all(why) {
            self.update_asking(Some(&id));
        }
    }

    /// Node `id` finished: the questions that may have been its move on
    /// to the other nodes that may be asking.
    pub(crate) fn node_ended(&mut self, id: &str) {
        for node in self.asks.node_ended(id) {
            self.update_asking(Some(&node));
        }
    }

    /// Drops the questions whose call stopped waiting (timed out,
    /// cancelled).
    pub(crate) fn prune_questions(&mut self) {
        for id in self.asks.prune() {
            self.update_asking(Some(&id));
        }
    }
}
