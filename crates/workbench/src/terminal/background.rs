//! What colour the terminal's background is, so that the default theme
//! can fit it: the terminal is asked with OSC 11 (`ESC ] 11 ; ? BEL`)
//! followed by a device-attributes query (DA1, `ESC [ c`), which every
//! terminal answers, after the first if it answers that. The DA1 answer
//! says no colour is coming, so a terminal that does not know OSC 11
//! costs no wait; one that answers neither costs [`WAIT`].

use std::io::{IsTerminal, Write};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

/// The longest the workbench waits for the answers before its first
/// frame.
const WAIT: Duration = Duration::from_millis(500);

/// The most bytes read while waiting (the two answers are a few dozen).
const MAX_READ: usize = 4096;

/// A colour as red, green and blue.
pub(crate) type Rgb = (u8, u8, u8);

/// The terminal's background, as the terminal reports it; `None` when it
/// does not say (or stdin and stdout are not both the terminal). Call it in
/// raw mode: the answers are read from stdin before anything else reads
/// it.
pub(crate) fn query() -> Option<Rgb> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() || !std::io::stdout().is_terminal() {
        return None;
    }
    let mut out = std::io::stdout();
    out.write_all(b"\x1b]11;?\x07\x1b[c").ok()?;
    out.flush().ok()?;
    let fd = stdin.as_fd();
    let until = Instant::now() + WAIT;
    let mut got = Vec::new();
    loop {
        if let Some(answer) = scan(&got) {
            return answer;
        }
        let left = until.checked_duration_since(Instant::now())?;
        let timeout = rustix::event::Timespec::try_from(left).ok()?;
        let mut fds = [rustix::event::PollFd::new(
            &fd,
            rustix::event::PollFlags::IN,
        )];
        if rustix::event::poll(&mut fds, Some(&timeout)).ok()? == 0 {
            return None;
        }
        let mut buf = [0u8; 256];
        let n = rustix::io::read(fd, &mut buf).ok()?;
        if n == 0 || got.len() + n > MAX_READ {
            return None;
        }
        got.extend_from_slice(&buf[..n]);
    }
}

/// What the bytes read so far say: `Some(Some(colour))` once the OSC 11
/// answer is whole, `Some(None)` once DA1 answered without it, `None`
/// while neither is whole.
fn scan(bytes: &[u8]) -> Option<Option<Rgb>> {
    if let Some(at) = find(bytes, b"\x1b]11;") {
        let rest = &bytes[at + 5..];
        let end = rest
            .iter()
            .position(|&b| b == 0x07)
            .or_else(|| find(rest, b"\x1b\\"));
        if let Some(end) = end {
            return Some(parse_rgb(&rest[..end]));
        }
    }
    // DA1: ESC [ ? digits and semicolons, then `c`.
    let mut from = 0;
    while let Some(at) = find(&bytes[from..], b"\x1b[?") {
        let start = from + at + 3;
        let tail = &bytes[start..];
        let body = tail
            .iter()
            .take_while(|b| b.is_ascii_digit() || **b == b';')
            .count();
        if tail.get(body) == Some(&b'c') {
            return Some(None);
        }
        from = start;
    }
    None
}

/// `rgb:RRRR/GGGG/BBBB` (1 to 4 hex digits a channel; `rgba:` with a
/// fourth) as 8 bits a channel.
fn parse_rgb(spec: &[u8]) -> Option<Rgb> {
    let text = std::str::from_utf8(spec).ok()?;
    let body = text
        .strip_prefix("rgb:")
        .or_else(|| text.strip_prefix("rgba:"))?;
    let mut channels = body.split('/').map(|c| {
        let v = u32::from_str_radix(c, 16).ok()?;
        let max = 16u32
            .checked_pow(u32::try_from(c.len()).ok()?)?
            .checked_sub(1)?;
        (1..=4).contains(&c.len()).then_some(())?;
        u8::try_from((v * 255 + max / 2) / max).ok()
    });
    Some((channels.next()??, channels.next()??, channels.next()??))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Whether a background reads as light: its WCAG luminance over one half
/// (white is 1, black 0).
pub(crate) fn is_light(bg: Rgb) -> bool {
    crate::theme::contrast::luminance(bg) > 0.5
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answers_are_read_as_tmux_and_xterm_give_them() {
        let white = b"\x1b]11;rgb:ffff/ffff/ffff\x07\x1b[?1;2c";
        assert_eq!(scan(white), Some(Some((255, 255, 255))));
        let st = b"\x1b]11;rgb:2b2b/303b/3b3b\x1b\\";
        assert_eq!(scan(st), Some(Some((0x2b, 0x30, 0x3b))));
        assert_eq!(scan(b"\x1b[?1;2c"), Some(None), "DA1 alone: no colour");
        assert_eq!(scan(b"\x1b]11;rgb:ff"), None, "not whole yet");
        assert_eq!(scan(b""), None);
        assert_eq!(parse_rgb(b"rgb:f/8/0"), Some((255, 136, 0)));
        assert_eq!(parse_rgb(b"rgba:ffff/0000/0000/ffff"), Some((255, 0, 0)));
        assert_eq!(parse_rgb(b"cmyk:1/2/3"), None);
        assert_eq!(parse_rgb(b"rgb:zz/00/00"), None);
        assert!(is_light((255, 255, 255)) && !is_light((0x2b, 0x30, 0x3b)));
    }
}
