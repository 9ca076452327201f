//! Never losing typed text: atomic file writes, the recovery copy of an
//! unsaved buffer kept in the user data dir, and the disk stamp that tells
//! when a file changed under the editor.
//!
//! A file's copy has one writer: the workbench that holds the file's
//! advisory lock (`locks/recovery-KEY.lock` in the data dir, held as long
//! as it runs, released by the OS when it ends however it ends). Only the
//! holder offers a copy found at start as a crash's; a second workbench on
//! the same file keeps its own copy beside it (`KEY-PID.yml`, locked the
//! same way), and a copy whose writer is gone is offered like the file's.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

/// Writes `bytes` to `path` so that readers see the old file or the new one,
/// never half of either: a temporary file in the same directory, flushed to
/// disk, then renamed over the target. An existing file's permissions are
/// kept, and a symbolic link stays a link: the file it points to is replaced.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let resolved;
    let path = if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        resolved = path.canonicalize()?;
        resolved.as_path()
    } else {
        path
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let tmp = dir.join(format!(".{name}.pipewright-{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        if let Ok(meta) = std::fs::metadata(path) {
            file.set_permissions(meta.permissions())?;
        }
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// What the editor last knew of the file on disk: enough to notice another
/// program rewriting it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiskStamp {
    modified: Option<SystemTime>,
    len: u64,
}

impl DiskStamp {
    /// The stamp of `path` now; `None` when there is no such file.
    pub fn of(path: &Path) -> Option<DiskStamp> {
        let meta = std::fs::metadata(path).ok()?;
        Some(DiskStamp {
            modified: meta.modified().ok(),
            len: meta.len(),
        })
    }
}

/// Where the recovery copy of one file lives, and what it says.
#[derive(Debug, Clone)]
pub struct Recovery {
    text_path: PathBuf,
    meta_path: PathBuf,
    /// The advisory lock whose holder writes this copy.
    lock_path: PathBuf,
    original: PathBuf,
    /// The lock, held while this session may write the copy (shared by
    /// the clones of this value; released when the last goes).
    lock: Option<std::sync::Arc<std::fs::File>>,
    /// Another live workbench holds the file's own copy: its process id
    /// (0 when it did not say), and this is a copy of this session's own.
    beside: Option<u32>,
}

/// A recovery copy found on disk.
#[derive(Debug, Clone, PartialEq)]
pub struct Recovered {
    pub text: String,
    /// When it was written, in seconds since the Unix epoch.
    pub saved_at: u64,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Meta {
    path: PathBuf,
    saved_at: u64,
}

/// The path as the OS resolves it, also for a file that does not exist yet.
fn canonical(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    match (abs.parent(), abs.file_name()) {
        (Some(dir), Some(name)) => dir
            .canonicalize()
            .map(|d| d.join(name))
            .unwrap_or_else(|_| abs.clone()),
        _ => abs,
    }
}

/// What taking a lock came to.
enum Locked {
    /// Held by this process now.
    Held(std::fs::File),
    /// Another process holds it.
    Elsewhere,
    /// Locks cannot be had here (no data dir to write, a file system
    /// without them): no one can tell who writes, as before locks.
    Unavailable,
}

/// Takes the advisory lock at `path` without waiting, and writes this
/// process's id into it for whoever finds it held.
fn take_lock(path: &Path) -> Locked {
    use std::io::{Seek, Write};
    let dir_made = path
        .parent()
        .is_none_or(|d| std::fs::create_dir_all(d).is_ok());
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path);
    let Ok(mut file) = file.ok().filter(|_| dir_made).ok_or(()) else {
        return Locked::Unavailable;
    };
    match file.try_lock() {
        Ok(()) => {
            let _ = file.set_len(0);
            let _ = file.rewind();
            let _ = write!(file, "{}", std::process::id());
            Locked::Held(file)
        }
        Err(std::fs::TryLockError::WouldBlock) => Locked::Elsewhere,
        Err(std::fs::TryLockError::Error(_)) => Locked::Unavailable,
    }
}

impl Recovery {
    /// The recovery slot of `file` under `data_dir/recovery/`, named by the
    /// first 16 hex digits of the SHA-256 of the file's canonical path (its
    /// key). It holds no lock: [`Recovery::claim`] is how a workbench
    /// takes it.
    pub fn for_file(file: &Path, data_dir: &Path) -> Recovery {
        let original = canonical(file);
        let digest = Sha256::digest(original.to_string_lossy().as_bytes());
        let key = &hex::encode(digest)[..16];
        Recovery::slot(data_dir, key, original)
    }

    /// Slot `name` (a file's key, or `KEY-PID`) of the data dir.
    fn slot(data_dir: &Path, name: &str, original: PathBuf) -> Recovery {
        let dir = data_dir.join("recovery");
        Recovery {
            text_path: dir.join(format!("{name}.yml")),
            meta_path: dir.join(format!("{name}.json")),
            lock_path: data_dir.join("locks").join(format!("recovery-{name}.lock")),
            original,
            lock: None,
            beside: None,
        }
    }

    /// The slot this session writes `file`'s copy to: the file's own when
    /// its lock can be taken (held from now on), else, while another
    /// workbench holds it, a slot of this session's own beside it
    /// ([`Recovery::beside`] says whose the file's is).
    pub fn claim(file: &Path, data_dir: &Path) -> Recovery {
        let mut own = Recovery::for_file(file, data_dir);
        match take_lock(&own.lock_path) {
            Locked::Held(f) => own.lock = Some(std::sync::Arc::new(f)),
            Locked::Unavailable => {}
            Locked::Elsewhere => {
                let holder = std::fs::read_to_string(&own.lock_path)
                    .ok()
                    .and_then(|t| t.trim().parse().ok())
                    .unwrap_or(0);
                let name = format!("{}-{}", own.key(), std::process::id());
                let mut mine = Recovery::slot(data_dir, &name, own.original.clone());
                if let Locked::Held(f) = take_lock(&mine.lock_path) {
                    mine.lock = Some(std::sync::Arc::new(f));
                }
                mine.beside = Some(holder);
                return mine;
            }
        }
        own
    }

    /// A slot of this session's own beside this one (`KEY-PID`, locked
    /// the same way): where it writes once the copy here is to be kept
    /// for the next start.
    pub fn beside_self(&self) -> Recovery {
        let data = self
            .text_path
            .parent()
            .and_then(Path::parent)
            .unwrap_or(Path::new("."));
        let name = format!("{}-{}", self.key(), std::process::id());
        let mut mine = Recovery::slot(data, &name, self.original.clone());
        if let Locked::Held(f) = take_lock(&mine.lock_path) {
            mine.lock = Some(std::sync::Arc::new(f));
        }
        mine.beside = Some(std::process::id());
        mine
    }

    /// The process id of the live workbench that holds the file's own copy
    /// when this is a slot beside it (0: it did not say).
    pub fn beside(&self) -> Option<u32> {
        self.beside
    }

    /// The slot's name: the file's key, or `KEY-PID` beside it.
    fn key(&self) -> String {
        self.text_path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// The copies kept beside the file's own by workbenches that are gone
    /// (their lock is free): crashes' copies too. Only for the file's own
    /// slot (a slot beside it finds none).
    pub fn orphans(&self) -> Vec<Recovery> {
        if self.beside.is_some() {
            return Vec::new();
        }
        let Some(dir) = self.text_path.parent() else {
            return Vec::new();
        };
        let Some(data) = dir.parent() else {
            return Vec::new();
        };
        let prefix = format!("{}-", self.key());
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(stem) = name.strip_suffix(".yml").filter(|s| s.starts_with(&prefix)) else {
                continue;
            };
            let slot = Recovery::slot(data, stem, self.original.clone());
            // Its writer still runs: not a crash's copy.
            if let Locked::Elsewhere = take_lock(&slot.lock_path) {
                continue;
            }
            out.push(slot);
        }
        out
    }

    /// Where the copy of the text is written.
    pub fn text_path(&self) -> &Path {
        &self.text_path
    }

    /// Writes the buffer as the recovery copy (atomically, text first so a
    /// crash between the two leaves a usable copy).
    pub fn write(&self, text: &str) -> std::io::Result<()> {
        if let Some(dir) = self.text_path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        atomic_write(&self.text_path, text.as_bytes())?;
        let saved_at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let meta = Meta {
            path: self.original.clone(),
            saved_at,
        };
        let json = serde_json::to_vec_pretty(&meta).map_err(std::io::Error::other)?;
        atomic_write(&self.meta_path, &json)
    }

    /// The copy, if one exists. Without its side file the copy's own
    /// modification time stands in for when it was saved.
    pub fn read(&self) -> Option<Recovered> {
        let text = std::fs::read_to_string(&self.text_path).ok()?;
        let saved_at = std::fs::read(&self.meta_path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Meta>(&b).ok())
            .map(|m| m.saved_at)
            .or_else(|| {
                std::fs::metadata(&self.text_path)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                    .map(|d| d.as_secs())
            })
            .unwrap_or(0);
        Some(Recovered { text, saved_at })
    }

    /// The copy to offer at open: the newest of the slot's own and those a
    /// gone workbench kept beside it, when it differs from the file `text`
    /// (one equal to it is deleted: nothing was lost). None for a slot kept
    /// beside a live workbench's.
    pub fn offer(&self, text: &str) -> Option<(Recovery, Recovered)> {
        if self.beside().is_some() {
            return None;
        }
        let mut best: Option<(Recovery, Recovered)> = None;
        for r in std::iter::once(self.clone()).chain(self.orphans()) {
            match r.read() {
                Some(found) if found.text == text => r.remove(),
                Some(found)
                    if best
                        .as_ref()
                        .is_none_or(|(_, b)| found.saved_at > b.saved_at) =>
                {
                    best = Some((r, found));
                }
                _ => {}
            }
        }
        best
    }

    /// Deletes the copy (after a save, a discard or a clean quit); a slot
    /// beside the file's own goes with its lock file (no one else takes
    /// that name). The file's own lock file stays: another workbench may
    /// be waiting to take it.
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.text_path);
        let _ = std::fs::remove_file(&self.meta_path);
        if self.key().contains('-') {
            let _ = std::fs::remove_file(&self.lock_path);
        }
    }
}

