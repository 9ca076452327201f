//! Bytes into messages: the chunks of one direction of a session, as they
//! crossed, cut into whole messages the way they travel — one a line
//! (stdio, and the server's stderr), one a body (a POST and its JSON
//! answer), or one a Server-Sent Event (an answer streamed, a GET stream)
//! — in bounded memory: a message over the limit is counted, never kept.

/// How a stream carries its messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// One message a line (`\n`, a `\r` before it dropped).
    Lines,
    /// The whole stream is one message (or one JSON array of them).
    Whole,
    /// Server-Sent Events: each event's `data` is one message.
    Sse,
}

/// One message cut out of a stream.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    /// The message's bytes, and its SSE event id when it came as an
    /// event that has one.
    Message(&'a [u8], Option<&'a str>),
    /// A message over the limit: how many bytes it had.
    TooLarge(u64, Option<&'a str>),
}

/// Cuts one stream into [`Piece`]s as its chunks come.
#[derive(Debug)]
pub(crate) struct Framer {
    framing: Framing,
    lines: LineSplit,
    /// The event being read (SSE).
    event: Event,
}

impl Framer {
    pub(crate) fn new(framing: Framing, limit: usize) -> Framer {
        // An event's line holds its field's name before the message.
        let line_limit = match framing {
            Framing::Sse => limit.saturating_add(1024),
            Framing::Lines | Framing::Whole => limit,
        };
        Framer {
            framing,
            lines: LineSplit::new(line_limit),
            event: Event::new(limit),
        }
    }

    /// Takes the next chunk; `out` gets each message it completes.
    pub(crate) fn push(&mut self, chunk: &[u8], out: &mut impl FnMut(Piece<'_>)) {
        match self.framing {
            Framing::Lines => self.lines.push(chunk, &mut |line| lines_piece(line, out)),
            Framing::Whole => self.lines.append(chunk),
            Framing::Sse => {
                let event = &mut self.event;
                self.lines.push(chunk, &mut |line| event.line(line, out));
            }
        }
    }

    /// The stream ended: what is left is a last message (a line without
    /// its end, a body); an event never finished is dropped, as a
    /// browser drops it.
    pub(crate) fn finish(&mut self, out: &mut impl FnMut(Piece<'_>)) {
        match self.framing {
            Framing::Lines | Framing::Whole => {
                self.lines.finish(&mut |line| lines_piece(line, out));
            }
            Framing::Sse => {
                let event = &mut self.event;
                self.lines.finish(&mut |line| event.line(line, out));
                self.event.clear();
            }
        }
    }
}

/// A line as a message: blank lines carry none.
fn lines_piece(line: Line<'_>, out: &mut impl FnMut(Piece<'_>)) {
    match line {
        Line::Text(text) if text.iter().all(u8::is_ascii_whitespace) => {}
        Line::Text(text) => out(Piece::Message(text, None)),
        Line::TooLong(n) => out(Piece::TooLarge(n, None)),
    }
}

/// A line cut out of a stream.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line<'a> {
    /// Its bytes, without the line's end.
    Text(&'a [u8]),
    /// A line over the limit: how many bytes it had.
    TooLong(u64),
}

/// Splits chunks into lines, keeping at most `limit` bytes of a line.
#[derive(Debug)]
pub(crate) struct LineSplit {
    buf: Vec<u8>,
    /// Bytes of a line past the limit so far (0: under it).
    over: u64,
    limit: usize,
}

impl LineSplit {
    pub(crate) fn new(limit: usize) -> LineSplit {
        LineSplit {
            buf: Vec::new(),
            over: 0,
            limit,
        }
    }

