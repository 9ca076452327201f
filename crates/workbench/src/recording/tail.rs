//! A session file followed while `pipewright record` writes it, with no
//! file-watching dependency: its length is polled, the bytes added since
//! the last look are read (a bounded chunk at a time) and cut into whole
//! lines; a line still being written waits, bounded by the message limit.
//! A folder of recordings is followed by its newest session file, then by
//! each one that appears in it.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The most read from the file in one look, so one look stays short
/// whatever the recorder wrote meanwhile.
const CHUNK: usize = 1 << 20;

/// One look at the file.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Got {
    /// Whole lines added since the last look, each with its 1-based line
    /// number (blank lines are counted and left out).
    pub(crate) lines: Vec<(usize, Result<String, String>)>,
    /// The file was cut shorter or replaced: what was read before is not
    /// in it any more, and it is read again from its start.
    pub(crate) restarted: bool,
    /// More than one chunk was waiting: look again at once.
    pub(crate) more: bool,
}

/// A file read as it grows.
pub(crate) struct Tail {
    path: PathBuf,
    file: Option<File>,
    /// Bytes read so far.
    offset: u64,
    /// The bytes of a line whose end has not been written yet.
    partial: Vec<u8>,
    /// A line longer than the limit is being skipped to its end.
    skipping: bool,
    /// The longest line kept, in bytes.
    limit: usize,
    /// The number of the last line handed out.
    line: usize,
}

impl Tail {
    /// Follows `path` from its start; lines longer than `limit` bytes are
    /// reported, not kept.
    pub(crate) fn new(path: &Path, limit: usize) -> Tail {
        Tail {
            path: path.to_path_buf(),
            file: None,
            offset: 0,
            partial: Vec::new(),
            skipping: false,
            limit,
            line: 0,
        }
    }

    /// The file followed.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The bytes of the whole lines read so far.
    #[cfg(test)]
    pub(crate) fn complete_len(&self) -> u64 {
        self.offset - self.partial.len() as u64
    }

    /// Reads what was added since the last look. A file that does not exist
    /// (yet) has added nothing.
    pub(crate) fn look(&mut self) -> std::io::Result<Got> {
        let mut got = Got::default();
        if self.file.is_none() {
            match File::open(&self.path) {
                Ok(f) => self.file = Some(f),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(got),
                Err(e) => return Err(e),
            }
        }
        // The path's length, not the open file's: a file replaced under the
        // same name is a new session.
        let len = std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0);
        let replaced = match (self.file.as_ref(), std::fs::metadata(&self.path)) {
            (Some(f), Ok(now)) => f.metadata().is_ok_and(|open| !same_file(&open, &now)),
            _ => false,
        };
        if len < self.offset || replaced {
            *self = Tail::new(&self.path, self.limit);
            self.file = File::open(&self.path).ok();
            got.restarted = true;
        }
        let Some(file) = self.file.as_mut() else {
            return Ok(got);
        };
        let want = len.saturating_sub(self.offset);
        if want == 0 {
            return Ok(got);
        }
        let take = want.min(CHUNK as u64);
        got.more = want > take;
        file.seek(SeekFrom::Start(self.offset))?;
        let mut buf = Vec::with_capacity(take as usize);
        file.by_ref().take(take).read_to_end(&mut buf)?;
        self.offset += buf.len() as u64;
        self.cut(&buf, &mut got);
        Ok(got)
    }

    /// Cuts `bytes` into whole lines after what was waiting.
    fn cut(&mut self, mut bytes: &[u8], got: &mut Got) {
        while !bytes.is_empty() {
            let (piece, ended) = match bytes.iter().position(|&b| b == b'\n') {
                Some(i) => (&bytes[..i], true),
                None => (bytes, false),
            };
            bytes = &bytes[(piece.len() + usize::from(ended)).min(bytes.len())..];
            if !self.skipping {
                if self.partial.len() + piece.len() > self.limit {
                    self.skipping = true;
                    self.partial.clear();
                } else {
                    self.partial.extend_from_slice(piece);
                }
            }
            if !ended {
                break;
            }
            self.line += 1;
            let text = std::mem::take(&mut self.partial);
            if std::mem::take(&mut self.skipping) {
                got.lines.push((
                    self.line,
                    Err(format!(
                        "a line longer than {} bytes (the message limit); skipped",
                        self.limit
                    )),
                ));
                continue;
            }
            let text = match String::from_utf8(text) {
                Ok(t) => t,
                Err(_) => {
                    got.lines
                        .push((self.line, Err("not UTF-8; skipped".into())));
                    continue;
                }
            };
            let text = text.trim_end_matches('\r');
            if !text.trim().is_empty() {
                got.lines.push((self.line, Ok(text.to_owned())));
            }
        }
        if self.skipping {
            // What was skipped is not waiting.
            self.partial.clear();
        }
    }
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, _: &std::fs::Metadata) -> bool {
    true
}

