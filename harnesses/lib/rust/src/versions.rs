//! The welcome's `dependencies`: the locked version of every crate the harness's Cargo.toml
//! depends on, read from its Cargo.lock, so that the report names what was judged and cannot drift.

use crate::{Object, Value};

/// `{crate: version}` for each crate of `manifest`'s `[dependencies]` (a Cargo.toml's text) as
/// `lock` (its Cargo.lock's text) pins it; "not locked" for one the lock lacks. A harness passes
/// `include_str!("../Cargo.toml")` and `include_str!("../Cargo.lock")`.
pub fn dependencies(manifest: &str, lock: &str) -> Object {
    let mut versions = Object::new();
    for name in dependency_names(manifest) {
        let version = locked_version(lock, &name).unwrap_or_else(|| "not locked".into());
        versions.insert(name, Value::String(version));
    }
    versions
}

fn dependency_names(manifest: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_dependencies = false;
    for line in manifest.lines().map(str::trim) {
        if let Some(section) = line.strip_prefix('[') {
            let section = section.trim_end_matches(']').trim();
            in_dependencies = section == "dependencies";
            if let Some(name) = section.strip_prefix("dependencies.") {
                names.push(name.trim_matches('"').to_string());
            }
        } else if in_dependencies && !line.starts_with('#') {
            if let Some((name, spec)) = line.split_once('=') {
                // A renamed dependency is locked under its package's name.
                let package = spec.split("package").nth(1).and_then(|rest| rest.split('"').nth(1));
                names.push(package.unwrap_or(name.trim().trim_matches('"')).to_string());
            }
        }
    }
    names
}

fn locked_version(lock: &str, name: &str) -> Option<String> {
    let mut lines = lock.lines().map(str::trim);
    while let Some(line) = lines.next() {
        if line == format!("name = \"{name}\"") {
            let version = lines.next()?.strip_prefix("version = ")?;
            return Some(version.trim_matches('"').to_string());
        }
    }
    None
}
