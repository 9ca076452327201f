//! Compensation after a failed run: the `compensate:` calls of the nodes
//! that completed, newest first, each recorded; one that fails is reported
//! and the others still run.

use super::*;
use crate::run::trace::Compensation;

impl Actor {
    pub(super) async fn compensate(&mut self) {
        let done: Vec<String> = self.completed.iter().rev().cloned().collect();
        for id in done {
            let Some(i) = self.index(&id) else {
                continue;
            };
            let node = &self.comp.nodes[i];
            let Some(c) = node.compensate.clone() else {
                continue;
            };
            let server = c.server.clone().or_else(|| node.server.clone());
            // What an undo may read: the run's vars and the node's own output.
            let mut nodes = HashMap::new();
            nodes.insert(id.clone(), Seen::Output(self.records[i].output.clone()));
            let scope = Snapshot {
                nodes,
                vars: self.vars.clone(),
                item: None,
                pass_vars: self.comp.passes_vars_through(),
                env: self.cfg.env.clone(),
            };
            let started = Instant::now();
            let mut row = Compensation {
                node: id.clone(),
                tool: c.tool.clone(),
                ..Compensation::default()
            };
            match crate::lang::snapshot::resolve_args(&c.args, &scope) {
                Err(e) => {
                    row.status = "failed".into();
                    row.error = Some(self.redactor.text(&e.to_string()));
                }
                Ok(args) => {
                    row.args = Json::from_value(self.redactor.value(&Value::Object(args.clone())));
                    let cancel = CancellationToken::new();
                    let res = self
                        .caller
                        .call(crate::mcp::caller::CallRequest {
                            server: server.as_deref(),
                            tool: &c.tool,
                            args,
                            meta: None,
                            timeout: self.cfg.default_timeout,
                            cancel: &cancel,
                            scope: &crate::mcp::human::CallScope {
                                node: Some(id.clone()),
                                responder: self.cfg.human.0.clone(),
                                notify: None,
                                task: None,
                            },
                        })
                        .await;
                    match res {
                        Ok(out) if out.is_error => {
                            row.status = "failed".into();
                            row.error =
                                Some(self.redactor.text(&crate::mcp::error_text(&out.result)));
                        }
                        Ok(out) => {
                            row.status = "ok".into();
                            row.output = self.redactor.json(&out.output());
                        }
                        Err(e) => {
                            row.status = "failed".into();
                            row.error = Some(self.redactor.text(&e.to_string()));
                        }
                    }
                }
            }
            row.duration_ms = started.elapsed().as_millis() as u64;
            self.emit(Event::Compensated {
                id: id.clone(),
                ok: row.status == "ok",
                error: row.error.clone(),
            })
            .await;
            self.compensations.push(row);
        }
    }
}
