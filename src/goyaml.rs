//! YAML written byte for byte the way opm writes it.
//!
//! opm's YAML output (`opm render -o yaml`, `opm alpha render-template`,
//! `opm migrate`) goes through `sigs.k8s.io/yaml`'s `JSONToYAML`: each object
//! is marshalled to JSON, decoded by go-yaml v2 into untyped maps, and
//! encoded again by go-yaml v2's encoder and emitter (a port of libyaml).
//! What that means for the bytes, and what this module reproduces:
//!
//! * mapping keys are sorted with go-yaml's "natural" order: runs of digits
//!   compare as numbers and non-letters sort before letters (`a2` < `a10`,
//!   `_x` < `Z`), not by bytes as JSON does;
//! * block style, two-space indent, and sequences inside a mapping are not
//!   indented (`key:` then `- item` at the same column); empty collections
//!   are `[]` and `{}`;
//! * a string that would read back as another type when plain (YAML 1.1:
//!   `yes`, `No`, `on`, `~`, `null`, `""`, integers in any base including
//!   `0o17` and `1_000`, floats, `.inf`, base-60 `1:20`, timestamps such as
//!   `2021-01-01`) is double-quoted; a string YAML cannot hold plain
//!   (leading `- `, `#`, `: `, surrounding spaces, …) is single-quoted, or
//!   double-quoted when it has characters that need escapes (tabs, control
//!   characters, characters outside the BMP);
//! * a string with a newline is a literal block (`|`, `|-`, `|+`, with an
//!   indentation digit when it starts with a space or a newline), unless it
//!   has a space before a newline, a trailing space or an escaped
//!   character: then it is double-quoted with `\n` escapes;
//! * long plain and quoted strings are folded at spaces once a line passes
//!   80 columns (go-yaml v2 keeps libyaml's best width; `FutureLineWrap`
//!   is not called), and a long key (over 128 bytes) becomes `? key`;
//! * numbers come out as go-yaml prints the decoded value: integers as
//!   written, other numbers with Go's `strconv.FormatFloat(f, 'g', -1, 64)`
//!   (`1.5`, `1e+06`, `1e-05`).
//!
//! The source for these rules is go-yaml v2's `encode.go` (`stringv`),
//! `resolve.go`, `sorter.go` and `emitterc.go`. Outside ASCII, Go's
//! `unicode.IsLetter`/`IsDigit` are approximated with Rust's
//! `char::is_alphabetic`/`is_numeric` in key sorting.

use std::cmp::Ordering;

use serde_json::Value;

/// Lines are folded once they pass this column (libyaml's best width).
const BEST_WIDTH: usize = 80;
/// Indentation step.
const BEST_INDENT: i64 = 2;
/// Keys longer than this (in bytes) are written as complex keys (`? key`).
const MAX_SIMPLE_KEY: usize = 128;

/// One YAML document for `value`, as `sigs.k8s.io/yaml.Marshal` writes it
/// (no leading `---`; ends with a newline).
pub fn to_string(value: &Value) -> String {
    let mut e = Emitter::new();
    e.emit_node(value, Ctx::ROOT);
    // Document end: finish the last line.
    e.indent = -1;
    e.write_indent();
    e.out
}

/// The scalar styles go-yaml chooses between.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

/// Where a node is emitted (libyaml's context flags).
#[derive(Clone, Copy)]
struct Ctx {
    mapping: bool,
    simple_key: bool,
}

impl Ctx {
    const ROOT: Ctx = Ctx {
        mapping: false,
        simple_key: false,
    };
    const ITEM: Ctx = Ctx {
        mapping: false,
        simple_key: false,
    };
    const VALUE: Ctx = Ctx {
        mapping: true,
        simple_key: false,
    };
    const SIMPLE_KEY: Ctx = Ctx {
        mapping: true,
        simple_key: true,
    };
}

struct Emitter {
    out: String,
    /// Characters on the current line.
    column: usize,
    indent: i64,
    indents: Vec<i64>,
    /// The last character written was whitespace (no separator needed).
    whitespace: bool,
    /// Only indentation has been written on the current line.
    indention: bool,
}

/// What the emitter learns from a scalar before choosing its style
/// (`yaml_emitter_analyze_scalar`).
#[derive(Debug, Default)]
struct Analysis {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

impl Emitter {
    fn new() -> Emitter {
        Emitter {
            out: String::new(),
            column: 0,
            indent: -1,
            indents: Vec::new(),
            whitespace: true,
            indention: true,
        }
    }

    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    /// A line break from the value itself (`write_break`): `\n` is written
    /// as the output's line break, other break characters as they are.
    fn write_break(&mut self, c: char) {
        if c == '\n' {
            self.put_break();
        } else {
            self.out.push(c);
            self.column = 0;
        }
    }

