//! Quoted scalars whose continuation lines sit left of their block, and the
//! other indentation go-yaml does not check.
//!
//! go-yaml (a port of libyaml, behind `sigs.k8s.io/yaml`, opm, operator-sdk
//! and the API server) and PyYAML read a single- or double-quoted scalar's
//! continuation lines at any indentation: a quoted scalar ends at its closing
//! quote, and the leading white space of each continuation line is folded
//! away. Real CSVs depend on it, for instance an icon written as
//!
//! ```yaml
//! icon:
//! - base64data: "iVBOR...
//! ...="
//!   mediatype: image/png
//! ```
//!
//! saphyr-parser follows YAML 1.2, which wants those lines indented past the
//! enclosing block, and stops with "invalid indentation in quoted scalar",
//! pointing at the opening quote. [`pad_quoted`] then indents the continuation
//! lines of that one scalar with spaces at their start, which changes no value
//! (leading white space of a continuation line is never content) and keeps
//! every line where it was; [`Shifts`] records the spaces added per line so
//! that columns are reported as in the original text.
//!
//! The same goes for the other places where only saphyr-parser minds
//! indentation: [`pad_line`] for a line inside a flow collection or a tab at
//! the start of a quoted continuation line, [`untab_separator`] for a tab
//! between `:` and a value.

use std::collections::BTreeMap;

/// Spaces inserted at the start of lines: line (1-based) to count.
#[derive(Clone, Debug, Default)]
pub struct Shifts(BTreeMap<u32, u32>);

impl Shifts {
    /// The 1-based column in the original text of 1-based `column` on `line`
    /// of the padded text (a column inside the added spaces maps to 1).
    pub fn column(&self, line: u32, column: u32) -> u32 {
        match self.0.get(&line) {
            Some(&n) => column.saturating_sub(n).max(1),
            None => column,
        }
    }
}