/// A folder of session files, watched for new ones.
pub(crate) struct Folder {
    dir: PathBuf,
    /// The session files seen so far.
    seen: BTreeSet<PathBuf>,
    /// Nothing was listed yet: the first look picks the newest file.
    first: bool,
}

impl Folder {
    pub(crate) fn new(dir: &Path) -> Folder {
        Folder {
            dir: dir.to_path_buf(),
            seen: BTreeSet::new(),
            first: true,
        }
    }

    /// The file to follow now, if it changed: on the first look the newest
    /// session file, later one that appeared since (the newest of those).
    /// A folder that does not exist yet has none.
    pub(crate) fn look(&mut self) -> Option<PathBuf> {
        let listed = sessions_in(&self.dir);
        let fresh: Vec<&(SystemTime, PathBuf)> = listed
            .iter()
            .filter(|(_, p)| !self.seen.contains(p))
            .collect();
        let pick = if self.first || !fresh.is_empty() {
            fresh.last().map(|(_, p)| p.clone())
        } else {
            None
        };
        self.first = false;
        self.seen.extend(listed.into_iter().map(|(_, p)| p));
        pick
    }
}

/// The session files (`*.jsonl`) in `dir`, oldest first (by the time they
/// were last written, then by name).
pub(crate) fn sessions_in(dir: &Path) -> Vec<(SystemTime, PathBuf)> {
    let mut out: Vec<(SystemTime, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
        .map(|p| {
            let at = std::fs::metadata(&p)
                .and_then(|m| m.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            (at, p)
        })
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn lines(g: &Got) -> Vec<(usize, String)> {
        g.lines
            .iter()
            .map(|(n, l)| (*n, l.clone().unwrap_or_else(|e| format!("ERR {e}"))))
            .collect()
    }

    #[test]
    fn whole_lines_come_as_they_are_written_and_half_a_line_waits() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut t = Tail::new(&path, 64);
        assert_eq!(t.look().unwrap(), Got::default(), "no file yet");
        let mut f = File::create(&path).unwrap();
        f.write_all(b"one\n\ntw").unwrap();
        let g = t.look().unwrap();
        assert_eq!(lines(&g), [(1, "one".to_owned())]);
        assert_eq!(t.complete_len(), 5);
        f.write_all(b"o\r\nthree").unwrap();
        assert_eq!(lines(&t.look().unwrap()), [(3, "two".to_owned())]);
        f.write_all(b"\n").unwrap();
        assert_eq!(lines(&t.look().unwrap()), [(4, "three".to_owned())]);
        assert_eq!(t.complete_len(), 16);
        assert_eq!(t.look().unwrap(), Got::default());
    }

    #[test]
    fn a_line_over_the_limit_is_reported_and_skipped_without_being_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut f = File::create(&path).unwrap();
        let mut t = Tail::new(&path, 8);
        f.write_all(&[b'x'; 20]).unwrap();
        assert!(t.look().unwrap().lines.is_empty());
        assert!(t.partial.is_empty(), "nothing over the limit is kept");
        f.write_all(b"xx\nok\n").unwrap();
        let got = lines(&t.look().unwrap());
        assert_eq!(got.len(), 2);
        assert!(
            got[0].1.starts_with("ERR a line longer than 8 bytes"),
            "{got:?}"
        );
        assert_eq!(got[1], (2, "ok".to_owned()));
    }

    #[test]
    fn a_file_cut_shorter_is_read_again_from_its_start() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "a\nb\n").unwrap();
        let mut t = Tail::new(&path, 64);
        assert_eq!(t.look().unwrap().lines.len(), 2);
        std::fs::write(&path, "c\n").unwrap();
        let g = t.look().unwrap();
        assert!(g.restarted);
        assert_eq!(lines(&g), [(1, "c".to_owned())]);
    }

    #[test]
    fn a_folder_is_followed_by_its_newest_file_then_each_new_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut folder = Folder::new(&dir.path().join("recordings"));
        assert_eq!(folder.look(), None, "no folder yet");
        let rec = dir.path().join("recordings");
        std::fs::create_dir(&rec).unwrap();
        std::fs::write(rec.join("a.jsonl"), "").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(rec.join("b.jsonl"), "").unwrap();
        std::fs::write(rec.join("notes.txt"), "").unwrap();
        // The folder appeared after the first look: its files are new.
        assert_eq!(folder.look(), Some(rec.join("b.jsonl")));
        assert_eq!(folder.look(), None);
        std::fs::write(rec.join("c.jsonl"), "").unwrap();
        assert_eq!(folder.look(), Some(rec.join("c.jsonl")));

        let mut again = Folder::new(&rec);
        assert_eq!(again.look(), Some(rec.join("c.jsonl")), "the newest");
        assert_eq!(again.look(), None, "and no other until one appears");
    }
}