    fn increase_indent(&mut self, flow: bool, indentless: bool) {
        self.indents.push(self.indent);
        if self.indent < 0 {
            self.indent = if flow { BEST_INDENT } else { 0 };
        } else if !indentless {
            self.indent += BEST_INDENT;
        }
    }

    fn pop_indent(&mut self) {
        self.indent = self.indents.pop().unwrap_or(-1);
    }

    fn write_indent(&mut self) {
        let indent = self.indent.max(0) as usize;
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn write_indicator(
        &mut self,
        indicator: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        for c in indicator.chars() {
            self.put(c);
        }
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
    }

    fn emit_node(&mut self, value: &Value, ctx: Ctx) {
        match value {
            Value::Null => self.emit_scalar("null", Style::Plain, ctx),
            Value::Bool(b) => {
                self.emit_scalar(if *b { "true" } else { "false" }, Style::Plain, ctx)
            }
            Value::Number(n) => self.emit_scalar(&format_number(n), Style::Plain, ctx),
            Value::String(s) => self.emit_scalar(s, requested_style(s), ctx),
            Value::Array(items) if items.is_empty() => self.emit_empty("[", "]"),
            Value::Object(map) if map.is_empty() => self.emit_empty("{", "}"),
            Value::Array(items) => {
                let indentless = ctx.mapping && !self.indention;
                self.increase_indent(false, indentless);
                for item in items {
                    self.write_indent();
                    self.write_indicator("-", true, false, true);
                    self.emit_node(item, Ctx::ITEM);
                }
                self.pop_indent();
            }
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                sort_keys(&mut keys);
                self.increase_indent(false, false);
                for k in keys {
                    self.write_indent();
                    let simple = !k.contains(is_break) && k.len() <= MAX_SIMPLE_KEY;
                    if simple {
                        self.emit_scalar(k, requested_style(k), Ctx::SIMPLE_KEY);
                        self.write_indicator(":", false, false, false);
                    } else {
                        self.write_indicator("?", true, false, true);
                        self.emit_scalar(k, requested_style(k), Ctx::VALUE);
                        self.write_indent();
                        self.write_indicator(":", true, false, true);
                    }
                    self.emit_node(&map[k.as_str()], Ctx::VALUE);
                }
                self.pop_indent();
            }
        }
    }

    /// An empty sequence or mapping, which go-yaml writes in flow style.
    fn emit_empty(&mut self, open: &str, close: &str) {
        self.write_indicator(open, true, true, false);
        self.increase_indent(true, false);
        self.pop_indent();
        self.write_indicator(close, false, false, false);
    }

    fn emit_scalar(&mut self, value: &str, requested: Style, ctx: Ctx) {
        let a = analyze(value);
        let mut style = requested;
        if ctx.simple_key && a.multiline {
            style = Style::Double;
        }
        if style == Style::Plain && (!a.block_plain_allowed || (value.is_empty() && ctx.simple_key))
        {
            style = Style::Single;
        }
        if style == Style::Single && !a.single_quoted_allowed {
            style = Style::Double;
        }
        if style == Style::Literal && (!a.block_allowed || ctx.simple_key) {
            style = Style::Double;
        }
        self.increase_indent(true, false);
        let allow_breaks = !ctx.simple_key;
        match style {
            Style::Plain => self.write_plain(value, allow_breaks),
            Style::Single => self.write_single(value, allow_breaks),
            Style::Double => self.write_double(value, allow_breaks),
            Style::Literal => self.write_literal(value),
        }
        self.pop_indent();
    }

