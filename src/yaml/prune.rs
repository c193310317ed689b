//! Pruning a block-style YAML text to the keys a reader needs, before parsing.
//!
//! A CSV is mostly text nobody building a graph reads: the install strategy,
//! `alm-examples`, the description, the icon. Scanning it costs far more than
//! everything else `graph check` does, so the lines of those subtrees are
//! blanked before the parser sees them. Blanked lines keep their line break,
//! so every line and column the parser reports is the one of the original
//! file.
//!
//! The pruner understands only plain block style: mappings whose keys are
//! plain scalars, one per line, and block sequences. Anything else on the
//! path to a selected key (flow collections, quoted or complex keys, merge
//! keys, tabs, directives) makes it give up, and the caller parses the whole
//! text instead. Inside a blanked subtree only indentation and where
//! multi-line scalars start and end are looked at: a quoted or block scalar
//! ends where the parser ends it (a quoted one at its closing quote, however
//! little its lines are indented), and a document marker inside a quoted
//! scalar, or a flow collection over several lines, makes it give up too.

/// What to do with one mapping key's value.
#[derive(Debug)]
pub enum Rule {
    /// Keep the key and its whole value.
    Keep,
    /// Keep the key; its value must be a block mapping, pruned by these rules.
    Select(&'static [(&'static str, Rule)]),
}

/// Blanks every subtree of `text` that `rules` does not select: in each
/// document, keys of the root mapping are looked up in `rules`, keys of a
/// selected mapping in that mapping's rules, and a key not listed is blanked
/// with its value. `None` when the text is not in the plain block style this
/// understands (see the module documentation); then nothing may be concluded
/// and the whole text has to be parsed.
///
/// The pruned text has the same lines as `text`. A syntax error inside a
/// blanked subtree goes unnoticed, which is the point: that text is not read.
pub fn prune(text: &str, rules: &'static [(&'static str, Rule)]) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    // Open selected mappings: the indentation of their keys and their rules.
    let mut stack: Vec<(usize, &'static [(&'static str, Rule)])> = Vec::new();
    // A selected key whose mapping's first line has not been seen yet.
    let mut pending: Option<(usize, &'static [(&'static str, Rule)])> = None;
    // Inside a kept (false) or blanked (true) value whose key is at this indentation.
    let mut inside: Option<(usize, bool)> = None;
    // The multi-line scalars of that value.
    let mut scalars = Scalars::default();
    if text.starts_with('\u{feff}') {
        return None;
    }
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let indent = body.bytes().take_while(|&b| b == b' ').count();
        let rest = &body[indent..];
        let no_content = rest.is_empty() || rest.starts_with('#');
        if let Some((key_indent, blank)) = inside {
            let continues = if scalars.quote.is_some() {
                // A quoted scalar goes on whatever the line looks like and
                // however little it is indented, as go-yaml reads it (see
                // `super::quoted`); a document marker at column 0 inside it
                // is an error, left to the parser.
                if indent == 0 && (is_marker(rest, "---") || is_marker(rest, "...")) {
                    return None;
                }
                scalars.continue_quote(body);
                true
            } else if scalars
                .block_parent
                .is_some_and(|p| rest.trim_start().is_empty() || indent > p)
            {
                true
            } else {
                scalars.block_parent = None;
                let inner = no_content
                    || indent > key_indent
                    || (indent == key_indent && is_sequence_entry(rest));
                if inner && !no_content {
                    if rest.starts_with('\t') {
                        return None;
                    }
                    scalars.node(rest, indent)?;
                }
                inner
            };
            if continues {
                if blank {
                    if line.ends_with('\n') {
                        out.push('\n');
                    }
                } else {
                    out.push_str(line);
                }
                continue;
            }
            inside = None;
        }
        if rest.starts_with('\t') {
            return None;
        }
        out.push_str(line);
        if no_content {
            continue;
        }
        if indent == 0 && (is_marker(rest, "---") || is_marker(rest, "...")) {
            let after = rest[3..].trim_start();
            if !(after.is_empty() || after.starts_with('#')) {
                return None;
            }
            stack.clear();
            pending = None;
            continue;
        }
        if let Some((key_indent, selected)) = pending.take() {
            if indent > key_indent {
                stack.push((indent, selected));
            }
        }
        if stack.is_empty() {
            if indent != 0 {
                return None;
            }
            stack.push((0, rules));
        }
        while stack.last().is_some_and(|&(i, _)| i > indent) {
            stack.pop();
        }
        let &(frame_indent, frame_rules) = stack.last()?;
        if frame_indent != indent {
            return None;
        }
        let (key, value) = split_key_line(rest)?;
        match frame_rules.iter().find(|(k, _)| *k == key).map(|(_, r)| r) {
            Some(Rule::Select(selected)) => {
                let value = value.trim_start();
                if !(value.is_empty() || value.starts_with('#')) {
                    return None;
                }
                pending = Some((indent, selected));
            }
            rule => {
                let blank = rule.is_none();
                if blank {
                    out.truncate(out.len() - line.len());
                    if line.ends_with('\n') {
                        out.push('\n');
                    }
                }
                inside = Some((indent, blank));
                scalars = Scalars::default();
                scalars.node(rest, indent)?;
            }
        }
    }
    Some(out)
}

