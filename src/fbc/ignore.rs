//! `.indexignore`: which files of a catalog directory are not catalog
//! files, with the semantics opm v1.73.0 gives them.
//!
//! opm (`alpha/declcfg/load.go`, `walkFiles`) collects the patterns of
//! every `.indexignore` under the root (github.com/joelanford/ignore), each
//! scoped to the directory that holds it, and matches each file's path
//! with go-git's gitignore matcher (`plumbing/format/gitignore`): the last
//! pattern that matches decides (`!pattern` includes, any other excludes);
//! a pattern without `/` matches any component of the path; one with `/`
//! matches component by component (`**` for any number of directories); a
//! trailing `/` makes a pattern match directories only. Components are
//! matched as Go's `filepath.Match` does. Directories are never matched
//! themselves (opm walks into every directory and asks only about files).

use std::path::Path;

/// The patterns of every `.indexignore` of a catalog, in walk order.
#[derive(Debug, Default, Clone)]
pub struct IndexIgnore {
    patterns: Vec<Pattern>,
}

/// The name of the ignore file.
pub const INDEX_IGNORE: &str = ".indexignore";

#[derive(Debug, Clone)]
struct Pattern {
    /// The components of the directory that holds the `.indexignore`.
    domain: Vec<String>,
    /// The pattern split at `/`.
    parts: Vec<String>,
    inclusion: bool,
    dir_only: bool,
    is_glob: bool,
}

impl IndexIgnore {
    /// Adds the patterns of one `.indexignore` whose directory, relative
    /// to the catalog root, has the components `domain`.
    pub fn add_file(&mut self, domain: &[String], text: &str) {
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            self.patterns.push(Pattern::parse(line, domain));
        }
    }

    /// Whether the file at `rel` (relative to the catalog root, `/`
    /// separated components) is excluded.
    pub fn excludes(&self, rel: &[String]) -> bool {
        self.patterns
            .iter()
            .rev()
            .find_map(|p| p.matches(rel))
            .is_some_and(|include| !include)
    }

    /// The components of `path` relative to `root`, as strings.
    pub fn components(root: &Path, path: &Path) -> Vec<String> {
        path.strip_prefix(root)
            .unwrap_or(path)
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect()
    }
}

impl Pattern {
    fn parse(line: &str, domain: &[String]) -> Pattern {
        let (inclusion, mut p) = match line.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        if !p.ends_with("\\ ") {
            p = p.trim_end_matches(' ');
        }
        let dir_only = p.ends_with('/');
        if dir_only {
            p = &p[..p.len() - 1];
        }
        Pattern {
            domain: domain.to_vec(),
            parts: p.split('/').map(str::to_string).collect(),
            inclusion,
            dir_only,
            is_glob: p.contains('/'),
        }
    }

    /// `Some(true)` for an inclusion that matches, `Some(false)` for an
    /// exclusion that matches, `None` when the pattern does not match.
    fn matches(&self, path: &[String]) -> Option<bool> {
        if path.len() <= self.domain.len() || !path.starts_with(&self.domain) {
            return None;
        }
        let rest = &path[self.domain.len()..];
        let hit = if self.is_glob {
            self.glob_match(rest)
        } else {
            self.simple_name_match(rest)
        };
        hit.then_some(self.inclusion)
    }

    /// A pattern without `/`: any component matches (a directory-only
    /// pattern not the last, which is the file).
    fn simple_name_match(&self, path: &[String]) -> bool {
        for (i, name) in path.iter().enumerate() {
            match go_match(&self.parts[0], name) {
                Some(true) => return !(self.dir_only && i == path.len() - 1),
                Some(false) => continue,
                None => return false,
            }
        }
        false
    }

    fn glob_match(&self, mut path: &[String]) -> bool {
        let mut matched = false;
        let mut can_traverse = false;
        for (i, part) in self.parts.iter().enumerate() {
            if part.is_empty() {
                can_traverse = false;
                continue;
            }
            if part == "**" {
                if i == self.parts.len() - 1 {
                    break;
                }
                can_traverse = true;
                continue;
            }
            if part.contains("**") || path.is_empty() {
                return false;
            }
            if can_traverse {
                can_traverse = false;
                while let Some((e, rest)) = path.split_first() {
                    path = rest;
                    match go_match(part, e) {
                        None => return false,
                        Some(true) => {
                            matched = true;
                            break;
                        }
                        Some(false) if path.is_empty() => matched = false,
                        Some(false) => {}
                    }
                }
            } else {
                if go_match(part, &path[0]) != Some(true) {
                    return false;
                }
                matched = true;
                path = &path[1..];
            }
        }
        // A file is never a directory: a directory-only pattern that
        // consumed the whole path does not match it.
        matched && !(self.dir_only && path.is_empty())
    }
}

/// Go's `path/filepath.Match` on one component: `*`, `?`, `[...]` (with
/// `^` negation and ranges) and `\` escapes; `None` for a malformed
/// pattern (Go's `ErrBadPattern`, which go-git counts as no match).
pub fn go_match(pattern: &str, name: &str) -> Option<bool> {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    match_from(&p, &n)
}

