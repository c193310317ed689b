//! A fast reader for the block-style YAML that manifests are written in.
//!
//! Profiles of `bundle validate` put half of all CPU in saphyr-parser's
//! scanner, which moves every token through a queue and copies every
//! scalar. Generated manifests (controller-gen, kustomize, operator-sdk) use a
//! small part of YAML: block mappings and sequences, plain and quoted
//! scalars, literal and folded block scalars, comments, and flow sequences
//! of scalars on one line (`[get, list]`). This module reads exactly that part straight from the text and
//! hands the builder the events saphyr-parser would give, spans included.
//!
//! Anything else (anchors, tags, flow mappings with content, nested flow
//! collections, tabs, JSON, errors of any kind) makes it give up
//! ([`Unsupported`]) before anything is returned, and the caller parses the
//! whole text with saphyr-parser, which stays the reference: the tests
//! compare both readers on every file of the shared corpus and on mutations
//! of them.

use super::{Sink, Span};
use saphyr_parser::{Event, ScalarStyle};
use std::borrow::Cow;

/// The text uses YAML this reader leaves to saphyr-parser (or is not YAML).
#[derive(Debug)]
pub(super) struct Unsupported(
    /// The line of this file that gave up (for the tests' statistics).
    #[allow(dead_code)]
    u32,
);

type R<T = ()> = Result<T, Unsupported>;

/// Longest implicit key YAML allows (1024 characters); longer keys are left
/// to saphyr-parser, which reports them.
const MAX_KEY: usize = 1000;

/// Reads `text` into `sink`, or gives up.
pub(super) fn parse(text: &str, sink: &mut Sink) -> R {
    if !plain_text(text) {
        return Err(Unsupported(line!()));
    }
    let mut r = Reader {
        b: text.as_bytes(),
        text,
        pos: 0,
        line: 1,
        line_start: 0,
        ascii: text.is_ascii(),
        ascii_line: std::cell::Cell::new((usize::MAX, false)),
        sink,
    };
    r.stream()
}

/// Whether the text holds no character that would need saphyr-parser's
/// rules: tabs, carriage returns, other controls, a byte-order mark, or
/// the Unicode line and paragraph separators.
fn plain_text(text: &str) -> bool {
    let b = text.as_bytes();
    if b.iter().any(|&c| (c < 0x20 && c != b'\n') || c == 0x7f) {
        return false;
    }
    text.is_ascii()
        || !["\u{85}", "\u{2028}", "\u{2029}", "\u{feff}"]
            .iter()
            .any(|s| memchr::memmem::find(b, s.as_bytes()).is_some())
}

fn is_sep(c: Option<u8>) -> bool {
    matches!(c, None | Some(b' ' | b'\n'))
}

struct Reader<'a, 's> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
    /// Line of `pos`, 1-based.
    line: u32,
    /// Byte offset where the line of `pos` starts.
    line_start: usize,
    ascii: bool,
    /// For a text that is not all ASCII: the start of the last line whose
    /// columns were asked, and whether that line is ASCII (most are, and
    /// their columns are byte offsets).
    ascii_line: std::cell::Cell<(usize, bool)>,
    sink: &'s mut Sink,
}

