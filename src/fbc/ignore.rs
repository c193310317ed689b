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
///
/// Follows Go's chunk loop (`path/filepath/match.go`): the pattern is
/// cut into chunks, each after a run of stars, and each chunk commits to
/// the first place it matches (the last chunk to a place that ends the
/// name). No backtracking, so matching takes at most
/// `O(pattern × name)` steps whatever the input.
pub fn go_match(pattern: &str, name: &str) -> Option<bool> {
    let pattern: Vec<char> = pattern.chars().collect();
    let mut p: &[char] = &pattern;
    let name: Vec<char> = name.chars().collect();
    let mut n: &[char] = &name;
    'pattern: while !p.is_empty() {
        let (star, chunk, rest) = scan_chunk(p);
        p = rest;
        if star && chunk.is_empty() {
            // A trailing star matches the rest unless it holds a `/`.
            return Some(!n.contains(&'/'));
        }
        let (t, ok) = match_chunk(chunk, n)?;
        if ok && (t.is_empty() || !p.is_empty()) {
            n = t;
            continue;
        }
        if star {
            // Skip i+1 characters, never a `/`.
            let mut i = 0;
            while i < n.len() && n[i] != '/' {
                let (t, ok) = match_chunk(chunk, &n[i + 1..])?;
                // The last chunk must end the name.
                if ok && (p.is_empty() && !t.is_empty()) {
                    i += 1;
                    continue;
                }
                if ok {
                    n = t;
                    continue 'pattern;
                }
                i += 1;
            }
        }
        // No match: Go still reports a malformed rest of the pattern.
        while !p.is_empty() {
            let (_, chunk, rest) = scan_chunk(p);
            p = rest;
            match_chunk(chunk, &[])?;
        }
        return Some(false);
    }
    Some(n.is_empty())
}

/// Go's `scanChunk`: the leading stars, the chunk up to the next star
/// outside a class, and the rest.
fn scan_chunk(mut p: &[char]) -> (bool, &[char], &[char]) {
    let mut star = false;
    while p.first() == Some(&'*') {
        p = &p[1..];
        star = true;
    }
    let mut in_range = false;
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            '\\' if i + 1 < p.len() => i += 1,
            '[' => in_range = true,
            ']' => in_range = false,
            '*' if !in_range => break,
            _ => {}
        }
        i += 1;
    }
    (star, &p[..i], &p[i..])
}

/// Go's `matchChunk`: the rest of `s` after `chunk` matched its start and
/// whether it did; `None` for a malformed chunk (checked to its end even
/// after a mismatch, as Go does).
fn match_chunk<'a>(mut chunk: &[char], mut s: &'a [char]) -> Option<(&'a [char], bool)> {
    let mut failed = false;
    while let Some(&c) = chunk.first() {
        if !failed && s.is_empty() {
            failed = true;
        }
        match c {
            '[' => {
                let mut r = '\0';
                if !failed {
                    r = s[0];
                    s = &s[1..];
                }
                chunk = &chunk[1..];
                let negated = chunk.first() == Some(&'^');
                if negated {
                    chunk = &chunk[1..];
                }
                let mut hit = false;
                let mut ranges = 0;
                loop {
                    if chunk.first() == Some(&']') && ranges > 0 {
                        chunk = &chunk[1..];
                        break;
                    }
                    let (lo, rest) = class_char(chunk)?;
                    chunk = rest;
                    let mut hi = lo;
                    if chunk.first() == Some(&'-') {
                        let (h, rest) = class_char(&chunk[1..])?;
                        hi = h;
                        chunk = rest;
                    }
                    if lo <= r && r <= hi {
                        hit = true;
                    }
                    ranges += 1;
                }
                if hit == negated {
                    failed = true;
                }
            }
            '?' => {
                if !failed {
                    if s[0] == '/' {
                        failed = true;
                    }
                    s = &s[1..];
                }
                chunk = &chunk[1..];
            }
            _ => {
                if c == '\\' {
                    chunk = &chunk[1..];
                    if chunk.is_empty() {
                        return None;
                    }
                }
                if !failed {
                    if chunk[0] != s[0] {
                        failed = true;
                    }
                    s = &s[1..];
                }
                chunk = &chunk[1..];
            }
        }
    }
    if failed {
        Some((&[], false))
    } else {
        Some((s, true))
    }
}