/// The multi-line scalars open in the subtree being kept or blanked: its end
/// is where the parser finds it, not where a line inside a string happens to
/// look like a key.
#[derive(Debug, Default)]
struct Scalars {
    /// Inside a quoted scalar opened with this quote.
    quote: Option<u8>,
    /// Inside a block scalar (`|`, `>`) whose owner (key or `-`) starts at
    /// this column: it ends at the first non-empty line not indented past it.
    block_parent: Option<usize>,
}

impl Scalars {
    /// Scans a line (from `s`, at column `col`) that starts a node: `- `
    /// entries, a key, then its value. `None` for a flow collection that
    /// goes on past the line, or anything else not understood.
    fn node(&mut self, s: &str, col: usize) -> Option<()> {
        let (mut s, mut col) = (s, col);
        while is_sequence_entry(s) {
            let after = s[1..].trim_start_matches(' ');
            if after.is_empty() {
                return Some(());
            }
            col += s.len() - after.len();
            s = after;
            if s.starts_with('\t') {
                return None;
            }
        }
        let owner = col;
        // A quoted key: `"a b": value`.
        if let Some(&q) = s.as_bytes().first().filter(|q| **q == b'"' || **q == b'\'') {
            let Some(end) = close_quote(&s[1..], q) else {
                self.quote = Some(q);
                return Some(());
            };
            let after = s[1 + end..].trim_start_matches(' ');
            return match after.strip_prefix(':') {
                Some(v) if v.is_empty() || v.starts_with(' ') => self.value(v, owner),
                _ => Some(()),
            };
        }
        if b"[{".contains(&s.as_bytes().first().copied().unwrap_or(b' ')) {
            return self.value(s, owner);
        }
        // A plain key: the first `: ` (a plain scalar holds none); a ` #`
        // before it starts a comment.
        let bytes = s.as_bytes();
        for i in 0..bytes.len() {
            match bytes[i] {
                b'#' if i > 0 && bytes[i - 1] == b' ' => return Some(()),
                b':' if matches!(bytes.get(i + 1), None | Some(b' ')) => {
                    return self.value(&s[i + 1..], owner)
                }
                _ => {}
            }
        }
        Some(())
    }

