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
//! text instead. What is inside a blanked subtree is never looked at, except
//! its indentation.

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
    if text.starts_with('\u{feff}') {
        return None;
    }
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let indent = body.bytes().take_while(|&b| b == b' ').count();
        let rest = &body[indent..];
        if rest.starts_with('\t') {
            return None;
        }
        let no_content = rest.is_empty() || rest.starts_with('#');
        if let Some((key_indent, blank)) = inside {
            if no_content
                || indent > key_indent
                || (indent == key_indent && is_sequence_entry(rest))
            {
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
            Some(Rule::Keep) => inside = Some((indent, false)),
            Some(Rule::Select(selected)) => {
                let value = value.trim_start();
                if !(value.is_empty() || value.starts_with('#')) {
                    return None;
                }
                pending = Some((indent, selected));
            }
            None => {
                out.truncate(out.len() - line.len());
                if line.ends_with('\n') {
                    out.push('\n');
                }
                inside = Some((indent, true));
            }
        }
    }
    Some(out)
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
