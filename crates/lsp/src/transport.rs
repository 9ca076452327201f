//! JSON-RPC over stdin and stdout with `Content-Length` framing, read so
//! that bad input never ends the server: a message that is not JSON-RPC
//! is reported with its `id` when one can be found (the server answers it
//! with an error); a broken header is skipped to the next blank line; a body
//! over the limit is read past and refused. The server ends when stdin
//! closes. Nothing but LSP messages is written to stdout.

use std::io::{self, BufRead, Read, Write};
use std::thread;

use crossbeam_channel::{Receiver, Sender, unbounded};
use lsp_server::{Message, RequestId};

/// The largest message body read (a file is at most 8 MiB; its text is
/// escaped in JSON).
const MAX_BODY: usize = 64 * 1024 * 1024;

/// What one read gave.
#[derive(Debug)]
pub enum Read1 {
    Message(Message),
    /// Not a message: why, and the request's id when one could be found.
    Bad(String, Option<RequestId>),
    /// stdin closed.
    End,
}

/// Reads one framed message.
pub fn read_one(input: &mut impl BufRead) -> io::Result<Read1> {
    let mut length: Option<usize> = None;
    let mut broken = None;
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return Ok(Read1::End);
        }
        let header = line.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            if length.is_some() || broken.is_some() {
                break;
            }
            continue;
        }
        match header.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                match value.trim().parse::<usize>() {
                    Ok(n) => length = Some(n),
                    Err(_) => broken = Some(format!("a bad Content-Length: {:?}", value.trim())),
                }
            }
            Some(_) => {}
            None => broken = Some(format!("a malformed header line: {header:?}")),
        }
    }
    let Some(length) = length else {
        return Ok(Read1::Bad(
            broken.unwrap_or_else(|| "no Content-Length".into()),
            None,
        ));
    };
    if length > MAX_BODY {
        io::copy(&mut input.take(length as u64), &mut io::sink())?;
        return Ok(Read1::Bad(
            format!("a message of {length} bytes, over the limit of {MAX_BODY}"),
            None,
        ));
    }
    let mut body = vec![0; length];
    input.read_exact(&mut body)?;
    let value: serde_json::Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return Ok(Read1::Bad(format!("a body that is not JSON: {e}"), None)),
    };
    let id = value
        .get("id")
        .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
    match serde_json::from_value::<Message>(value) {
        Ok(m) => Ok(Read1::Message(m)),
        Err(e) => Ok(Read1::Bad(format!("not a JSON-RPC message: {e}"), id)),
    }
}

/// Messages to and from the editor over stdin and stdout.
pub struct Stdio {
    /// What the server writes; the writer thread ends when it is dropped.
    pub sender: Sender<Message>,
    /// What the editor sent; disconnected when stdin closes.
    pub receiver: Receiver<Read1>,
    writer: thread::JoinHandle<()>,
}

impl Stdio {
    /// Starts the reader and the writer thread.
    pub fn open() -> Self {
        let (sender, out_rx): (Sender<Message>, Receiver<Message>) = unbounded();
        let (in_tx, receiver) = unbounded();
        let writer = thread::spawn(move || {
            let stdout = io::stdout();
            let mut stdout = stdout.lock();
            for m in out_rx {
                if m.write(&mut stdout).and_then(|()| stdout.flush()).is_err() {
                    break;
                }
            }
        });
        thread::spawn(move || {
            let stdin = io::stdin();
            let mut stdin = stdin.lock();
            loop {
                let read = read_one(&mut stdin).unwrap_or(Read1::End);
                let end = matches!(read, Read1::End);
                if end || in_tx.send(read).is_err() {
                    break;
                }
            }
        });
        Self {
            sender,
            receiver,
            writer,
        }
    }

    /// Waits until everything sent is written (the reader thread is left
    /// blocked on stdin; the process ends it).
    pub fn finish(self) {
        drop(self.sender);
        let _ = self.writer.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    #[test]
    fn bad_input_is_skipped_and_the_next_message_read() {
        let good = r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;
        let text = [
            framed("{not json"),
            framed(r#"{"jsonrpc":"2.0","id":7,"params":{}}"#),
            "Garbage without colon\r\n\r\n".to_string(),
            "Content-Length: x\r\n\r\n".to_string(),
            framed(good),
        ]
        .concat();
        let mut input = io::Cursor::new(text.into_bytes());
        assert!(matches!(read_one(&mut input).unwrap(), Read1::Bad(_, None)));
        match read_one(&mut input).unwrap() {
            Read1::Bad(_, Some(id)) => assert_eq!(id, RequestId::from(7)),
            other => panic!("{other:?}"),
        }
        assert!(matches!(read_one(&mut input).unwrap(), Read1::Bad(_, None)));
        assert!(matches!(read_one(&mut input).unwrap(), Read1::Bad(_, None)));
        assert!(matches!(
            read_one(&mut input).unwrap(),
            Read1::Message(Message::Notification(_))
        ));
        assert!(matches!(read_one(&mut input).unwrap(), Read1::End));
    }
}
