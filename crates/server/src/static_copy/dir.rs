//! A copy kept in a directory: only files whose bytes changed are written
//! (each to a temporary name, then renamed, so a static host serving the
//! directory never reads half a file), and files of an earlier copy that
//! this one no longer has are removed. What the copy wrote is listed in
//! `.upstate-copy`, so nothing else in the directory is ever touched.

use super::CopiedFile;
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// The list of files the last copy wrote.
const MANIFEST: &str = ".upstate-copy";

/// What a write did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct DirReport {
    pub written: usize,
    pub unchanged: usize,
    pub removed: usize,
}

/// A temporary file's own mark: instances sharing one copy folder (or two
/// publishes of one) never write the same temporary file, so neither
/// renames away the other's.
fn unique() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// Makes `dir` hold exactly `files` (and whatever else was there before
/// that an earlier copy did not write).
pub fn write_dir(dir: &Path, files: &[CopiedFile]) -> std::io::Result<DirReport> {
    std::fs::create_dir_all(dir)?;
    let mut report = DirReport::default();
    let mut now = BTreeSet::new();
    for f in files {
        let target = inside(dir, &f.path)?;
        now.insert(f.path.clone());
        if std::fs::read(&target).is_ok_and(|old| old == f.bytes) {
            report.unchanged += 1;
            continue;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let temp = target.with_file_name(format!(
            ".{}.{}.part",
            target
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default(),
            unique()
        ));
        std::fs::write(&temp, &f.bytes)?;
        std::fs::rename(&temp, &target)?;
        report.written += 1;
    }
    let before = std::fs::read_to_string(dir.join(MANIFEST)).unwrap_or_default();
    for old in before
        .lines()
        .filter(|l| !l.is_empty() && !now.contains(*l))
    {
        let Ok(target) = inside(dir, old) else {
            continue;
        };
        if std::fs::remove_file(&target).is_ok() {
            report.removed += 1;
            prune_empty(dir, target.parent());
        }
    }
    let list: String = now.iter().map(|p| format!("{p}\n")).collect();
    let temp = dir.join(format!("{MANIFEST}.{}.part", unique()));
    std::fs::write(&temp, list)?;
    std::fs::rename(temp, dir.join(MANIFEST))?;
    Ok(report)
}

/// `relative` under `dir`, refused if it would leave it.
fn inside(dir: &Path, relative: &str) -> std::io::Result<PathBuf> {
    let rel = Path::new(relative);
    if relative.is_empty() || !rel.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{relative:?} is not a path inside the copy"),
        ));
    }
    Ok(dir.join(rel))
}

/// Removes emptied directories from `from` up to (not including) `dir`.
fn prune_empty(dir: &Path, mut from: Option<&Path>) {
    while let Some(d) = from {
        if d == dir || !d.starts_with(dir) || std::fs::remove_dir(d).is_err() {
            return;
        }
        from = d.parent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, body: &str) -> CopiedFile {
        CopiedFile {
            path: path.into(),
            content_type: "text/html".into(),
            bytes: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn only_changes_are_written_and_only_our_files_removed() -> std::io::Result<()> {
        let dir = std::env::temp_dir().join(format!("upstate-copy-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join("theirs.txt"), "kept")?;
        let first = [file("s/a.html", "one"), file("s/a/incidents/1.html", "i")];
        let r = write_dir(&dir, &first)?;
        assert_eq!((r.written, r.unchanged, r.removed), (2, 0, 0));
        let second = [file("s/a.html", "two")];
        let r = write_dir(&dir, &second)?;
        assert_eq!((r.written, r.unchanged, r.removed), (1, 0, 1));
        assert_eq!(std::fs::read_to_string(dir.join("s/a.html"))?, "two");
        assert!(!dir.join("s/a").exists(), "emptied directories go too");
        assert_eq!(std::fs::read_to_string(dir.join("theirs.txt"))?, "kept");
        let r = write_dir(&dir, &second)?;
        assert_eq!((r.written, r.unchanged, r.removed), (0, 1, 0));
        assert!(write_dir(&dir, &[file("../out.html", "x")]).is_err());
        std::fs::remove_dir_all(&dir)
    }
}