/// `2026-11-22 11:48 UTC` for a time in seconds since the Unix epoch.
pub fn format_time(secs: u64) -> String {
    let t = time::OffsetDateTime::from_unix_timestamp(i64::try_from(secs).unwrap_or(0))
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02} UTC",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_keeps_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.yml");
        std::fs::write(&p, "old").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        }
        atomic_write(&p, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o640);
        }
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
    }

    #[cfg(unix)]
    #[test]
    fn atomic_write_through_a_symlink_keeps_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.yml");
        let link = dir.path().join("link.yml");
        std::fs::write(&target, "old").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        atomic_write(&link, b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    }

    #[test]
    fn recovery_slot_is_stable_and_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("p.yml");
        let a = Recovery::for_file(&file, dir.path());
        let b = Recovery::for_file(&dir.path().join(".").join("p.yml"), dir.path());
        assert_eq!(a.text_path(), b.text_path());
        let name = a
            .text_path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert_eq!(name.len(), 16 + ".yml".len(), "{name}");
        assert!(a.read().is_none());
        a.write("pipe: []\n").unwrap();
        let got = a.read().unwrap();
        assert_eq!(got.text, "pipe: []\n");
        assert!(got.saved_at > 0);
        a.remove();
        assert!(a.read().is_none());
    }

    /// Review item 3: one writer a file. A second claim while the first
    /// is held writes beside it and says whose the file's copy is; once
    /// the first is gone, its copy and the one beside are free to offer.
    #[test]
    fn a_second_workbench_writes_beside_the_first_and_offers_nothing_of_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("p.yml");
        let first = Recovery::claim(&file, dir.path());
        assert_eq!(first.beside(), None);
        first.write("first\n").unwrap();
        let second = Recovery::claim(&file, dir.path());
        assert_eq!(second.beside(), Some(std::process::id()));
        assert_ne!(second.text_path(), first.text_path());
        second.write("second\n").unwrap();
        assert!(first.orphans().is_empty(), "the second still runs");
        // The second ends without a clean quit: its copy is an orphan.
        drop(second);
        let orphans = first.orphans();
        assert_eq!(orphans.len(), 1);
        assert_eq!(orphans[0].read().unwrap().text, "second\n");
        // The first ends too: the next claim is the file's own again.
        drop(first);
        let third = Recovery::claim(&file, dir.path());
        assert_eq!(third.beside(), None);
        assert_eq!(third.read().unwrap().text, "first\n");
    }

    #[test]
    fn formats_times_in_utc() {
        assert_eq!(format_time(0), "1970-01-01 00:00 UTC");
    }
}