    fn write_plain(&mut self, value: &str, allow_breaks: bool) {
        if !self.whitespace {
            self.put(' ');
        }
        let chars: Vec<char> = value.chars().collect();
        let mut spaces = false;
        let mut breaks = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && chars.get(i + 1) != Some(&' ')
                {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.put(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    fn write_single(&mut self, value: &str, allow_breaks: bool) {
        self.write_indicator("'", true, false, false);
        let chars: Vec<char> = value.chars().collect();
        let n = chars.len();
        let mut spaces = false;
        let mut breaks = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i > 0
                    && i + 1 < n
                    && chars[i + 1] != ' '
                {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if c == '\'' {
                    self.put('\'');
                }
                self.put(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.write_indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_double(&mut self, value: &str, allow_breaks: bool) {
        self.write_indicator("\"", true, false, false);
        let chars: Vec<char> = value.chars().collect();
        let n = chars.len();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if !is_printable(c) || c == '\u{FEFF}' || is_break(c) || c == '"' || c == '\\' {
                self.put('\\');
                match c {
                    '\0' => self.put('0'),
                    '\u{7}' => self.put('a'),
                    '\u{8}' => self.put('b'),
                    '\t' => self.put('t'),
                    '\n' => self.put('n'),
                    '\u{b}' => self.put('v'),
                    '\u{c}' => self.put('f'),
                    '\r' => self.put('r'),
                    '\u{1b}' => self.put('e'),
                    '"' => self.put('"'),
                    '\\' => self.put('\\'),
                    '\u{85}' => self.put('N'),
                    '\u{a0}' => self.put('_'),
                    '\u{2028}' => self.put('L'),
                    '\u{2029}' => self.put('P'),
                    _ => {
                        let v = c as u32;
                        let (letter, digits) = if v <= 0xFF {
                            ('x', 2)
                        } else if v <= 0xFFFF {
                            ('u', 4)
                        } else {
                            ('U', 8)
                        };
                        self.put(letter);
                        for k in (0..digits).rev() {
                            let d = (v >> (k * 4)) & 0xF;
                            self.put(char::from_digit(d, 16).unwrap_or('0').to_ascii_uppercase());
                        }
                    }
                }
                spaces = false;
            } else if c == ' ' {
                if allow_breaks && !spaces && self.column > BEST_WIDTH && i > 0 && i + 1 < n {
                    self.write_indent();
                    if chars[i + 1] == ' ' {
                        self.put('\\');
                    }
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
        }
        self.write_indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_literal(&mut self, value: &str) {
        self.write_indicator("|", true, false, false);
        // Block scalar hints: an indentation digit when the text starts
        // with a space or a break, then the chomping indicator.
        let first = value.chars().next();
        if first.is_some_and(|c| c == ' ' || is_break(c)) {
            self.write_indicator(&BEST_INDENT.to_string(), false, false, false);
        }
        let mut rev = value.chars().rev();
        let chomp = match (rev.next(), rev.next()) {
            (None, _) => Some("-"),
            (Some(last), _) if !is_break(last) => Some("-"),
            (Some(_), None) => Some("+"),
            (Some(_), Some(prev)) if is_break(prev) => Some("+"),
            _ => None,
        };
        if let Some(h) = chomp {
            self.write_indicator(h, false, false, false);
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for c in value.chars() {
            if is_break(c) {
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.put(c);
                self.indention = false;
                breaks = false;
            }
        }
    }
}

/// The style go-yaml's encoder asks for (`encoder.stringv`): literal for
/// multi-line text, plain when the plain text reads back as the same
/// string, double-quoted otherwise.
fn requested_style(s: &str) -> Style {
    if s.contains('\n') {
        Style::Literal
    } else if resolves_to_str(s) && !is_base60_float(s) {
        Style::Plain
    } else {
        Style::Double
    }
}

/// libyaml's printable set: what may appear unescaped.
fn is_printable(c: char) -> bool {
    matches!(c, '\n' | '\u{20}'..='\u{7E}' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}')
        && c != '\u{FEFF}'
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_blank_or_break(c: char) -> bool {
    c == ' ' || c == '\t' || is_break(c) || c == '\0'
}

/// `yaml_emitter_analyze_scalar` of go-yaml v2 (block context only: this
/// writer never emits flow collections with content).
fn analyze(value: &str) -> Analysis {
    if value.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let chars: Vec<char> = value.chars().collect();
    let mut block_indicators = value.starts_with("---") || value.starts_with("...");
    let mut line_breaks = false;
    let mut special = false;
    let (mut leading_space, mut leading_break) = (false, false);
    let (mut trailing_space, mut trailing_break) = (false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_whitespace = true;
    let n = chars.len();
    for (i, &c) in chars.iter().enumerate() {
        let followed_by_whitespace = i + 1 >= n || matches!(chars[i + 1], ' ' | '\t');
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => block_indicators = true,
                '?' | ':' | '-' if followed_by_whitespace => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_whitespace => block_indicators = true,
                '#' if preceded_by_whitespace => block_indicators = true,
                _ => {}
            }
        }
        if !is_printable(c) {
            special = true;
        }
        if c == ' ' {
            leading_space |= i == 0;
            trailing_space |= i + 1 == n;
            break_space |= previous_break;
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            line_breaks = true;
            leading_break |= i == 0;
            trailing_break |= i + 1 == n;
            space_break |= previous_space;
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = is_blank_or_break(c);
    }
    let mut a = Analysis {
        multiline: line_breaks,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.block_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
        a.block_allowed = false;
    }
    if line_breaks || block_indicators {
        a.block_plain_allowed = false;
    }
    a
}

/// Sorts mapping keys as go-yaml v2's `keyList.Less` does.
fn sort_keys(keys: &mut [&String]) {
    // Insertion sort: stable, never panics whatever the comparator does,
    // and maps are small.
    for i in 1..keys.len() {
        let mut j = i;
        while j > 0 && key_less(keys[j], keys[j - 1]) {
            keys.swap(j, j - 1);
            j -= 1;
        }
    }
}

fn is_letter(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphabetic()
    } else {
        c.is_alphabetic()
    }
}

fn is_digit(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_digit()
    } else {
        c.is_numeric()
    }
}

/// go-yaml v2's key order for two strings: letters compare by code point,
/// a non-letter sorts before a letter, and digit runs compare as numbers.
pub fn key_less(a: &str, b: &str) -> bool {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    for i in 0..ar.len().min(br.len()) {
        if ar[i] == br[i] {
            continue;
        }
        let (al, bl) = (is_letter(ar[i]), is_letter(br[i]));
        if al && bl {
            return ar[i] < br[i];
        }
        if al || bl {
            return bl;
        }
        let (mut an, mut bn): (i64, i64) = (0, 0);
        if ar[i] == '0' || br[i] == '0' {
            // A zero inside a number that started with a non-zero digit
            // counts as a digit, not as padding.
            let mut j = i;
            while j > 0 && is_digit(ar[j - 1]) {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && is_digit(ar[ai]) {
            an = an.wrapping_mul(10).wrapping_add(ar[ai] as i64 - '0' as i64);
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && is_digit(br[bi]) {
            bn = bn.wrapping_mul(10).wrapping_add(br[bi] as i64 - '0' as i64);
            bi += 1;
        }
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return ar[i] < br[i];
    }
    ar.len() < br.len()
}

/// [`key_less`] as an ordering.
pub fn key_cmp(a: &str, b: &str) -> Ordering {
    if key_less(a, b) {
        Ordering::Less
    } else if key_less(b, a) {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

/// A JSON number as go-yaml prints what it decoded: integers as they are,
/// anything else as a float64 in Go's shortest `%g` form.
fn format_number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    format_float_g(n.as_f64().unwrap_or(0.0))
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`, with YAML's spellings of
/// the infinities and NaN.
pub fn format_float_g(f: f64) -> String {
    format_g(f, false)
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 32)` (the shortest digits that
/// read back as the same float32), with YAML's spellings of the infinities
/// and NaN: how `sigs.k8s.io/yaml` writes a float mapping key as a JSON key.
pub fn format_float_g32(f: f64) -> String {
    format_g(f, true)
}

fn format_g(f: f64, single: bool) -> String {
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            ".inf".into()
        } else {
            "-.inf".into()
        };
    }
    let neg = f.is_sign_negative();
    let sign = if neg { "-" } else { "" };
    if f == 0.0 {
        return format!("{sign}0");
    }
    // Shortest round-trip digits and decimal exponent from Rust's `{:e}`.
    let e = if single {
        format!("{:e}", f.abs() as f32)
    } else {
        format!("{:e}", f.abs())
    };
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let exp: i64 = exp.parse().unwrap_or(0);
    let nd = digits.len() as i64;
    let dp = exp + 1;
    if !(-4..6).contains(&exp) {
        // %e: d.ddde±XX, at least two exponent digits.
        let mut s = String::from(sign);
        s.push_str(&digits[..1]);
        if nd > 1 {
            s.push('.');
            s.push_str(&digits[1..]);
        }
        s.push('e');
        s.push(if exp < 0 { '-' } else { '+' });
        s.push_str(&format!("{:02}", exp.abs()));
        return s;
    }
    // %f with as many decimals as the digits need.
    let mut s = String::from(sign);
    if dp > 0 {
        for i in 0..dp {
            s.push(
                digits
                    .as_bytes()
                    .get(i as usize)
                    .map_or('0', |&b| b as char),
            );
        }
    } else {
        s.push('0');
    }
    let frac = (nd - dp).max(0);
    if frac > 0 {
        s.push('.');
        for i in 0..frac {
            let idx = dp + i;
            let ch = if idx < 0 {
                '0'
            } else {
                digits
                    .as_bytes()
                    .get(idx as usize)
                    .map_or('0', |&b| b as char)
            };
            s.push(ch);
        }
    }
    s
}

/// Whether go-yaml v2 resolves `s`, written plain, to a string
/// (`resolve("", s)` gives `!!str`).
pub fn resolves_to_str(s: &str) -> bool {
    resolve_plain(s) == Resolved::Str
}

/// What go-yaml v2's `resolve("", s)` makes of a plain scalar.
#[derive(Clone, Debug, PartialEq)]
pub enum Resolved {
    /// `!!str`: the text itself.
    Str,
    /// `!!null`.
    Null,
    /// `!!bool`.
    Bool(bool),
    /// `!!int` that fits an int64.
    Int(i64),
    /// `!!int` that fits only a uint64.
    UInt(u64),
    /// `!!int` beyond 64 bits (a `*big.Int`), given here as the nearest float.
    BigInt(f64),
    /// `!!float`.
    Float(f64),
    /// `!!timestamp`; decoded into an interface{} value it stays the text
    /// ("for backward compatibility", go-yaml's decoder says).
    Timestamp,
}

/// go-yaml v2's `resolve("", s)` for a plain scalar `s`: the resolve table
/// (YAML 1.1 booleans, nulls, infinities), then by the first character
/// timestamps, Go's `strconv.ParseInt`/`ParseUint` with base prefixes after
/// removing underscores, its float regex with `strconv.ParseFloat`, `0b`
/// forms and integers beyond 64 bits. Anything else is a string.
pub fn resolve_plain(s: &str) -> Resolved {
    let Some(&first) = s.as_bytes().first() else {
        return Resolved::Null;
    };
    let hint = match first {
        b'+' | b'-' => 'S',
        b'0'..=b'9' => 'D',
        b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~' => 'M',
        b'.' => '.',
        _ => return Resolved::Str,
    };
    if let Some(v) = resolve_table(s) {
        return v;
    }
    match hint {
        'M' => Resolved::Str,
        '.' => match go_parse_float_ok(s) {
            true => Resolved::Float(parse_f64(s)),
            false => Resolved::Str,
        },
        _ => {
            if parse_timestamp(s) {
                return Resolved::Timestamp;
            }
            let plain: String = s.chars().filter(|&c| c != '_').collect();
            if let Ok(i) = go_parse_int(&plain, 0) {
                return Resolved::Int(i);
            }
            let uint = go_parse_uint(&plain, 0);
            if let Ok(u) = uint {
                return Resolved::UInt(u);
            }
            if is_yaml_style_float(&plain) && go_parse_float_ok(&plain) {
                return Resolved::Float(parse_f64(&plain));
            }
            if let Some(rest) = plain.strip_prefix("0b") {
                if let Ok(i) = go_parse_int(rest, 2) {
                    return Resolved::Int(i);
                }
                if let Ok(u) = go_parse_uint(rest, 2) {
                    return Resolved::UInt(u);
                }
            } else if let Some(rest) = plain.strip_prefix("-0b") {
                if let Ok(i) = go_parse_int(&format!("-{rest}"), 2) {
                    return Resolved::Int(i);
                }
            }
            // Out of range for 64 bits but a valid integer: a big.Int.
            if uint == Err(IntError::Range) && big_int_ok(&plain) {
                return Resolved::BigInt(big_int_f64(&plain));
            }
            Resolved::Str
        }
    }
}

/// The entries of go-yaml v2's resolve table.
fn resolve_table(s: &str) -> Option<Resolved> {
    Some(match s {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            Resolved::Bool(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            Resolved::Bool(false)
        }
        "~" | "null" | "Null" | "NULL" => Resolved::Null,
        ".nan" | ".NaN" | ".NAN" => Resolved::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => Resolved::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => Resolved::Float(f64::NEG_INFINITY),
        _ => return None,
    })
}

/// A float `go_parse_float_ok` accepted.
fn parse_f64(s: &str) -> f64 {
    let plain: String = s.chars().filter(|&c| c != '_').collect();
    plain.parse().unwrap_or(f64::NAN)
}

/// The nearest float to an integer `big_int_ok` accepted.
fn big_int_f64(s: &str) -> f64 {
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (digits, base) = split_base(rest, 0);
    let mut f = 0.0f64;
    for c in digits.chars() {
        f = f * base as f64 + c.to_digit(base).unwrap_or(0) as f64;
    }
    if neg {
        -f
    } else {
        f
    }
}

#[derive(Debug, PartialEq, Eq)]
enum IntError {
    Syntax,
    Range,
}

/// Go's `strconv.ParseUint(s, base, 64)` for base 0 (prefixes `0x`, `0o`,
/// `0b`, `0`) or an explicit base, without underscores.
fn go_parse_uint(s: &str, base: u32) -> Result<u64, IntError> {
    if s.is_empty() {
        return Err(IntError::Syntax);
    }
    let (digits, base) = split_base(s, base);
    let mut n: u64 = 0;
    for c in digits.chars() {
        let d = c.to_digit(36).ok_or(IntError::Syntax)?;
        if d >= base {
            return Err(IntError::Syntax);
        }
        // Go reports overflow at the first digit that overflows, before
        // looking at the rest.
        n = n
            .checked_mul(base as u64)
            .and_then(|m| m.checked_add(d as u64))
            .ok_or(IntError::Range)?;
    }
    Ok(n)
}

fn split_base(s: &str, base: u32) -> (&str, u32) {
    if base != 0 {
        return (s, base);
    }
    let b = s.as_bytes();
    if b[0] != b'0' {
        return (s, 10);
    }
    if b.len() >= 3 {
        match b[1].to_ascii_lowercase() {
            b'b' => return (&s[2..], 2),
            b'o' => return (&s[2..], 8),
            b'x' => return (&s[2..], 16),
            _ => {}
        }
    }
    (&s[1..], 8)
}

/// Go's `strconv.ParseInt(s, base, 64)`.
fn go_parse_int(s: &str, base: u32) -> Result<i64, IntError> {
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let u = go_parse_uint(rest, base)?;
    if neg {
        if u > 1u64 << 63 {
            return Err(IntError::Range);
        }
        Ok((u as i64).wrapping_neg())
    } else {
        i64::try_from(u).map_err(|_| IntError::Range)
    }
}

/// `big.Int.SetString(s, 0)` succeeds (sign, base prefix, digits).
fn big_int_ok(s: &str) -> bool {
    let rest = s.strip_prefix(['+', '-']).unwrap_or(s);
    if rest.is_empty() {
        return false;
    }
    let (digits, base) = split_base(rest, 0);
    (digits.is_empty() && base == 8)
        || (!digits.is_empty() && digits.chars().all(|c| c.is_digit(base)))
}

/// go-yaml's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Go's `strconv.ParseFloat(s, 64)` succeeds, for the decimal forms that
/// reach it here: underscores only between digits, finite result.
fn go_parse_float_ok(s: &str) -> bool {
    let b = s.as_bytes();
    // underscoreOK: each `_` between two digits.
    for (i, &c) in b.iter().enumerate() {
        if c == b'_'
            && !(i > 0
                && b[i - 1].is_ascii_digit()
                && b.get(i + 1).is_some_and(|n| n.is_ascii_digit()))
        {
            return false;
        }
    }
    let plain: String = s.chars().filter(|&c| c != '_').collect();
    if !is_yaml_style_float(&plain) {
        return false;
    }
    plain.parse::<f64>().is_ok_and(|f| f.is_finite())
}

/// go-yaml v2's `isBase60Float`: `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`.
fn is_base60_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    if !b.get(i).is_some_and(|c| c.is_ascii_digit()) {
        return false;
    }
    i += 1;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while b.get(i) == Some(&b':') {
        i += 1;
        // [0-5]?[0-9]: one or two digits, the first of two at most 5.
        let d1 = b.get(i).copied().filter(u8::is_ascii_digit);
        let d2 = b.get(i + 1).copied().filter(u8::is_ascii_digit);
        match (d1, d2) {
            (Some(a), Some(_)) if a <= b'5' => i += 2,
            (Some(_), _) => i += 1,
            _ => return false,
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

/// go-yaml v2's `parseTimestamp`: `YYYY-M-D`, optionally followed by
/// `T`/`t`/space, `h:m:s`, a fraction and (with `T`/`t`) a zone, each as
/// Go's `time.Parse` reads the layouts go-yaml tries.
pub fn parse_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let year: u32 = s[..4].parse().unwrap_or(0);
    let mut i = 5;
    // time.Parse's getnum: one digit, or two when a second follows.
    let num = |i: &mut usize| -> Option<u32> {
        let d1 = b.get(*i).filter(|c| c.is_ascii_digit())?;
        *i += 1;
        match b.get(*i).filter(|c| c.is_ascii_digit()) {
            Some(d2) => {
                *i += 1;
                Some(((d1 - b'0') * 10 + (d2 - b'0')) as u32)
            }
            None => Some((d1 - b'0') as u32),
        }
    };
    let Some(month) = num(&mut i) else {
        return false;
    };
    if b.get(i) != Some(&b'-') {
        return false;
    }
    i += 1;
    let Some(day) = num(&mut i) else {
        return false;
    };
    if !(1..=12).contains(&month) || day < 1 || day > days_in(month, year) {
        return false;
    }
    if i == b.len() {
        return true;
    }
    let sep = b[i];
    if !matches!(sep, b'T' | b't' | b' ') {
        return false;
    }
    i += 1;
    let mut hms = [0u32; 3];
    for (k, field) in hms.iter_mut().enumerate() {
        if k > 0 {
            if b.get(i) != Some(&b':') {
                return false;
            }
            i += 1;
        }
        let Some(v) = num(&mut i) else {
            return false;
        };
        *field = v;
    }
    let [h, m, sec] = hms;
    if h >= 24 || m >= 60 || sec >= 60 {
        return false;
    }
    // Fraction: `.` or `,` and digits.
    if i + 1 < b.len() && matches!(b[i], b'.' | b',') && b[i + 1].is_ascii_digit() {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    if sep == b' ' {
        return i == b.len();
    }
    // Zone: `Z` or ±hh:mm.
    match b.get(i) {
        Some(b'Z') => i + 1 == b.len(),
        Some(b'+' | b'-') => {
            let z = &b[i + 1..];
            z.len() == 5
                && z[0].is_ascii_digit()
                && z[1].is_ascii_digit()
                && z[2] == b':'
                && z[3].is_ascii_digit()
                && z[4].is_ascii_digit()
                && (z[0] - b'0') * 10 + (z[1] - b'0') <= 24
                && (z[3] - b'0') * 10 + (z[4] - b'0') <= 60
        }
        _ => false,
    }
}

fn days_in(month: u32, year: u32) -> u32 {
    match month {
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn y(v: Value) -> String {
        to_string(&v)
    }

    #[test]
    fn strings_that_read_back_as_other_types_are_double_quoted() {
        for s in [
            "",
            "yes",
            "No",
            "on",
            "OFF",
            "y",
            "n",
            "~",
            "null",
            "NULL",
            "true",
            "False",
            "1",
            "-1",
            "+1",
            "0777",
            "0o17",
            "0x1F",
            "0b101",
            "1_000",
            "1.5",
            "1e3",
            ".5",
            "-.inf",
            ".NaN",
            "1:20",
            "190:20:30.15",
            "2021-01-01",
            "2001-12-14t21:59:43.10-05:00",
            "2001-12-14 21:59:43.10",
            "2002-12-14T01:02:03Z",
            "123456789012345678901234567890",
            "0x123456789abcdef0123",
            "0b-1",
            "08",
            "1__0",
        ] {
            let out = y(json!({ "k": s }));
            assert_eq!(out, format!("k: \"{s}\"\n"), "{s:?}");
        }
    }

    #[test]
    fn strings_that_stay_strings_are_plain() {
        for s in [
            "0.3.0",
            "v1.2.3",
            "1.2.3-rc.1",
            "yesterday",
            "nope",
            "Y2K",
            "2021-13-01",
            "2021-02-30",
            "2021-1-1x",
            "2001-12-14T21:59:43",
            "1e400",
            "0x",
            "+",
            ".",
            "1:60",
            "<<",
            "=",
            "a#b",
            "a:b",
            "-a",
            "?a",
            "foo bar",
            "~x",
            "ñandú",
        ] {
            assert_eq!(y(json!({ "k": s })), format!("k: {s}\n"), "{s:?}");
        }
    }

    #[test]
    fn strings_yaml_cannot_hold_plain_are_single_quoted() {
        for (s, w) in [
            ("- a", "'- a'"),
            ("-", "'-'"),
            ("#x", "'#x'"),
            ("a: b", "'a: b'"),
            ("a:", "'a:'"),
            ("x #y", "'x #y'"),
            (" lead", "' lead'"),
            ("trail ", "'trail '"),
            ("it's", "it's"),
            ("'q'", "'''q'''"),
            ("*ref", "'*ref'"),
            ("&a", "'&a'"),
            ("!tag", "'!tag'"),
            ("%x", "'%x'"),
            ("@x", "'@x'"),
            ("`x", "'`x'"),
            ("{a}", "'{a}'"),
            ("[a]", "'[a]'"),
            ("a[b]", "a[b]"),
            ("---", "'---'"),
            ("...x", "'...x'"),
            (": x", "': x'"),
            ("? x", "'? x'"),
            ("|", "'|'"),
            (">", "'>'"),
            ("\"", "'\"'"),
        ] {
            assert_eq!(y(json!({ "k": s })), format!("k: {w}\n"), "{s:?}");
        }
    }

    #[test]
    fn escapes_force_double_quotes() {
        assert_eq!(y(json!({"k": "a\tb"})), "k: \"a\\tb\"\n");
        assert_eq!(y(json!({"k": "bell\u{7}"})), "k: \"bell\\a\"\n");
        assert_eq!(y(json!({"k": "smile 😀"})), "k: \"smile \\U0001F600\"\n");
        assert_eq!(y(json!({"k": "nbsp\u{a0}x"})), "k: nbsp\u{a0}x\n");
        assert_eq!(y(json!({"k": "x\u{85}"})), "k: \"x\\N\"\n");
        // A space before a newline rules out the literal style.
        assert_eq!(y(json!({"k": "a \nb"})), "k: \"a \\nb\"\n");
    }

    #[test]
    fn multi_line_strings_are_literal_blocks() {
        assert_eq!(y(json!({"k": "a\nb"})), "k: |-\n  a\n  b\n");
        assert_eq!(y(json!({"k": "a\nb\n"})), "k: |\n  a\n  b\n");
        assert_eq!(y(json!({"k": "a\n\n"})), "k: |+\n  a\n\n");
        assert_eq!(y(json!({"k": " a\nb"})), "k: |2-\n   a\n  b\n");
        assert_eq!(y(json!({"k": "\na"})), "k: |2-\n\n  a\n");
        assert_eq!(y(json!({"k": "a\n\nb"})), "k: |-\n  a\n\n  b\n");
        assert_eq!(y(json!({"k": "yes\n"})), "k: |\n  yes\n");
        assert_eq!(
            y(json!({"a": {"b": ["x\ny"]}})),
            "a:\n  b:\n  - |-\n    x\n    y\n"
        );
        // Trailing space: no block style.
        assert_eq!(y(json!({"k": "a\nb "})), "k: \"a\\nb \"\n");
    }

    #[test]
    fn layout_of_collections() {
        let v = json!({
            "schema": "olm.channel",
            "entries": [{"name": "a", "skips": ["x", "y"]}, {"name": "b"}],
            "empty": [],
            "obj": {},
            "nested": [[1, 2], {"k": null}],
            // YAML 1.1 reads a plain `y` or `n` as a boolean.
            "n": 1.5,
            "big": 1e6,
            "t": true,
        });
        assert_eq!(
            y(v),
            "big: 1e+06\nempty: []\nentries:\n- name: a\n  skips:\n  - x\n  - \"y\"\n- name: b\n\
             \"n\": 1.5\nnested:\n- - 1\n  - 2\n- k: null\nobj: {}\nschema: olm.channel\nt: true\n"
        );
        assert_eq!(y(json!(["a", "b"])), "- a\n- b\n");
        assert_eq!(y(json!("x")), "x\n");
    }

    #[test]
    fn keys_sort_naturally() {
        let v = json!({"a10": 1, "a9": 2, "Zeta": 3, "_x": 4, "a-b": 5, "a.b": 6, "b": 7});
        assert_eq!(
            y(v),
            "_x: 4\nZeta: 3\na-b: 5\na.b: 6\na9: 2\na10: 1\nb: 7\n"
        );
        assert!(key_less("a1", "a01"));
        assert!(key_less("v1.9", "v1.10"));
        assert!(key_less("x", "xa"));
        assert_eq!(key_cmp("same", "same"), Ordering::Equal);
    }

    #[test]
    fn odd_keys() {
        assert_eq!(y(json!({"yes": 1})), "\"yes\": 1\n");
        assert_eq!(y(json!({"": 1})), "\"\": 1\n");
        assert_eq!(y(json!({"a\nb": 1})), "? |-\n  a\n  b\n: 1\n");
        let long = "k".repeat(129);
        assert_eq!(y(json!({ long.clone(): 1 })), format!("? {long}\n: 1\n"));
    }

    #[test]
    fn long_lines_fold_at_spaces_past_80_columns() {
        let words = "word ".repeat(30);
        let s = words.trim_end();
        let out = y(json!({ "description": s }));
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines.len() > 1, "{out}");
        assert!(lines[1].starts_with("  word"), "{out}");
        // Folded at the first space after column 80.
        assert!(lines[0].len() > 80 && lines[0].len() <= 86, "{out}");
        let back: Vec<&str> = out
            .trim_start_matches("description: ")
            .split_whitespace()
            .collect();
        assert_eq!(back.join(" "), s);
        // No space to fold at: one long line.
        let token = "x".repeat(200);
        assert_eq!(y(json!({ "k": token.clone() })), format!("k: {token}\n"));
        // Double-quoted text folds too, escaping a leading space with `\`.
        let q = format!("{}  tail\u{7}", "a ".repeat(45));
        let out = y(json!({ "k": q }));
        assert!(out.contains("\n  "), "{out}");
    }

    #[test]
    fn floats_print_like_go() {
        for (f, s) in [
            (1.5, "1.5"),
            (1e6, "1e+06"),
            (123456.0, "123456"),
            (1234567.0, "1.234567e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5e-7, "-2.5e-07"),
            (1e21, "1e+21"),
            (1e100, "1e+100"),
            (100.0, "100"),
            (0.1, "0.1"),
        ] {
            assert_eq!(format_float_g(f), s, "{f}");
        }
    }

    #[test]
    fn float_keys_print_like_go_float32() {
        assert_eq!(format_float_g32(0.1), "0.1");
        assert_eq!(format_float_g32(1.5), "1.5");
        assert_eq!(format_float_g32(1e6), "1e+06");
        assert_eq!(format_float_g32(std::f64::consts::PI), "3.1415927");
        assert_eq!(format_float_g32(f64::INFINITY), ".inf");
    }

    #[test]
    fn timestamps() {
        assert!(parse_timestamp("2021-01-01"));
        assert!(parse_timestamp("2021-1-1"));
        assert!(parse_timestamp("2020-02-29"));
        assert!(!parse_timestamp("2021-02-29"));
        assert!(parse_timestamp("2001-12-14T21:59:43.10-05:00"));
        assert!(parse_timestamp("2001-12-14 21:59:43.10"));
        assert!(!parse_timestamp("2001-12-14 21:59:43.10 -5"));
        assert!(!parse_timestamp("2001-12-14T21:59:43"));
        assert!(!parse_timestamp("21-01-01"));
    }
}