/// Whether the line starting at byte `at` of `text` starts with a document
/// marker (`---` or `...` followed by white space or the end).
fn document_marker(text: &str, at: usize) -> bool {
    let rest = &text.as_bytes()[at..];
    (rest.starts_with(b"---") || rest.starts_with(b"..."))
        && rest
            .get(3)
            .is_none_or(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
}

/// Indents the continuation lines of the quoted scalar whose opening quote is
/// character `quote_index` of `text` to at least that quote's column, adding
/// to `shifts`. `None` when there is no quote there or no line needed
/// padding (then the parser's complaint is about something else).
///
/// A continuation line that starts with a document marker at column 0 is left
/// alone: go-yaml refuses it too.
pub fn pad_quoted(text: &str, quote_index: usize, shifts: &mut Shifts) -> Option<String> {
    let (q, quote) = text.char_indices().nth(quote_index)?;
    if quote != '"' && quote != '\'' {
        return None;
    }
    let line_start = text[..q].rfind(['\n', '\r']).map_or(0, |p| p + 1);
    let target = text[line_start..q].chars().count();
    let mut line = 1 + text[..q]
        .bytes()
        .enumerate()
        .filter(|&(i, b)| b == b'\n' || (b == b'\r' && text.as_bytes().get(i + 1) != Some(&b'\n')))
        .count() as u32;
    if target == 0 {
        return None;
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 64);
    let mut copied = 0;
    let mut changed = false;
    let mut i = q + 1;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\\' if quote == '"' => {
                // An escape: the next character is not the closing quote. An
                // escaped line break still starts a continuation line.
                if matches!(bytes.get(i + 1), Some(b'"' | b'\\')) {
                    i += 2;
                } else {
                    i += 1;
                }
                continue;
            }
            b'\'' if quote == '\'' => {
                if bytes.get(i + 1) == Some(&b'\'') {
                    i += 2;
                    continue;
                }
                break;
            }
            b'"' if quote == '"' => break,
            b'\n' | b'\r' => {
                i += if c == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                line += 1;
                // The continuation line starting at i.
                let blanks = bytes[i..]
                    .iter()
                    .take_while(|&&b| b == b' ' || b == b'\t')
                    .count();
                let end_of_line = matches!(bytes.get(i + blanks), None | Some(b'\n' | b'\r'));
                // A tab left of the target is refused as indentation; after padding
                // none is, so a padded line is never padded again.
                let has_tab = bytes[i..i + blanks.min(target)].contains(&b'\t');
                let short = blanks < target && !end_of_line;
                if (short || has_tab) && !document_marker(text, i) {
                    out.push_str(&text[copied..i]);
                    out.extend(std::iter::repeat_n(' ', target));
                    copied = i;
                    *shifts.0.entry(line).or_insert(0) += target as u32;
                    changed = true;
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    if !changed {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// Indents the line holding character `index` of `text` further, for a
/// place where go-yaml has no indentation rule but saphyr-parser wants the
/// line indented past its block: a tab at the start of a quoted scalar's
/// continuation line, or a line inside a flow collection (`[`, `{`). Leading
/// white space is not content there either. The block's indentation is not
/// known from the error, so the line gets 16 spaces, then as many again each
/// time the same line is refused. `None` past 1024 spaces or on a line that
/// starts with a document marker.
pub fn pad_line(text: &str, index: usize, shifts: &mut Shifts) -> Option<String> {
    let at = text
        .char_indices()
        .nth(index)
        .map_or(text.len(), |(i, _)| i);
    let start = text[..at].rfind(['\n', '\r']).map_or(0, |p| p + 1);
    if document_marker(text, start) {
        return None;
    }
    let line = 1 + text[..start]
        .bytes()
        .enumerate()
        .filter(|&(i, b)| b == b'\n' || (b == b'\r' && text.as_bytes().get(i + 1) != Some(&b'\n')))
        .count() as u32;
    let already = shifts.0.get(&line).copied().unwrap_or(0);
    if already >= 1024 {
        return None;
    }
    let pad = already.max(16);
    *shifts.0.entry(line).or_insert(0) += pad;
    let mut out = String::with_capacity(text.len() + pad as usize);
    out.push_str(&text[..start]);
    out.extend(std::iter::repeat_n(' ', pad as usize));
    out.push_str(&text[start..]);
    Some(out)
}

/// Turns the tabs between a `:` and the value at character `index` into
/// spaces (as many, so no column moves): go-yaml takes a tab after `:` as the
/// separator (`a:\tb`), saphyr-parser wants a space before a plain scalar.
/// `None` when no tab precedes `index`.
pub fn untab_separator(text: &str, index: usize) -> Option<String> {
    let at = text
        .char_indices()
        .nth(index)
        .map_or(text.len(), |(i, _)| i);
    let blanks = text[..at].len() - text[..at].trim_end_matches([' ', '\t']).len();
    let start = at - blanks;
    if !text[start..at].contains('\t') || !text[..start].ends_with(':') {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..start]);
    out.push_str(&" ".repeat(blanks));
    out.push_str(&text[at..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_the_continuation_lines_of_one_scalar() {
        let text = "icon:\n- base64data: \"abc\ndef\n\"\n  mediatype: x\n";
        let mut shifts = Shifts::default();
        let at = text.find('"').expect("quote");
        let out = pad_quoted(text, at, &mut shifts).expect("padded");
        let pad = " ".repeat(14);
        assert_eq!(
            out,
            format!("icon:\n- base64data: \"abc\n{pad}def\n{pad}\"\n  mediatype: x\n")
        );
        assert_eq!(shifts.column(3, 15), 1);
        assert_eq!(shifts.column(3, 16), 2);
        assert_eq!(shifts.column(3, 3), 1);
        assert_eq!(shifts.column(5, 3), 3);
        // Nothing to pad: None.
        assert!(pad_quoted(&out, at, &mut Shifts::default()).is_none());
    }

    #[test]
    fn escapes_quotes_and_markers() {
        // An escaped quote does not end the scalar; `''` in single quotes neither.
        let text = "a: \"x\\\"\ny\"\nb: 'it''s\nz'\n";
        let mut shifts = Shifts::default();
        let out = pad_quoted(text, 3, &mut shifts).expect("padded");
        assert_eq!(out, "a: \"x\\\"\n   y\"\nb: 'it''s\nz'\n");
        let at = out.chars().position(|c| c == '\'').expect("quote");
        let out = pad_quoted(&out, at, &mut shifts).expect("padded");
        assert_eq!(out, "a: \"x\\\"\n   y\"\nb: 'it''s\n   z'\n");
        // A document marker inside stays where it is.
        assert!(pad_quoted("a: \"x\n--- y\"\n", 3, &mut Shifts::default()).is_none());
        // Not a quote.
        assert!(pad_quoted("a: x\n", 3, &mut Shifts::default()).is_none());
    }

    #[test]
    fn tabs_after_a_colon_become_spaces() {
        assert_eq!(untab_separator("a:\t b\n", 4).as_deref(), Some("a:  b\n"));
        assert!(untab_separator("a: b\n", 3).is_none());
    }

    #[test]
    fn pads_one_line_more_each_time() {
        let mut shifts = Shifts::default();
        let text = "a: [x,\ny]\n";
        let once = pad_line(text, 7, &mut shifts).expect("padded");
        assert_eq!(once, format!("a: [x,\n{}y]\n", " ".repeat(16)));
        let twice = pad_line(&once, 7, &mut shifts).expect("padded");
        assert_eq!(twice, format!("a: [x,\n{}y]\n", " ".repeat(32)));
        assert_eq!(shifts.column(2, 33), 1);
        assert!(pad_line("a: [\n--- x]\n", 5, &mut Shifts::default()).is_none());
    }
}
