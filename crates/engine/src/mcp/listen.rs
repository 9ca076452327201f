//! `subscriptions/listen` (MCP 2026-07-28): a long-lived connection to a
//! server that settled on 2026-07-28 and declares `tools.listChanged`
//! keeps one listen stream open for `toolsListChanged`, so a changed tool
//! list is read again before the next call, as a 2025-11-25 server's
//! `notifications/tools/list_changed` has it. Short commands (`run`,
//! `tools call`) open none: the stream would cost a round trip for a list
//! they read once.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use rmcp::model::{ServerNotification, SubscriptionFilter};

use super::{Connection, Inner};

/// How many times a stream the server ended is opened again.
const MAX_REOPEN: u32 = 8;
/// The pause before opening it again.
const REOPEN_AFTER: Duration = Duration::from_secs(1);

impl Connection {
    /// True when the server settled on 2026-07-28 and says its tool list
    /// can change (`capabilities.tools.listChanged`).
    pub fn can_listen(&self) -> bool {
        let info = &self.inner.server_info;
        self.protocol_version() == super::Protocol::V2026_07_28.name()
            && info.pointer("/capabilities/tools/listChanged") == Some(&true.into())
    }

    /// Opens the listen stream in the background when [`can_listen`]
    /// holds; it ends with the connection. What happens to it goes to the
    /// server log.
    ///
    /// [`can_listen`]: Connection::can_listen
    pub(super) fn listen_for_changes(&self) {
        if !self.can_listen() {
            return;
        }
        let peer = self.inner.peer.clone();
        let inner = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            let open = |inner: &std::sync::Weak<Inner>| {
                inner.upgrade().filter(|i| !i.closed.load(Ordering::SeqCst))
            };
            for round in 0..=MAX_REOPEN {
                let filter = SubscriptionFilter::builder().tools_list_changed().build();
                let mut sub = match peer.listen(filter).await {
                    Ok(sub) => sub,
                    Err(e) => {
                        if let Some(i) = open(&inner) {
                            i.log.push(&format!(
                                "[pipewright] subscriptions/listen was refused ({e}); the tool list is read again when its ttlMs passes"
                            ));
                        }
                        return;
                    }
                };
                if round > 0
                    && let Some(i) = open(&inner)
                {
                    // Changes made while no stream was open were not told.
                    i.tools_changed.store(true, Ordering::SeqCst);
                }
                loop {
                    match sub.next().await {
                        Ok(Some(ServerNotification::ToolListChangedNotification(_))) => {
                            let Some(i) = open(&inner) else { return };
                            i.log.push("[pipewright] the server's tool list changed (subscriptions/listen); it is read again before the next call");
                            i.tools_changed.store(true, Ordering::SeqCst);
                        }
                        Ok(Some(_)) => {}
                        Ok(None) | Err(_) => break,
                    }
                }
                if open(&inner).is_none() {
                    return;
                }
                tokio::time::sleep(REOPEN_AFTER).await;
            }
        });
    }
}
