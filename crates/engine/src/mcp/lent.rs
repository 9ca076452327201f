//! A stdio server's transport lent to one handshake and handed back when
//! that handshake fails, so that `auto` can try the other one on the same
//! process (a server that refused `initialize` is asked `server/discover`
//! without being started again). rmcp takes its transport by value and
//! drops it when a handshake fails; [`Lent`] puts it back on drop.

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::{
    RoleClient,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};

use super::child::StdioChild;

/// Where a lent transport returns to.
#[derive(Default, Clone)]
pub(super) struct Home(Arc<Mutex<Option<StdioChild>>>);

impl Home {
    /// Lends `child` out; it comes back here when the [`Lent`] is dropped.
    pub(super) fn lend(&self, child: StdioChild) -> Lent {
        Lent {
            child: Some(child),
            home: self.clone(),
        }
    }

    /// The transport, once it came back.
    pub(super) fn take(&self) -> Option<StdioChild> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

/// A [`StdioChild`] on loan: it speaks for the child and returns it home
/// when dropped. Once its [`Home`] is gone too, the child is dropped (and
/// its process group killed) as it would have been without the loan.
pub(super) struct Lent {
    child: Option<StdioChild>,
    home: Home,
}

impl Drop for Lent {
    fn drop(&mut self) {
        if let Some(child) = self.child.take() {
            *self.home.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(child);
        }
    }
}

fn gone() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::NotConnected,
        "the server's transport was handed back",
    )
}

impl Transport<RoleClient> for Lent {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = self.child.as_mut().map(|child| child.send(item));
        async move {
            match sent {
                Some(sent) => sent.await,
                None => Err(gone()),
            }
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        let child = self.child.as_mut();
        async move {
            match child {
                Some(child) => child.receive().await,
                None => None,
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        let child = self.child.as_mut();
        async move {
            match child {
                Some(child) => child.close().await,
                None => Ok(()),
            }
        }
    }
}