    /// Takes a chunk; `out` gets each line it completes. A line that
    /// fits in one chunk is handed out without a copy.
    pub(crate) fn push(&mut self, mut chunk: &[u8], out: &mut impl FnMut(Line<'_>)) {
        while let Some(nl) = chunk.iter().position(|&b| b == b'\n') {
            let (head, rest) = (&chunk[..nl], &chunk[nl + 1..]);
            if self.buf.is_empty() && self.over == 0 {
                if head.len() > self.limit {
                    out(Line::TooLong(head.len() as u64));
                } else {
                    out(Line::Text(trim_cr(head)));
                }
            } else {
                self.append(head);
                self.emit(out);
            }
            chunk = rest;
        }
        self.append(chunk);
    }

    /// Adds bytes to the line being read, counting them past the limit.
    pub(crate) fn append(&mut self, bytes: &[u8]) {
        if self.over > 0 {
            self.over += bytes.len() as u64;
        } else if self.buf.len() + bytes.len() > self.limit {
            self.over = (self.buf.len() + bytes.len()) as u64;
            self.buf = Vec::new();
        } else {
            self.buf.extend_from_slice(bytes);
        }
    }

    /// The line read so far, as a line (if it holds anything).
    pub(crate) fn finish(&mut self, out: &mut impl FnMut(Line<'_>)) {
        if !self.buf.is_empty() || self.over > 0 {
            self.emit(out);
        }
    }

    fn emit(&mut self, out: &mut impl FnMut(Line<'_>)) {
        if self.over > 0 {
            out(Line::TooLong(self.over));
            self.over = 0;
        } else {
            out(Line::Text(trim_cr(&self.buf)));
        }
        self.buf.clear();
        // A huge line once does not keep its buffer for the session.
        if self.buf.capacity() > 1 << 20 {
            self.buf = Vec::new();
        }
    }
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The Server-Sent Event being read: its `data` lines and `id`.
#[derive(Debug)]
struct Event {
    data: Vec<u8>,
    has_data: bool,
    /// Bytes of data past the limit (0: under it).
    over: u64,
    id: Option<String>,
    limit: usize,
}

impl Event {
    fn new(limit: usize) -> Event {
        Event {
            data: Vec::new(),
            has_data: false,
            over: 0,
            id: None,
            limit,
        }
    }

    fn clear(&mut self) {
        self.data.clear();
        self.has_data = false;
        self.over = 0;
        self.id = None;
    }

    /// One line of the stream (the SSE format: `field: value`, a blank
    /// line ends the event, `:` starts a comment).
    fn line(&mut self, line: Line<'_>, out: &mut impl FnMut(Piece<'_>)) {
        let text = match line {
            Line::Text(t) => t,
            // A line over the limit: if it is data, the event is too large.
            Line::TooLong(n) => {
                self.has_data = true;
                self.over += n;
                return;
            }
        };
        if text.is_empty() {
            self.dispatch(out);
            return;
        }
        if text[0] == b':' {
            return;
        }
        let (field, value) = match text.iter().position(|&b| b == b':') {
            Some(i) => {
                let v = &text[i + 1..];
                (&text[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (text, &b""[..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.add_data(b"\n");
                }
                self.has_data = true;
                self.add_data(value);
            }
            b"id" => self.id = Some(String::from_utf8_lossy(value).into_owned()),
            _ => {}
        }
    }

    fn add_data(&mut self, bytes: &[u8]) {
        if self.over > 0 {
            self.over += bytes.len() as u64;
        } else if self.data.len() + bytes.len() > self.limit {
            self.over = (self.data.len() + bytes.len()) as u64;
            self.data = Vec::new();
        } else {
            self.data.extend_from_slice(bytes);
        }
    }

    /// A blank line: the event is whole. One with no data (a priming
    /// event, a retry hint) carries no message.
    fn dispatch(&mut self, out: &mut impl FnMut(Piece<'_>)) {
        let id = self.id.as_deref();
        if self.over > 0 {
            out(Piece::TooLarge(self.over, id));
        } else if self.has_data && !self.data.iter().all(u8::is_ascii_whitespace) {
            out(Piece::Message(&self.data, id));
        }
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every piece of `chunks` fed to a framer, as text.
    fn pieces(framing: Framing, limit: usize, chunks: &[&[u8]]) -> Vec<String> {
        let mut framer = Framer::new(framing, limit);
        let mut got = Vec::new();
        let mut out = |p: Piece<'_>| {
            got.push(match p {
                Piece::Message(m, id) => format!(
                    "{}{}",
                    String::from_utf8_lossy(m),
                    id.map(|i| format!(" #{i}")).unwrap_or_default()
                ),
                Piece::TooLarge(n, _) => format!("<{n} bytes>"),
            });
        };
        for c in chunks {
            framer.push(c, &mut out);
        }
        framer.finish(&mut out);
        got
    }

    #[test]
    fn lines_are_cut_wherever_the_chunks_end() {
        let text = b"{\"a\":1}\r\n\n{\"b\":2}\n{\"c\"";
        for cut in 0..text.len() {
            let (a, b) = text.split_at(cut);
            assert_eq!(
                pieces(Framing::Lines, 100, &[a, b, b":3}"]),
                ["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"],
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn a_line_over_the_limit_is_counted_not_kept() {
        assert_eq!(
            pieces(
                Framing::Lines,
                4,
                &[b"12345", b"678\nok\n", b"1234567890\n"]
            ),
            ["<8 bytes>", "ok", "<10 bytes>"]
        );
        assert_eq!(pieces(Framing::Whole, 4, &[b"12", b"345"]), ["<5 bytes>"]);
        assert_eq!(
            pieces(Framing::Whole, 8, &[b"{\"a\"", b":1}"]),
            ["{\"a\":1}"]
        );
    }

    #[test]
    fn events_carry_their_data_and_id() {
        let stream: &[&[u8]] = &[
            b"id: 0\nretry: 3000\ndata:\n\n",
            b": a comment\nevent: message\nid: 1\ndata: {\"x\":",
            b"1}\n\ndata: {\"y\":\r\ndata: 2}\r\n\r\n",
            b"data: unfinished",
        ];
        assert_eq!(
            pieces(Framing::Sse, 100, stream),
            ["{\"x\":1} #1", "{\"y\":\n2}"]
        );
        assert_eq!(
            pieces(Framing::Sse, 4, &[b"id: 7\ndata: 12345\n\ndata: ok\n\n"]),
            ["<5 bytes>", "ok"]
        );
    }
}
