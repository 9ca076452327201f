//! What every run of a worker shares: its name, the served compositions
//! and the hash of each one's file; and the check a request passes.

use std::collections::HashMap;

use crate::serve::exec::Job;
use crate::serve::handler::PipelineServer;
use pipewright_engine::run::durable::client::RunRequest;

/// Everything a run needs, shared by every run of this worker.
pub(crate) struct Shared {
    pub name: String,
    pub server: PipelineServer,
    /// The file hash of each served tool.
    pub hashes: HashMap<String, String>,
}

impl Shared {
    /// The job a request asks for, or why it is refused (a sentence).
    pub fn job(&self, req: &RunRequest) -> Result<Job, String> {
        let Some(hash) = self.hashes.get(&req.tool) else {
            let mut names: Vec<&str> = self.hashes.keys().map(String::as_str).collect();
            names.sort_unstable();
            return Err(format!(
                "worker `{}` runs no composition `{}`; it runs: {}",
                self.name,
                req.tool,
                names.join(", ")
            ));
        };
        if *hash != req.file_sha256 {
            return Err(format!(
                "worker `{}` holds another version of the file of `{}` than the client (its SHA-256 is {}…, the client's {}…); give both the same file",
                self.name,
                req.tool,
                &hash[..12],
                req.file_sha256.get(..12).unwrap_or(&req.file_sha256)
            ));
        }
        self.server
            .job(&req.tool, &req.args)
            .map_err(|e| e.message.to_string())
    }
}