impl<'a> Reader<'a, '_> {
    fn at(&self, i: usize) -> Option<u8> {
        self.b.get(i).copied()
    }

    fn cur(&self) -> Option<u8> {
        self.at(self.pos)
    }

    /// Column (1-based, in characters) of byte `i` of the current line.
    fn col(&self, i: usize) -> u32 {
        let n = if self.ascii || self.line_is_ascii() {
            i - self.line_start
        } else {
            self.text[self.line_start..i].chars().count()
        };
        n as u32 + 1
    }

    fn line_is_ascii(&self) -> bool {
        let (start, ascii) = self.ascii_line.get();
        if start == self.line_start {
            return ascii;
        }
        let rest = &self.b[self.line_start..];
        let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
        let ascii = rest[..end].is_ascii();
        self.ascii_line.set((self.line_start, ascii));
        ascii
    }

    fn point(&self, i: usize) -> Span {
        Span::point(self.line, self.col(i))
    }

    /// The span of bytes `from..to` of the current line.
    fn span(&self, from: usize, to: usize) -> Span {
        Span {
            line: self.line,
            column: self.col(from),
            end_line: self.line,
            end_column: self.col(to),
        }
    }

    /// Where saphyr-parser places the end of the stream: the start of the
    /// line after the last one, whether or not the text ends with a newline.
    fn eof_point(&self) -> Span {
        if self.line_start < self.b.len() {
            Span::point(self.line + 1, 1)
        } else {
            Span::point(self.line, 1)
        }
    }

    fn emit(&mut self, event: Event<'a>, span: Span) -> R {
        self.sink
            .event(event, span)
            .map_err(|_| Unsupported(line!()))
    }

    fn scalar(&mut self, value: Cow<'a, str>, style: ScalarStyle, span: Span) -> R {
        self.emit(Event::Scalar(value, style, 0, None), span)
    }

    fn newline(&mut self) {
        self.pos += 1;
        self.line += 1;
        self.line_start = self.pos;
    }

    fn skip_spaces(&mut self) {
        while self.cur() == Some(b' ') {
            self.pos += 1;
        }
    }

    /// Moves to the next token: past spaces, line breaks and comments.
    fn skip_to_token(&mut self) {
        loop {
            match self.cur() {
                Some(b' ') => self.pos += 1,
                Some(b'\n') => self.newline(),
                Some(b'#') => {
                    self.pos = self.eol(self.pos);
                }
                _ => return,
            }
        }
    }

    /// After a scalar: only spaces, then a comment, a line break or the end.
    fn end_of_line(&mut self) -> R {
        let before = self.pos;
        self.skip_spaces();
        match self.cur() {
            None | Some(b'\n') => Ok(()),
            Some(b'#') if self.pos > before => Ok(()),
            _ => Err(Unsupported(line!())),
        }
    }

    /// Whether a `---` or `...` line starts at byte `i`.
    fn doc_marker(&self, i: usize) -> bool {
        i == self.line_start
            && (self.b[i..].starts_with(b"---") || self.b[i..].starts_with(b"..."))
            && is_sep(self.at(i + 3))
    }

    /// Whether the current token ends the block at `indent` (its column is at
    /// or left of it, or it is the end of the text or of the document).
    fn block_ends(&self, indent: i64) -> bool {
        self.pos >= self.b.len()
            || self.doc_marker(self.pos)
            || i64::from(self.col(self.pos)) - 1 <= indent
    }

    fn stream(&mut self) -> R {
        self.skip_to_token();
        if self.pos >= self.b.len() {
            return Ok(());
        }
        loop {
            if self.doc_marker(self.pos) {
                if self.b[self.pos] == b'.' {
                    return Err(Unsupported(line!()));
                }
                let marker = self.span(self.pos, self.pos + 3);
                self.emit(Event::DocumentStart(true), marker)?;
                self.pos += 3;
                self.end_of_line()?;
                self.skip_to_token();
                if self.pos >= self.b.len() {
                    let at = self.eof_point();
                    self.scalar(Cow::Borrowed(""), ScalarStyle::Plain, at)?;
                } else if self.doc_marker(self.pos) {
                    let next = self.span(self.pos, self.pos + 3);
                    self.scalar(Cow::Borrowed(""), ScalarStyle::Plain, next)?;
                } else {
                    self.root()?;
                }
            } else {
                // Only the first document may start without `---`: later
                // ones come after a marker (checked below).
                let at = self.point(self.pos);
                self.emit(Event::DocumentStart(false), at)?;
                self.root()?;
            }
            self.skip_to_token();
            if self.pos >= self.b.len() {
                let at = self.eof_point();
                return self.emit(Event::DocumentEnd, at);
            }
            if !self.doc_marker(self.pos) {
                return Err(Unsupported(line!()));
            }
            let at = self.span(self.pos, self.pos + 3);
            self.emit(Event::DocumentEnd, at)?;
        }
    }

    /// A document's root: a block mapping or sequence (top-level scalars and
    /// flow collections, JSON among them, are left to saphyr-parser).
    fn root(&mut self) -> R {
        let indent = i64::from(self.col(self.pos)) - 1;
        if self.cur() == Some(b'-') && is_sep(self.at(self.pos + 1)) {
            self.sequence(indent, false)
        } else if self.key_ahead() {
            self.mapping(indent)
        } else {
            Err(Unsupported(line!()))
        }
    }

    /// Whether the token at `pos` is an implicit key (`key:` on this line).
    fn key_ahead(&self) -> bool {
        let mut i = self.pos;
        match self.cur() {
            Some(q @ (b'"' | b'\'')) => {
                i += 1;
                loop {
                    match self.at(i) {
                        None | Some(b'\n') => return false,
                        Some(b'\\') if q == b'"' => i += 2,
                        Some(c) if c == q => {
                            if q == b'\'' && self.at(i + 1) == Some(b'\'') {
                                i += 2;
                            } else {
                                i += 1;
                                break;
                            }
                        }
                        Some(_) => i += 1,
                    }
                }
                while self.at(i) == Some(b' ') {
                    i += 1;
                }
                self.at(i) == Some(b':') && is_sep(self.at(i + 1))
            }
            _ => {
                let (_, stop) = self.plain_line(i);
                stop == Stop::Colon
            }
        }
    }

    /// Scans one line of a plain scalar from byte `i`: the end of its text
    /// (trailing spaces excluded) and what stopped it.
    fn plain_line(&self, mut i: usize) -> (usize, Stop) {
        let mut end = i;
        loop {
            match self.at(i) {
                None | Some(b'\n') => return (end, Stop::Eol),
                Some(b':') if is_sep(self.at(i + 1)) => return (end, Stop::Colon),
                Some(b' ') => {
                    if self.at(i + 1) == Some(b'#') {
                        return (end, Stop::Comment);
                    }
                    i += 1;
                }
                Some(_) => {
                    i += 1;
                    end = i;
                }
            }
        }
    }

    /// A block mapping whose first key is at `pos`, in column `indent` + 1.
    fn mapping(&mut self, indent: i64) -> R {
        let at = self.point(self.pos);
        self.emit(Event::MappingStart(0, None), at)?;
        loop {
            self.key()?;
            self.skip_spaces();
            if self.cur() != Some(b':') || !is_sep(self.at(self.pos + 1)) {
                return Err(Unsupported(line!()));
            }
            let colon = self.point(self.pos);
            self.pos += 1;
            self.skip_spaces();
            match self.cur() {
                None | Some(b'\n' | b'#') => self.node_below(indent, true, colon)?,
                Some(_) => self.inline_value(indent)?,
            }
            self.skip_to_token();
            if self.block_ends(indent - 1) {
                break;
            }
            if i64::from(self.col(self.pos)) - 1 != indent
                || (self.cur() == Some(b'-') && is_sep(self.at(self.pos + 1)))
            {
                return Err(Unsupported(line!()));
            }
        }
        let at = self.end_point(indent);
        self.emit(Event::MappingEnd, at)
    }

    /// Where a collection at `indent` that ends at the current token ends.
    /// At the end of a text whose last line has no line break,
    /// saphyr-parser closes the collections indented past that line's end
    /// there, and the others at the start of a line after it.
    fn end_point(&self, indent: i64) -> Span {
        if self.pos < self.b.len() || self.line_start >= self.b.len() {
            return self.token_point();
        }
        let c = self.col(self.b.len());
        if indent > i64::from(c) - 1 {
            Span::point(self.line, c)
        } else {
            Span::point(self.line + 1, 1)
        }
    }

    /// Where the current token (or the end of the text) is.
    fn token_point(&self) -> Span {
        if self.pos >= self.b.len() {
            self.eof_point()
        } else {
            self.point(self.pos)
        }
    }

    /// A mapping key on one line, plain or quoted.
    fn key(&mut self) -> R {
        let start = self.pos;
        match self.cur() {
            Some(b'"' | b'\'') => {
                let line = self.line;
                self.quoted(-1)?;
                if self.line != line {
                    // Keys stand on one line.
                    return Err(Unsupported(line!()));
                }
            }
            Some(c) if starts_plain(c, self.at(self.pos + 1)) => {
                let (end, stop) = self.plain_line(self.pos);
                if stop != Stop::Colon || end == start {
                    return Err(Unsupported(line!()));
                }
                let span = self.span(start, end);
                self.pos = end;
                let text = &self.text[start..end];
                self.scalar(Cow::Borrowed(text), ScalarStyle::Plain, span)?;
            }
            _ => return Err(Unsupported(line!())),
        }
        if self.pos - start > MAX_KEY {
            return Err(Unsupported(line!()));
        }
        Ok(())
    }

    /// The value of a `key:` or `-` with nothing after it on its line: a node
    /// on the following lines indented past `indent`, an indentless sequence
    /// (for a mapping value), or an empty scalar at `empty`.
    fn node_below(&mut self, indent: i64, indentless: bool, empty: Span) -> R {
        self.skip_to_token();
        let dash = self.cur() == Some(b'-') && is_sep(self.at(self.pos + 1));
        if self.block_ends(indent) {
            if indentless
                && dash
                && self.pos < self.b.len()
                && !self.doc_marker(self.pos)
                && i64::from(self.col(self.pos)) - 1 == indent
            {
                return self.sequence(indent, true);
            }
            return self.scalar(Cow::Borrowed(""), ScalarStyle::Plain, empty);
        }
        let col = i64::from(self.col(self.pos)) - 1;
        if dash {
            self.sequence(col, false)
        } else if self.key_ahead() {
            self.mapping(col)
        } else {
            self.inline_value(indent)
        }
    }

    /// A scalar (or empty flow collection) starting at `pos`, in a block at
    /// `indent`.
    fn inline_value(&mut self, indent: i64) -> R {
        match self.cur() {
            Some(b'|' | b'>') => self.block_scalar(indent),
            Some(b'"' | b'\'') => {
                self.quoted(indent)?;
                self.end_of_line()
            }
            Some(b'[' | b'{') => self.flow(indent),
            Some(c) if starts_plain(c, self.at(self.pos + 1)) => self.plain(indent),
            _ => Err(Unsupported(line!())),
        }
    }

    /// Where the item of a `-` whose next byte is `i` starts, as
    /// saphyr-parser places it: at the token after the `-` on its line, or
    /// at the end of that line (after a comment).
    fn after_dash(&self, i: usize) -> Span {
        self.point(self.past_comment(i))
    }

    /// The end of the line that holds byte `i` (its line break, or the end
    /// of the text).
    fn eol(&self, i: usize) -> usize {
        memchr::memchr(b'\n', &self.b[i..]).map_or(self.b.len(), |n| i + n)
    }

    /// Byte `i` moved past spaces and then a comment on the same line: where
    /// saphyr-parser ends the span of a quoted scalar or a closing bracket,
    /// and starts an item after `-`.
    fn past_comment(&self, mut i: usize) -> usize {
        while self.at(i) == Some(b' ') {
            i += 1;
        }
        if self.at(i) == Some(b'#') {
            i = self.eol(i);
        }
        i
    }

    /// A flow collection on one line: an empty `[]` or `{}`, or a sequence
    /// of scalars such as `[get, list]` or `['sleep', '3600']`.
    fn flow(&mut self, indent: i64) -> R {
        let seq = self.cur() == Some(b'[');
        let (open, close, end_byte) = if seq {
            (Event::SequenceStart(0, None), Event::SequenceEnd, b']')
        } else {
            (Event::MappingStart(0, None), Event::MappingEnd, b'}')
        };
        let start = self.span(self.pos, self.pos + 1);
        self.emit(open, start)?;
        self.pos += 1;
        self.skip_spaces();
        while seq && self.cur() != Some(end_byte) {
            let line = self.line;
            match self.cur() {
                Some(b'"' | b'\'') => {
                    self.quoted(indent)?;
                    if self.line != line {
                        return Err(Unsupported(line!()));
                    }
                }
                Some(c) if starts_plain(c, self.at(self.pos + 1)) => self.flow_plain()?,
                _ => return Err(Unsupported(line!())),
            }
            self.skip_spaces();
            match self.cur() {
                Some(b',') => {
                    self.pos += 1;
                    self.skip_spaces();
                }
                Some(b']') => {}
                _ => return Err(Unsupported(line!())),
            }
        }
        if self.cur() != Some(end_byte) {
            return Err(Unsupported(line!()));
        }
        let close_at = self.pos;
        self.pos += 1;
        self.end_of_line()?;
        let end = self.span(close_at, self.past_comment(close_at + 1));
        self.emit(close, end)
    }

    /// A plain scalar inside a flow sequence on one line: up to the next
    /// `,` or `]`, trailing spaces excluded.
    fn flow_plain(&mut self) -> R {
        let start = self.pos;
        let mut i = start;
        let mut end = start;
        loop {
            match self.at(i) {
                Some(b',' | b']') => break,
                Some(b' ') => i += 1,
                None | Some(b'\n' | b'[' | b'{' | b'}' | b'#' | b':') => {
                    return Err(Unsupported(line!()))
                }
                Some(_) => {
                    i += 1;
                    end = i;
                }
            }
        }
        let span = self.span(start, end);
        self.pos = end;
        let text = &self.text[start..end];
        self.scalar(Cow::Borrowed(text), ScalarStyle::Plain, span)
    }

    /// A block sequence whose first `-` is at `pos`, in column `indent` + 1;
    /// `indentless` when it is a mapping value at the mapping's own column.
    fn sequence(&mut self, indent: i64, indentless: bool) -> R {
        let at = if indentless {
            // saphyr-parser starts an indentless sequence where its first
            // item starts, or at the end of the first `-`'s line.
            self.after_dash(self.pos + 1)
        } else {
            self.point(self.pos)
        };
        self.emit(Event::SequenceStart(0, None), at)?;
        loop {
            self.pos += 1;
            self.skip_spaces();
            let empty = self.after_dash(self.pos);
            match self.cur() {
                None | Some(b'\n' | b'#') => self.node_below(indent, false, empty)?,
                Some(b'-') if is_sep(self.at(self.pos + 1)) => {
                    let col = i64::from(self.col(self.pos)) - 1;
                    self.sequence(col, false)?;
                }
                Some(_) if self.key_ahead() => {
                    let col = i64::from(self.col(self.pos)) - 1;
                    self.mapping(col)?;
                }
                Some(_) => self.inline_value(indent)?,
            }
            self.skip_to_token();
            if self.block_ends(indent - 1) {
                break;
            }
            let dash = self.cur() == Some(b'-') && is_sep(self.at(self.pos + 1));
            if i64::from(self.col(self.pos)) - 1 != indent {
                return Err(Unsupported(line!()));
            }
            if !dash {
                if indentless {
                    break;
                }
                return Err(Unsupported(line!()));
            }
        }
        let at = self.end_point(indent);
        self.emit(Event::SequenceEnd, at)
    }

    /// A plain scalar at `pos` in a block at `indent`; it may go on over
    /// lines indented past `indent`.
    fn plain(&mut self, indent: i64) -> R {
        let start = self.pos;
        let (start_line, start_col) = (self.line, self.col(start));
        let (mut end, mut stop) = self.plain_line(start);
        if stop == Stop::Colon {
            return Err(Unsupported(line!()));
        }
        let mut folded: Option<String> = None;
        let mut end_col = self.col(end);
        while stop == Stop::Eol && end < self.b.len() {
            // Look past empty lines for a continuation line.
            let mut i = self.eol(end);
            let mut breaks = 0usize;
            let (line_start, first) = loop {
                if i >= self.b.len() {
                    break (i, None);
                }
                let ls = i + 1;
                let mut j = ls;
                while self.at(j) == Some(b' ') {
                    j += 1;
                }
                match self.at(j) {
                    Some(b'\n') => {
                        breaks += 1;
                        i = j;
                    }
                    None => break (ls, None),
                    Some(c) => break (ls, Some((j, c))),
                }
            };
            let Some((j, c)) = first else { break };
            if (j - line_start) as i64 <= indent || c == b'#' {
                break;
            }
            // Any other character continues the scalar, indicators included.
            let line_end_stop = self.plain_line(j);
            if line_end_stop.1 == Stop::Colon {
                return Err(Unsupported(line!()));
            }
            let text = folded.get_or_insert_with(|| self.text[start..end].to_string());
            if breaks == 0 {
                text.push(' ');
            } else {
                text.extend(std::iter::repeat_n('\n', breaks));
            }
            text.push_str(&self.text[j..line_end_stop.0]);
            self.line += 1 + breaks as u32;
            self.line_start = line_start;
            (end, stop) = line_end_stop;
            end_col = self.col(end);
        }
        let span = Span {
            line: start_line,
            column: start_col,
            end_line: self.line,
            end_column: end_col,
        };
        self.pos = end;
        let value = match folded {
            Some(s) => Cow::Owned(s),
            None => Cow::Borrowed(&self.text[start..end]),
        };
        self.scalar(value, ScalarStyle::Plain, span)
    }

    /// A quoted scalar in a block at `indent`. Its line breaks fold as
    /// saphyr-parser folds them: a break is a space, each further empty
    /// line a newline, blanks around breaks are dropped, and an escaped
    /// break (`\` at the end of a line) joins the lines.
    fn quoted(&mut self, indent: i64) -> R {
        let start = self.pos;
        let (start_line, start_col) = (self.line, self.col(start));
        let q = self.b[start];
        let single = q == b'\'';
        let mut i = start + 1;
        // The value once it is no longer a slice of the text; `run` is
        // where the text not yet copied into it starts.
        let mut owned: Option<String> = None;
        let mut run = i;
        loop {
            if self.line != start_line {
                // A continuation line: saphyr-parser's checks (and the cases
                // go-yaml reads but saphyr-parser refuses, see `quoted.rs`).
                if self.doc_marker(i) || i64::from(self.col(i)) - 1 < indent {
                    return Err(Unsupported(line!()));
                }
            }
            let mut leading_blanks = false;
            loop {
                match self.at(i) {
                    None => return Err(Unsupported(line!())),
                    Some(b' ' | b'\n') => break,
                    Some(b'\'') if single && self.at(i + 1) == Some(b'\'') => {
                        let s = owned.get_or_insert_with(String::new);
                        s.push_str(&self.text[run..=i]);
                        i += 2;
                        run = i;
                    }
                    Some(c) if c == q => break,
                    Some(b'\\') if !single && self.at(i + 1) == Some(b'\n') => {
                        let s = owned.get_or_insert_with(String::new);
                        s.push_str(&self.text[run..i]);
                        i += 2;
                        self.line += 1;
                        self.line_start = i;
                        run = i;
                        leading_blanks = true;
                        break;
                    }
                    Some(b'\\') if !single => {
                        let s = owned.get_or_insert_with(String::new);
                        s.push_str(&self.text[run..i]);
                        let (c, len) = self.escape(i + 1)?;
                        s.push(c);
                        i += 1 + len;
                        run = i;
                    }
                    Some(_) => i += 1,
                }
            }
            if self.at(i) == Some(q) {
                break;
            }
            // Blanks and line breaks.
            let blanks_start = i;
            let mut leading_break = false;
            let mut trailing_breaks = 0usize;
            while let Some(c @ (b' ' | b'\n')) = self.at(i) {
                i += 1;
                if c == b'\n' {
                    if leading_blanks {
                        trailing_breaks += 1;
                    } else {
                        leading_break = true;
                        leading_blanks = true;
                    }
                    self.line += 1;
                    self.line_start = i;
                }
            }
            if leading_blanks {
                // Blanks before a break are dropped; the break folds.
                let s = owned.get_or_insert_with(String::new);
                s.push_str(&self.text[run..blanks_start.max(run)]);
                if leading_break && trailing_breaks == 0 {
                    s.push(' ');
                } else {
                    s.extend(std::iter::repeat_n('\n', trailing_breaks));
                }
                run = i;
            }
        }
        let value = match owned {
            Some(mut s) => {
                s.push_str(&self.text[run..i]);
                Cow::Owned(s)
            }
            None => Cow::Borrowed(&self.text[run..i]),
        };
        // The span runs over the spaces and comment after the closing quote.
        // (A `#` right after the quote is no comment; the caller then gives
        // up on the text, so the span does not matter there.)
        let end = self.past_comment(i + 1);
        let span = Span {
            line: start_line,
            column: start_col,
            end_line: self.line,
            end_column: self.col(end),
        };
        self.pos = i + 1;
        let style = if single {
            ScalarStyle::SingleQuoted
        } else {
            ScalarStyle::DoubleQuoted
        };
        self.scalar(value, style, span)
    }

    /// The escape after a backslash at byte `i`: the character and the
    /// bytes it took.
    fn escape(&self, i: usize) -> R<(char, usize)> {
        let c = match self.at(i).ok_or(Unsupported(line!()))? {
            b'0' => '\0',
            b'a' => '\x07',
            b'b' => '\x08',
            b't' => '\t',
            b'n' => '\n',
            b'v' => '\x0b',
            b'f' => '\x0c',
            b'r' => '\r',
            b'e' => '\x1b',
            b' ' => ' ',
            b'"' => '"',
            b'/' => '/',
            b'\\' => '\\',
            b'N' => '\u{85}',
            b'_' => '\u{a0}',
            b'L' => '\u{2028}',
            b'P' => '\u{2029}',
            d @ (b'x' | b'u' | b'U') => {
                let n = match d {
                    b'x' => 2,
                    b'u' => 4,
                    _ => 8,
                };
                let hex = self
                    .text
                    .get(i + 1..i + 1 + n)
                    .ok_or(Unsupported(line!()))?;
                if !hex.bytes().all(|h| h.is_ascii_hexdigit()) {
                    return Err(Unsupported(line!()));
                }
                let code = u32::from_str_radix(hex, 16).map_err(|_| Unsupported(line!()))?;
                return Ok((char::from_u32(code).ok_or(Unsupported(line!()))?, 1 + n));
            }
            _ => return Err(Unsupported(line!())),
        };
        Ok((c, 1))
    }

    /// A literal (`|`) or folded (`>`) block scalar whose indicator is at
    /// `pos`, in a block at `indent`.
    fn block_scalar(&mut self, indent: i64) -> R {
        let literal = self.cur() == Some(b'|');
        self.pos += 1;
        let chomp = match self.cur() {
            Some(b'-') => Chomp::Strip,
            Some(b'+') => Chomp::Keep,
            _ => Chomp::Clip,
        };
        if chomp != Chomp::Clip {
            self.pos += 1;
        }
        self.end_of_line()?;
        // The rest of the header line (a comment) and its break.
        self.pos = memchr::memchr(b'\n', &self.b[self.pos..])
            .map(|n| self.pos + n)
            .ok_or(Unsupported(line!()))?;
        self.newline();
        // Leading empty lines, then the first content line sets the indent.
        let mut leading = 0usize;
        let mut widest = 0usize;
        let mut i = self.pos;
        let (content_start, spaces) = loop {
            let mut j = i;
            while self.at(j) == Some(b' ') {
                j += 1;
            }
            match self.at(j) {
                Some(b'\n') => {
                    leading += 1;
                    widest = widest.max(j - i);
                    i = j + 1;
                }
                None => return Err(Unsupported(line!())),
                Some(_) => break (i, j - i),
            }
        };
        if spaces as i64 <= indent {
            // An empty block scalar: the next line belongs to the parent.
            if leading > 0 || chomp == Chomp::Keep {
                return Err(Unsupported(line!()));
            }
            let at = Span::point(self.line, spaces as u32 + 1);
            let style = if literal {
                ScalarStyle::Literal
            } else {
                ScalarStyle::Folded
            };
            self.pos = content_start + spaces;
            return self.scalar(Cow::Borrowed(""), style, at);
        }
        let k = spaces;
        if k == 0 || widest > k {
            return Err(Unsupported(line!()));
        }
        let first_line = self.line + leading as u32;
        let start = Span::point(first_line, k as u32 + 1);
        let mut value = String::new();
        value.extend(std::iter::repeat_n('\n', leading));
        // Line breaks after the last content line, not yet written.
        let mut pending = 0usize;
        // Whether the previous content line was more indented (folded only).
        let mut prev_more = true;
        let mut any = false;
        let mut ls = content_start;
        let mut line = first_line;
        let end = loop {
            let mut j = ls;
            while j < ls + k && self.at(j) == Some(b' ') {
                j += 1;
            }
            match self.at(j) {
                None => {
                    if j > ls {
                        return Err(Unsupported(line!()));
                    }
                    // The text ends with the line break of the last line.
                    break Span::point(line, 1);
                }
                Some(b'\n') => {
                    pending += 1;
                    ls = j + 1;
                    line += 1;
                    continue;
                }
                Some(b' ') if j - ls == k => {}
                Some(_) if j - ls == k => {}
                Some(_) => break Span::point(line, (j - ls) as u32 + 1),
            }
            // A content line: the text after the indentation.
            let eol = self.eol(j);
            if eol == self.b.len() {
                // The last line has no line break: left to saphyr-parser.
                return Err(Unsupported(line!()));
            }
            let content = &self.text[j..eol];
            if content.bytes().all(|c| c == b' ') {
                // A line of spaces past the indentation.
                return Err(Unsupported(line!()));
            }
            let more = content.starts_with(' ');
            if any {
                if literal || more || prev_more {
                    value.extend(std::iter::repeat_n('\n', pending));
                } else if pending == 1 {
                    value.push(' ');
                } else {
                    value.extend(std::iter::repeat_n('\n', pending - 1));
                }
            }
            value.push_str(content);
            any = true;
            prev_more = more;
            pending = 1;
            ls = eol + 1;
            line += 1;
        };
        match chomp {
            Chomp::Strip => {}
            Chomp::Clip => value.push('\n'),
            Chomp::Keep => value.extend(std::iter::repeat_n('\n', pending)),
        }
        // Continue at the terminating line, after its indentation.
        self.line = end.line;
        self.line_start = ls.min(self.b.len());
        self.pos = (self.line_start + end.column as usize - 1).min(self.b.len());
        let span = Span {
            line: start.line,
            column: start.column,
            end_line: end.line,
            end_column: end.column,
        };
        let style = if literal {
            ScalarStyle::Literal
        } else {
            ScalarStyle::Folded
        };
        self.scalar(Cow::Owned(value), style, span)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stop {
    /// A line break or the end of the text.
    Eol,
    /// `: ` (the scalar was a key).
    Colon,
    /// ` #`.
    Comment,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Chomp {
    Strip,
    Clip,
    Keep,
}

/// Whether a plain scalar this reader handles may start with `c` (then
/// `next`): not an indicator, except `-` before a non-space.
fn starts_plain(c: u8, next: Option<u8>) -> bool {
    match c {
        b'-' => !is_sep(next),
        b'?' | b':' | b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|'
        | b'>' | b'\'' | b'"' | b'%' | b'@' | b'`' | b' ' | b'\n' => false,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{parse_with_saphyr, Document, Node, Sink, Value, YamlError};
    use std::path::Path;

    /// The fast reader's documents, or None where it gives up.
    fn fast(text: &str) -> Option<Vec<Document>> {
        let mut sink = Sink::default();
        super::parse(text, &mut sink).ok().map(|()| sink.docs)
    }

    /// Where the fast reader reads a text, saphyr-parser must read the same
    /// documents (values, spans, duplicate keys). Returns whether it read it.
    fn agrees(text: &str, what: &str) -> bool {
        let Some(docs) = fast(text) else {
            return false;
        };
        let reference: Result<Vec<Document>, YamlError> = parse_with_saphyr(text);
        let reference = match reference {
            Ok(r) => r,
            Err(e) => panic!(
                "{what}: saphyr-parser refuses it ({e}) but the fast reader read it:\n{text}"
            ),
        };
        if docs != reference {
            let diff = if docs.len() != reference.len() {
                format!(
                    "{} documents, saphyr-parser {}",
                    docs.len(),
                    reference.len()
                )
            } else {
                docs.iter()
                    .zip(&reference)
                    .find_map(|(a, b)| difference(&a.root, &b.root, "$"))
                    .unwrap_or_else(|| "duplicate keys differ".to_string())
            };
            panic!("{what}: {diff}\n{text}");
        }
        true
    }

    /// The first place two trees differ, for a readable failure.
    fn difference(a: &Node, b: &Node, path: &str) -> Option<String> {
        match (&a.value, &b.value) {
            (Value::Seq(x), Value::Seq(y)) if x.len() == y.len() => {
                for (i, (p, q)) in x.iter().zip(y).enumerate() {
                    if let Some(d) = difference(p, q, &format!("{path}[{i}]")) {
                        return Some(d);
                    }
                }
            }
            (Value::Map(x), Value::Map(y)) if x.len() == y.len() => {
                for (p, q) in x.iter().zip(y) {
                    let at = format!("{path}.{}", p.key);
                    if p.key != q.key || p.key_span != q.key_span {
                        return Some(format!(
                            "{at}: key {:?} vs saphyr {:?}",
                            (&p.key, p.key_span),
                            (&q.key, q.key_span)
                        ));
                    }
                    if let Some(d) = difference(&p.value, &q.value, &at) {
                        return Some(d);
                    }
                }
            }
            _ => {}
        }
        (a != b).then(|| {
            let short = |n: &Node| {
                let mut s = format!("{:?}", n.value);
                s.truncate(200);
                format!("{s} at {:?} quoted {}", n.span, n.quoted)
            };
            format!("{path}: {} vs saphyr {}", short(a), short(b))
        })
    }

    #[test]
    fn reads_block_yaml_as_saphyr_does() {
        let cases = [
            "a: 1\nb:\n  c: \"x\"\n  d:\n  - e\n  - f: g\n    h: |\n      lit\n      x\n\n# c\ni: []\nj: {}\n---\n- a\n- b\n",
            "a:\nb: 1\nc:\n# x\n\nd:",
            "a:\n- b: 1\n  c: 2\n- d\ne: x",
            "a:\n  - - x\n    - y\n  -\n  - z\n",
            "---\n---\na: 1\n---\n",
            "a  :\nb: |\nc: >-\n  x\n   y\n\n  z\n  w\nd: \"a\\tb\"  # c\ne: 'it''s'\n",
            "- a\n-   b\n- # c\n  x\n-\n  - y",
            "a: b\n  c\n\n  d\ne: f",
            "a: 1",
            "a: |\n  x\n",
            "a: |+\n  x\n\n\nb: >\n  p\n  q\n\n\n  r\n   s\n  t\n",
            "k: \"\\u00e9\\x41\\/\\\\\"\n'q''k': v\n\"dq\" : w\n",
            "é: ü\nß:\n  - ñ: \"ö\"  # ç\n",
            "a:\n-\n- b\n",
            "a: x:y\nb: http://x/#y\nc: a #b\nd: -1\ne: - \n",
            "a: 1\n---\nb: 2\n...\n",
            "- a\n  b\n- c",
            "root:\n  k: |-\n    one\n\n    two\n  l: v\n",
            "  a: 1\n  b: 2\n",
            "a: |2\n  x\n",
            "a: &x 1\nb: *x\n",
            "k: [a, b]\nl: ['a' , \"b\"]  # c\nm: [ ]\nn: { }\n- [x y,  z ]\n",
            "- [x y,  z ]\n- [a,]\n- [1, true, ~]\n",
            "a: \"x\n  y\n\n  z \\\n  w\"\nb: 'p\n\n\n  q'\n",
            "a:\n- \"x\n y\"\n",
        ];
        let mut read = 0;
        for (i, case) in cases.iter().enumerate() {
            read += usize::from(agrees(case, &format!("case {i}")));
        }
        assert!(read >= 15, "the fast reader read only {read} cases");
    }

    fn corpus_files() -> Vec<(String, String)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
        let mut files = Vec::new();
        for entry in walkdir::WalkDir::new(&root).sort_by_file_name() {
            let Ok(entry) = entry else { continue };
            let p = entry.path();
            let yaml = matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml" | "json")
            );
            if entry.file_type().is_file() && yaml {
                if let Ok(text) = std::fs::read_to_string(p) {
                    files.push((p.display().to_string(), text));
                }
            }
        }
        files
    }

    /// Every manifest of the shared corpus (what real bundles look like).
    #[test]
    fn agrees_with_saphyr_on_the_corpus() {
        let files = corpus_files();
        assert!(files.len() > 1000, "the shared corpus is missing");
        let mut read = 0usize;
        let mut gave_up: std::collections::BTreeMap<u32, (usize, &str)> = Default::default();
        for (path, text) in &files {
            if agrees(text, path) {
                read += 1;
            } else if let Err(super::Unsupported(at)) = super::parse(text, &mut Sink::default()) {
                let e = gave_up.entry(at).or_insert((0, path));
                e.0 += 1;
            }
        }
        eprintln!("fast.rs lines that gave up (count, first file): {gave_up:#?}");
        // Most real manifests are block YAML; a fall in this share means the
        // fast reader no longer reads what it should.
        assert!(
            read * 100 >= files.len() * 99,
            "the fast reader read {read} of {} files",
            files.len()
        );
    }

    /// Mutations of real manifests: wherever the fast reader still reads
    /// the text, it must agree with saphyr-parser (and where saphyr refuses
    /// it, the fast reader must give up).
    #[test]
    fn agrees_with_saphyr_on_mutated_manifests() {
        let files = corpus_files();
        // Every 8th file of the corpus, big ones cut at a line break after
        // 6,000 bytes (the catalogs' multi-line quoted strings among them).
        let samples: Vec<(&str, &str)> = files
            .iter()
            .step_by(8)
            .map(|(p, t)| {
                let cut = t
                    .char_indices()
                    .skip_while(|&(i, _)| i < 6000)
                    .find(|&(_, c)| c == '\n')
                    .map_or(t.len(), |(i, _)| i + 1);
                (p.as_str(), &t[..cut])
            })
            .collect();
        assert!(samples.len() > 500);
        let inserts = [
            " ",
            "  ",
            "\n",
            ":",
            ": ",
            "- ",
            "-",
            "#",
            " #",
            "\"",
            "'",
            "|",
            ">",
            "[]",
            "{}",
            "x",
            "\\",
            "---\n",
            "|-\n",
            "? ",
            "&a ",
            "\n  ",
            "é",
            "\\\n",
            "\"a\n b\"",
            "'a\n\n  b'",
            "\n\n",
            ">+\n",
            " \n",
        ];
        // More rounds and another seed from the environment, for a longer
        // search on a developer's machine.
        let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
        let rounds = env("OLM_YAML_MUTATION_ROUNDS").unwrap_or(24);
        let mut seed: u64 = env("OLM_YAML_MUTATION_SEED").unwrap_or(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let (mut read, mut tried) = (0usize, 0usize);
        for (path, text) in &samples {
            for _ in 0..rounds {
                let mut at = next(text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                if next(3) == 0 {
                    // At a line's start: indentation is what goes wrong.
                    at = text[..at].rfind('\n').map_or(0, |i| i + 1);
                }
                let mut m = String::with_capacity(text.len() + 8);
                m.push_str(&text[..at]);
                match next(3) {
                    0 => {
                        let mut end = (at + 1 + next(3)).min(text.len());
                        while !text.is_char_boundary(end) {
                            end += 1;
                        }
                        m.push_str(&text[end..]);
                    }
                    _ => {
                        m.push_str(inserts[next(inserts.len())]);
                        m.push_str(&text[at..]);
                    }
                }
                tried += 1;
                read += usize::from(agrees(&m, &format!("{path} mutated at byte {at}")));
            }
        }
        eprintln!("the fast reader read {read} of {tried} mutated texts");
        // About half the mutations still read; far fewer means the fast
        // reader gives up on what it used to read, and the test checks little.
        assert!(
            read * 10 >= tried * 4,
            "the fast reader read only {read} of {tried}"
        );
    }
}