    /// Scans a value that starts on a key's or entry's line.
    fn value(&mut self, v: &str, owner: usize) -> Option<()> {
        let mut v = v.trim_start_matches(' ');
        // Properties (`&anchor`, `!tag`) come before the value.
        while v.starts_with('&') || v.starts_with('!') {
            v = v.find(' ').map_or("", |i| v[i..].trim_start_matches(' '));
        }
        match v.as_bytes().first() {
            Some(&q @ (b'"' | b'\'')) if close_quote(&v[1..], q).is_none() => {
                self.quote = Some(q);
            }
            Some(b'|' | b'>') => {
                // The header: indicators, then nothing but a comment.
                let header =
                    v[1..].trim_start_matches(|c: char| c.is_ascii_digit() || c == '+' || c == '-');
                if !(header.is_empty() || header.starts_with(" #") || header.trim().is_empty()) {
                    return None;
                }
                self.block_parent = Some(owner);
            }
            Some(b'[' | b'{') => {
                // One-line flow collections only.
                let mut depth = 0i32;
                let mut quote = None;
                let b = v.as_bytes();
                let mut i = 0;
                while i < b.len() {
                    match (quote, b[i]) {
                        (Some(b'"'), b'\\') => i += 1,
                        (Some(q), c) if c == q => quote = None,
                        (Some(_), _) => {}
                        (None, c @ (b'"' | b'\'')) => quote = Some(c),
                        (None, b'[' | b'{') => depth += 1,
                        (None, b']' | b'}') => depth -= 1,
                        (None, b'#') if i > 0 && b[i - 1] == b' ' => break,
                        _ => {}
                    }
                    i += 1;
                }
                if depth != 0 || quote.is_some() {
                    return None;
                }
            }
            _ => {}
        }
        Some(())
    }

    /// Scans a continuation line of an open quoted scalar.
    fn continue_quote(&mut self, line: &str) {
        if let Some(q) = self.quote {
            if close_quote(line, q).is_some() {
                self.quote = None;
            }
        }
    }
}

/// The byte just past the quote closing a scalar whose text starts at `s`
/// (escapes: `\x` in double quotes, `''` in single quotes).
fn close_quote(s: &str, q: u8) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if q == b'"' && b[i] == b'\\' {
            i += 2;
            continue;
        }
        if b[i] == q {
            if q == b'\'' && b.get(i + 1) == Some(&b'\'') {
                i += 2;
                continue;
            }
            return Some(i + 1);
        }
        i += 1;
    }
    None
}

/// `---` or `...` alone or followed by a space.
fn is_marker(rest: &str, marker: &str) -> bool {
    rest.starts_with(marker) && matches!(rest.as_bytes().get(3), None | Some(b' ' | b'\t'))
}

/// A block sequence entry: `-` then a space or the end of the line.
fn is_sequence_entry(rest: &str) -> bool {
    rest.starts_with('-') && matches!(rest.as_bytes().get(1), None | Some(b' ' | b'\t'))
}