/// Go's `getEsc`: one character of a class (`\` escapes it); `None` for
/// a `-` or `]` where a character belongs, or a class that never ends.
fn class_char(chunk: &[char]) -> Option<(char, &[char])> {
    let mut chunk = chunk;
    match chunk.first() {
        None | Some('-') | Some(']') => return None,
        Some('\\') => {
            chunk = &chunk[1..];
        }
        _ => {}
    }
    let (&c, rest) = chunk.split_first()?;
    if rest.is_empty() {
        return None;
    }
    Some((c, rest))
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
        // Cases of Go's own match_test.go table.
        assert_eq!(go_match("a*b*c*d*e*/f", "axbxcxdxe/f"), Some(true));
        assert_eq!(go_match("a*b*c*d*e*/f", "axbxcxdxexxx/f"), Some(true));
        assert_eq!(go_match("a*b*c*d*e*/f", "axbxcxdxe/xxx/f"), Some(false));
        assert_eq!(go_match("a*b*c*d*e*/f", "axbxcxdxexxx/fff"), Some(false));
        assert_eq!(go_match("a*b?c*x", "abxbbxdbxebxczzx"), Some(true));
        assert_eq!(go_match("a*b?c*x", "abxbbxdbxebxczzy"), Some(false));
        assert_eq!(go_match("ab[c]", "abc"), Some(true));
        assert_eq!(go_match("ab[b-d]", "abc"), Some(true));
        assert_eq!(go_match("ab[e-g]", "abc"), Some(false));
        assert_eq!(go_match("ab[^c]", "abc"), Some(false));
        assert_eq!(go_match("ab[^e-g]", "abc"), Some(true));
        assert_eq!(go_match("a\\*b", "a*b"), Some(true));
        assert_eq!(go_match("a\\*b", "ab"), Some(false));
        assert_eq!(go_match("a?b", "a☺b"), Some(true));
        assert_eq!(go_match("a[^a]b", "a☺b"), Some(true));
        assert_eq!(go_match("[\\-]", "-"), Some(true));
        assert_eq!(go_match("[x\\-]", "z"), Some(false));
        assert_eq!(go_match("[]a]", "]"), None);
        assert_eq!(go_match("[-]", "-"), None);
        assert_eq!(go_match("[x-]", "x"), None);
        assert_eq!(go_match("[a-b-c]", "a"), None);
        assert_eq!(go_match("[-x]", "a"), None);
        assert_eq!(go_match("[", "a"), None);
        assert_eq!(go_match("[^", "a"), None);
        assert_eq!(go_match("[^bc", "a"), None);
        assert_eq!(go_match("a[", "a"), None);
        assert_eq!(go_match("a[", "ab"), None);
        assert_eq!(go_match("a[", "x"), None);
        assert_eq!(go_match("a/b[", "x"), None);
        assert_eq!(go_match("*x", "xxx"), Some(true));
        assert_eq!(go_match("\\", "a"), None);
    }

    #[test]
    fn go_filepath_match_takes_linear_time() {
        // Each star used to try every skip length, recursively: this
        // pair took exponential time (hours). Go's chunk loop commits to
        // the first match of each chunk and answers at once.
        let pattern = format!("{}*b", "*a".repeat(15));
        let name = "a".repeat(200);
        assert_eq!(go_match(&pattern, &name), Some(false));
        assert_eq!(go_match(&pattern, &format!("{name}b")), Some(true));
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