fn match_from(p: &[char], n: &[char]) -> Option<bool> {
    match p.first() {
        None => Some(n.is_empty()),
        Some('*') => {
            // Check the rest of the pattern is well formed even when the
            // name runs out, as Go does.
            let rest = &p[1..];
            for skip in 0..=n.len() {
                if n[..skip].contains(&'/') {
                    break;
                }
                match match_from(rest, &n[skip..]) {
                    Some(true) => return Some(true),
                    None => return None,
                    Some(false) => {}
                }
            }
            Some(false)
        }
        Some('?') => match n.first() {
            Some(&c) if c != '/' => match_from(&p[1..], &n[1..]),
            _ => valid_rest(&p[1..]),
        },
        Some('[') => {
            let (hit, len) = class(&p[1..], n.first().copied())?;
            match n.first() {
                Some(_) if hit => match_from(&p[1 + len..], &n[1..]),
                _ => valid_rest(&p[1 + len..]),
            }
        }
        Some('\\') => {
            let c = *p.get(1)?;
            match n.first() {
                Some(&x) if x == c => match_from(&p[2..], &n[1..]),
                _ => valid_rest(&p[2..]),
            }
        }
        Some(&c) => match n.first() {
            Some(&x) if x == c => match_from(&p[1..], &n[1..]),
            _ => valid_rest(&p[1..]),
        },
    }
}

/// `Some(false)` when the rest of a pattern is well formed, else `None`.
fn valid_rest(p: &[char]) -> Option<bool> {
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            '[' => {
                let (_, len) = class(&p[i + 1..], None)?;
                i += 1 + len;
            }
            '\\' => {
                p.get(i + 1)?;
                i += 2;
            }
            _ => i += 1,
        }
    }
    Some(false)
}

/// A character class after its `[`: whether `c` is in it, and how many
/// pattern characters it spans (through its `]`).
fn class(p: &[char], c: Option<char>) -> Option<(bool, usize)> {
    let mut i = 0;
    let negated = p.first() == Some(&'^');
    if negated {
        i += 1;
    }
    let mut hit = false;
    let mut first = true;
    loop {
        let ch = *p.get(i)?;
        if ch == ']' && !first {
            i += 1;
            break;
        }
        first = false;
        let (lo, next) = class_char(p, i)?;
        i = next;
        let mut hi = lo;
        if p.get(i) == Some(&'-') && p.get(i + 1).is_some_and(|&x| x != ']') {
            let (h, next) = class_char(p, i + 1)?;
            hi = h;
            i = next;
        }
        if let Some(c) = c {
            if lo <= c && c <= hi {
                hit = true;
            }
        }
    }
    let hit = c.is_some_and(|c| c != '/') && (hit != negated);
    Some((hit, i))
}

fn class_char(p: &[char], i: usize) -> Option<(char, usize)> {
    match *p.get(i)? {
        '\\' => Some((*p.get(i + 1)?, i + 2)),
        '-' | ']' if i == 0 => None,
        c => Some((c, i + 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(s: &str) -> Vec<String> {
        s.split('/').map(str::to_string).collect()
    }

    #[test]
    fn go_filepath_match() {
        assert_eq!(go_match("*.json", "a.json"), Some(true));
        assert_eq!(go_match("*.json", "a.yaml"), Some(false));
        assert_eq!(go_match("a?c", "abc"), Some(true));
        assert_eq!(go_match("[a-c]x", "bx"), Some(true));
        assert_eq!(go_match("[^a-c]x", "bx"), Some(false));
        assert_eq!(go_match("\\*", "*"), Some(true));
        assert_eq!(go_match("[", "a"), None);
        assert_eq!(go_match("*", ""), Some(true));
    }

    #[test]
    fn opm_load_test_patterns() {
        // The .indexignore of opm's own load_test.go validFS.
        let mut ig = IndexIgnore::default();
        ig.add_file(&[], "*\n!*.json\n!*.yaml\n\n*.clusterserviceversion.yaml");
        assert!(ig.excludes(&path("README.md")));
        assert!(!ig.excludes(&path("etcd.yaml")));
        assert!(!ig.excludes(&path("cockroachdb.json")));
        assert!(ig.excludes(&path("etcdoperator.v0.6.1.clusterserviceversion.yaml")));
        assert!(!ig.excludes(&path("sub/a.yaml")));
    }

    #[test]
    fn scoped_and_directory_patterns() {
        let mut ig = IndexIgnore::default();
        ig.add_file(&path("sub"), "*.md\ndocs/\nx/**/y.json");
        assert!(!ig.excludes(&path("a.md")));
        assert!(ig.excludes(&path("sub/a.md")));
        assert!(ig.excludes(&path("sub/docs/a.json")));
        assert!(!ig.excludes(&path("sub/docs")));
        assert!(ig.excludes(&path("sub/x/1/2/y.json")));
        assert!(!ig.excludes(&path("sub/x/1/2/z.json")));
    }
}
