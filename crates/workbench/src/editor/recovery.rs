//! Never losing typed text: atomic file writes, the recovery copy of an
//! unsaved buffer kept in the user data dir, and the disk stamp that tells
//! when a file changed under the editor.

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
    original: PathBuf,
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

impl Recovery {
    /// The recovery slot of `file` under `data_dir/recovery/`, named by the
    /// first 16 hex digits of the SHA-256 of the file's canonical path.
    pub fn for_file(file: &Path, data_dir: &Path) -> Recovery {
        let original = canonical(file);
        let digest = Sha256::digest(original.to_string_lossy().as_bytes());
        let key = &hex::encode(digest)[..16];
        let dir = data_dir.join("recovery");
        Recovery {
            text_path: dir.join(format!("{key}.yml")),
            meta_path: dir.join(format!("{key}.json")),
            original,
        }
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

    /// Deletes the copy (after a save, a discard or a clean quit).
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.text_path);
        let _ = std::fs::remove_file(&self.meta_path);
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

    #[test]
    fn formats_times_in_utc() {
        assert_eq!(format_time(0), "1970-01-01 00:00 UTC");
    }
}