/// Splits `key: value` where the key is a plain scalar; `None` for anything
/// else (sequence entries, quoted, complex, merge or flow keys).
fn split_key_line(rest: &str) -> Option<(&str, &str)> {
    let first = *rest.as_bytes().first()?;
    if b"-?:,[]{}#&*!|>'\"%@`<".contains(&first) {
        return None;
    }
    let bytes = rest.as_bytes();
    let colon = (0..bytes.len())
        .find(|&i| bytes[i] == b':' && matches!(bytes.get(i + 1), None | Some(b' ' | b'\t')))?;
    let key = rest[..colon].trim_end_matches(' ');
    if key.contains(" #") || key.contains('\t') {
        return None;
    }
    Some((key, &rest[colon + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: &[(&str, Rule)] = &[
        ("kind", Rule::Keep),
        (
            "spec",
            Rule::Select(&[("version", Rule::Keep), ("skips", Rule::Keep)]),
        ),
    ];

    #[test]
    fn blanks_unselected_subtrees_and_keeps_lines() {
        let text = "kind: CSV\r\nmetadata:\n  name: x\nspec:\n  install:\n    deep: |\n      text: here\n\n  version: 1.0.0 # c\n  skips:\n  - a\n  - b\n  icon:\n  - data: x\n";
        let pruned = prune(text, RULES).expect("plain block style");
        assert_eq!(
            pruned,
            "kind: CSV\r\n\n\nspec:\n\n\n\n\n  version: 1.0.0 # c\n  skips:\n  - a\n  - b\n\n\n"
        );
        assert_eq!(pruned.lines().count(), text.lines().count());
    }

    #[test]
    fn documents_restart_at_the_root() {
        let text = "kind: A\nother: 1\n---\nother: 2\nkind: B\n...\n";
        assert_eq!(
            prune(text, RULES).as_deref(),
            Some("kind: A\n\n---\n\nkind: B\n...\n")
        );
    }

    #[test]
    fn gives_up_on_what_it_does_not_understand() {
        for text in [
            "{\"kind\": \"A\"}\n",
            "spec: {version: 1}\n",
            "spec: &a\n  version: 1\n",
            "spec:\n  <<: *base\n",
            "spec:\n  \"version\": 1\n",
            "spec:\n  ? version\n  : 1\n",
            "spec:\n\tversion: 1\n",
            "  kind: A\n",
            "spec:\n    version: 1\n  skips: []\n",
            "%YAML 1.2\n---\nkind: A\n",
            "--- !tag\nkind: A\n",
            "- kind: A\n",
            "\u{feff}kind: A\n",
        ] {
            assert_eq!(prune(text, RULES), None, "{text:?}");
        }
    }

    /// Multi-line scalars end where the parser ends them, not where a line
    /// of their text looks like a key.
    #[test]
    fn multi_line_scalars_are_followed() {
        let quoted = "spec:\n  icon: '[{\"a\":\n    1}]'\n  version: 1.0.0\n";
        assert_eq!(
            prune(quoted, RULES).as_deref(),
            Some("spec:\n\n\n  version: 1.0.0\n")
        );
        // A quoted line inside a block scalar is text.
        let block = "spec:\n  icon: |-\n    \"unbalanced\n\n    more\n  version: 1.0.0\n";
        assert_eq!(
            prune(block, RULES).as_deref(),
            Some("spec:\n\n\n\n\n  version: 1.0.0\n")
        );
        let escaped = "spec:\n  icon: \"a \\\" b\n    c\"\n  version: 1.0.0\n";
        assert_eq!(
            prune(escaped, RULES).as_deref(),
            Some("spec:\n\n\n  version: 1.0.0\n")
        );
        let doubled = "spec:\n  icon:\n  - x: 'it''s\n      open'\n  version: 1\n";
        assert_eq!(
            prune(doubled, RULES).as_deref(),
            Some("spec:\n\n\n\n  version: 1\n")
        );
        // A continuation line not indented past its key is still text (go-yaml
        // reads it); pruning must not read it as a key.
        let under = "spec:\n  icon: \"text\n  version: 9.9.9\n\"\n  version: 1\n";
        assert_eq!(
            prune(under, RULES).as_deref(),
            Some("spec:\n\n\n\n  version: 1\n")
        );
        let kept = "spec:\n  version: \"1.0\n  skips: []\"\n";
        assert_eq!(prune(kept, RULES).as_deref(), Some(kept));
        for text in [
            // A document marker inside a quoted scalar: the parser's verdict.
            "spec:\n  icon: \"text\n--- x\"\n",
            // A flow collection over several lines.
            "spec:\n  icon: [a,\n    b]\n  version: 1\n",
            // Not a block scalar header.
            "spec:\n  icon: >=1.0.0\n",
        ] {
            assert_eq!(prune(text, RULES), None, "{text:?}");
        }
    }

    #[test]
    fn keys_may_hold_colons_and_slashes() {
        assert_eq!(split_key_line("a:b/c: d"), Some(("a:b/c", " d")));
        assert_eq!(
            split_key_line("olm.skipRange: '>=1'"),
            Some(("olm.skipRange", " '>=1'"))
        );
        assert_eq!(split_key_line("key :"), Some(("key", "")));
        assert_eq!(split_key_line("no colon here"), None);
    }
}
