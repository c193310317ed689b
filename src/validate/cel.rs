//! The CEL of `olm.constraint` dependencies: one parser, a checker and an
//! evaluator.
//!
//! OLM compiles `cel.rule` in an environment with one variable,
//! `properties` (a list of maps), the standard CEL functions and macros, and
//! `semver_compare(a, b)` (an int); a rule must compile and its type must be
//! `bool` (operator-framework/api `pkg/constraints/cel.go`, used by
//! operator-registry's bundle validation). This module parses the rule with
//! CEL's grammar, resolves identifiers and function names in that
//! environment and infers the result type, which covers the errors
//! upstream reports: syntax errors, undeclared references and non-bool rules.
//!
//! [`Program`] then evaluates a checked rule against a bundle's properties,
//! as OLM v0's resolver does for each candidate (operator-lifecycle-manager
//! `cache.celPredicate`): the properties are a list of `{type, value}` maps
//! whose values are the JSON as decoded (numbers are doubles); an
//! evaluation error makes the candidate fail the rule. The evaluator covers
//! what that environment offers: literals, lists and maps, the operators,
//! `has`, the macros `exists`, `all`, `exists_one`, `map`, `filter`, the
//! conversions, `size`, `contains`, `startsWith`, `endsWith` and
//! `semver_compare` (blang's tolerant parse). `matches` (RE2) and the time
//! functions type-check but do not evaluate: a rule using them is reported
//! as not evaluable rather than guessed.
//!
//! Why our own and not a crate: the rules are small, the environment is
//! fixed, and the checker's messages (upstream's wording) already live
//! here; the `cel` crate would bring a second parser with other messages
//! and a larger build for the one function OLM adds.

/// Why a rule was refused or its evaluation failed, in cel-go's words (as
/// OLM reports them).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CelError {
    /// When it happened.
    pub stage: CelStage,
    /// cel-go's message (`Syntax error: ...`, `no such key: ...`).
    pub message: String,
}

/// When a [`CelError`] happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CelStage {
    /// Parsing or checking the rule (OLM refuses the bundle).
    Compile,
    /// Evaluating it against a bundle's properties (OLM counts the bundle as
    /// not satisfying the rule).
    Evaluate,
}

/// The messages the lexer, parser, checker and evaluator pass up; they
/// become a [`CelError`] at the public functions.
type Msg = String;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Int(i64),
    UInt(u64),
    Double(f64),
    Str(String),
    Bytes(Vec<u8>),
    Op(&'static str),
}

/// The text of a string literal between its quotes, escapes decoded.
fn unescape(body: &str, raw: bool) -> Result<Vec<u8>, Msg> {
    if raw {
        return Ok(body.as_bytes().to_vec());
    }
    let b = body.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let bad = || Msg::from("Syntax error: invalid escape sequence in string literal");
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = *b.get(i + 1).ok_or_else(bad)?;
        i += 2;
        let simple = match c {
            b'n' => Some(b'\n'),
            b't' => Some(b'\t'),
            b'r' => Some(b'\r'),
            b'a' => Some(7),
            b'b' => Some(8),
            b'f' => Some(12),
            b'v' => Some(11),
            b'\\' | b'\'' | b'"' | b'`' | b'?' => Some(c),
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            continue;
        }
        let (len, radix) = match c {
            b'x' | b'X' => (2, 16),
            b'u' => (4, 16),
            b'U' => (8, 16),
            b'0'..=b'3' => {
                i -= 1;
                (3, 8)
            }
            _ => return Err(bad()),
        };
        let digits = body.get(i..i + len).ok_or_else(bad)?;
        let n = u32::from_str_radix(digits, radix).map_err(|_| bad())?;
        i += len;
        if matches!(c, b'u' | b'U') {
            let ch = char::from_u32(n).ok_or_else(bad)?;
            let mut buf = [0u8; 4];
            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
        } else {
            out.push(u8::try_from(n).map_err(|_| bad())?);
        }
    }
    Ok(out)
}

const OPS: &[&str] = &[
    "||", "&&", "==", "!=", "<=", ">=", "<", ">", "!", "+", "-", "*", "/", "%", "?", ":", ".", ",",
    "(", ")", "[", "]", "{", "}",
];

fn lex(src: &str) -> Result<Vec<Tok>, Msg> {
    let b = src.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        // String and bytes literals, with optional r/b prefixes.
        let mut j = i;
        let mut is_bytes = false;
        let mut raw = false;
        while j < b.len() && j - i < 2 && matches!(b[j], b'r' | b'R' | b'b' | b'B') {
            if matches!(b[j], b'b' | b'B') {
                is_bytes = true;
            } else {
                raw = true;
            }
            j += 1;
        }
        if j < b.len() && (b[j] == b'"' || b[j] == b'\'') {
            let q = b[j];
            let triple = b.get(j + 1) == Some(&q) && b.get(j + 2) == Some(&q);
            let mut k = if triple { j + 3 } else { j + 1 };
            loop {
                if k >= b.len() {
                    return Err("Syntax error: unterminated string literal".into());
                }
                if !raw && b[k] == b'\\' {
                    k += 2;
                    continue;
                }
                if triple {
                    if b[k] == q && b.get(k + 1) == Some(&q) && b.get(k + 2) == Some(&q) {
                        k += 3;
                        break;
                    }
                } else if b[k] == q {
                    k += 1;
                    break;
                } else if b[k] == b'\n' {
                    return Err("Syntax error: newline in string literal".into());
                }
                k += 1;
            }
            let body = if triple {
                &src[j + 3..k - 3]
            } else {
                &src[j + 1..k - 1]
            };
            let bytes = unescape(body, raw)?;
            out.push(if is_bytes {
                Tok::Bytes(bytes)
            } else {
                Tok::Str(
                    String::from_utf8(bytes)
                        .map_err(|_| Msg::from("Syntax error: string literal is not UTF-8"))?,
                )
            });
            i = k;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(src[start..i].to_string()));
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            if c == b'0' && matches!(b.get(i + 1), Some(b'x' | b'X')) {
                i += 2;
                while i < b.len() && b[i].is_ascii_hexdigit() {
                    i += 1;
                }
            } else {
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            let mut double = false;
            if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
                double = true;
                i += 1;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            if i < b.len() && matches!(b[i], b'e' | b'E') {
                double = true;
                i += 1;
                if i < b.len() && matches!(b[i], b'+' | b'-') {
                    i += 1;
                }
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            let text = &src[start..i];
            let int_of = |t: &str| -> Result<u64, Msg> {
                let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                    Some(h) => u64::from_str_radix(h, 16),
                    None => t.parse(),
                };
                parsed.map_err(|_| format!("Syntax error: invalid number literal '{t}'"))
            };
            if !double && i < b.len() && matches!(b[i], b'u' | b'U') {
                i += 1;
                out.push(Tok::UInt(int_of(text)?));
            } else if double {
                out.push(Tok::Double(text.parse().map_err(|_| {
                    format!("Syntax error: invalid number literal '{text}'")
                })?));
            } else {
                // -9223372036854775808 is a negation of this literal.
                let n = int_of(text)?;
                out.push(Tok::Int(if n == 1 << 63 {
                    i64::MIN
                } else {
                    i64::try_from(n)
                        .map_err(|_| format!("Syntax error: integer literal {text} overflows"))?
                }));
            }
            continue;
        }
        match OPS.iter().find(|op| src[i..].starts_with(**op)) {
            Some(op) => {
                out.push(Tok::Op(op));
                i += op.len();
            }
            None => {
                return Err(format!(
                    "Syntax error: token recognition error at: '{}'",
                    src[i..].chars().next().unwrap_or('?')
                ))
            }
        }
    }
    Ok(out)
}

/// The type the checker infers; `Dyn` when it cannot know.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Ty {
    Bool,
    Int,
    UInt,
    Double,
    Str,
    Bytes,
    Null,
    List,
    Map,
    Type,
    Dyn,
}

impl Ty {
    fn name(self) -> &'static str {
        match self {
            Ty::Bool => "bool",
            Ty::Int => "int",
            Ty::UInt => "uint",
            Ty::Double => "double",
            Ty::Str => "string",
            Ty::Bytes => "bytes",
            Ty::Null => "null_type",
            Ty::List => "list",
            Ty::Map => "map",
            Ty::Type => "type",
            Ty::Dyn => "dyn",
        }
    }
}

const GLOBAL_FUNCS: &[(&str, Ty)] = &[
    ("semver_compare", Ty::Int),
    ("size", Ty::Int),
    ("int", Ty::Int),
    ("uint", Ty::UInt),
    ("double", Ty::Double),
    ("string", Ty::Str),
    ("bytes", Ty::Bytes),
    ("bool", Ty::Bool),
    ("dyn", Ty::Dyn),
    ("type", Ty::Type),
    ("duration", Ty::Dyn),
    ("timestamp", Ty::Dyn),
    ("matches", Ty::Bool),
];

const MEMBER_FUNCS: &[(&str, Ty)] = &[
    ("contains", Ty::Bool),
    ("startsWith", Ty::Bool),
    ("endsWith", Ty::Bool),
    ("matches", Ty::Bool),
    ("size", Ty::Int),
    ("getDate", Ty::Int),
    ("getDayOfMonth", Ty::Int),
    ("getDayOfWeek", Ty::Int),
    ("getDayOfYear", Ty::Int),
    ("getFullYear", Ty::Int),
    ("getHours", Ty::Int),
    ("getMilliseconds", Ty::Int),
    ("getMinutes", Ty::Int),
    ("getMonth", Ty::Int),
    ("getSeconds", Ty::Int),
];

const TYPE_NAMES: &[&str] = &[
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "bool",
    "list",
    "map",
    "type",
    "null_type",
    "dyn",
];

const RESERVED: &[&str] = &[
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// A parsed rule.
#[derive(Clone, Debug, PartialEq)]
enum Expr {
    Int(i64),
    UInt(u64),
    Double(f64),
    Str(String),
    Bytes(Vec<u8>),
    Ident(String),
    List(Vec<Expr>),
    Map(Vec<(Expr, Expr)>),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    /// `||`, `&&`, relations, `in`, arithmetic.
    Binary(&'static str, Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    Select(Box<Expr>, String),
    Index(Box<Expr>, Box<Expr>),
    /// A function call, a member call when `target` is given.
    Call {
        target: Option<Box<Expr>>,
        name: String,
        args: Vec<Expr>,
    },
    /// `target.exists(var, ...)` and the other comprehension macros.
    Macro {
        target: Box<Expr>,
        name: String,
        var: String,
        args: Vec<Expr>,
    },
    /// `has(operand)`.
    Has(Box<Expr>),
}

/// cel-go's default `maxRecursionDepth` (`parser.NewParser`): how deep
/// the parse may nest (parentheses, conditionals, relations, arithmetic,
/// selections, calls, indexing). The tree built is never deeper than
/// this, so checking, evaluating and dropping it cannot exhaust the stack.
const MAX_RECURSION_DEPTH: usize = 250;

/// How deep sub-expressions (parentheses, arguments, list items, ...)
/// may nest: each costs this parser about ten stack frames, so it is
/// held below [`MAX_RECURSION_DEPTH`] to fit a 2 MiB thread stack in
/// debug builds.
const MAX_NESTING: usize = 100;

/// cel-go's default `expressionSizeCodePointLimit`.
const MAX_CODE_POINTS: usize = 100_000;

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    /// The nesting of the node being parsed, bounded by
    /// [`MAX_RECURSION_DEPTH`].
    depth: usize,
    /// The nesting of `expr` calls, bounded by [`MAX_NESTING`].
    nesting: usize,
}

fn bx(e: Expr) -> Box<Expr> {
    Box::new(e)
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Some(Tok::Op(o)) if *o == op)
    }
    fn eat(&mut self, op: &str) -> bool {
        if self.is_op(op) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, op: &str) -> Result<(), Msg> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(format!(
                "Syntax error: missing '{op}' at {}",
                self.describe_here()
            ))
        }
    }
    fn describe_here(&self) -> String {
        match self.peek() {
            None => "'<EOF>'".into(),
            Some(Tok::Ident(s)) => format!("'{s}'"),
            Some(Tok::Op(o)) => format!("'{o}'"),
            Some(_) => "a literal".into(),
        }
    }

    /// One level deeper; refused past [`MAX_RECURSION_DEPTH`] with
    /// cel-go's message.
    fn deeper(&mut self) -> Result<(), Msg> {
        self.depth += 1;
        if self.depth > MAX_RECURSION_DEPTH {
            return Err("ERROR: max recursion depth exceeded".into());
        }
        Ok(())
    }

    fn expr(&mut self) -> Result<Expr, Msg> {
        self.deeper()?;
        self.nesting += 1;
        if self.nesting > MAX_NESTING {
            return Err("ERROR: max recursion depth exceeded".into());
        }
        let c = self.or()?;
        let e = if self.eat("?") {
            let a = self.or()?;
            self.expect(":")?;
            let b = self.expr()?;
            Expr::Cond(bx(c), bx(a), bx(b))
        } else {
            c
        };
        self.depth -= 1;
        self.nesting -= 1;
        Ok(e)
    }
    fn or(&mut self) -> Result<Expr, Msg> {
        let mut terms = vec![self.and()?];
        while self.eat("||") {
            terms.push(self.and()?);
        }
        Ok(balance("||", terms))
    }
    fn and(&mut self) -> Result<Expr, Msg> {
        let mut terms = vec![self.relation()?];
        while self.eat("&&") {
            terms.push(self.relation()?);
        }
        Ok(balance("&&", terms))
    }
    /// A left-deep chain of binary operators at one precedence level;
    /// each operator is one level deeper (cel-go counts each `relation`
    /// and `calc` node the same way).
    fn chain(
        &mut self,
        op_here: fn(&Parser) -> Option<&'static str>,
        operand: fn(&mut Parser) -> Result<Expr, Msg>,
    ) -> Result<Expr, Msg> {
        let start = self.depth;
        let mut e = operand(self)?;
        while let Some(op) = op_here(self) {
            self.pos += 1;
            self.deeper()?;
            e = Expr::Binary(op, bx(e), bx(operand(self)?));
        }
        self.depth = start;
        Ok(e)
    }
    fn relation(&mut self) -> Result<Expr, Msg> {
        self.chain(
            |p| match p.peek() {
                Some(Tok::Op(o)) if ["==", "!=", "<=", ">=", "<", ">"].contains(o) => Some(*o),
                Some(Tok::Ident(s)) if s == "in" => Some("in"),
                _ => None,
            },
            Parser::addition,
        )
    }
    fn addition(&mut self) -> Result<Expr, Msg> {
        self.chain(
            |p| match p.peek() {
                Some(Tok::Op(o)) if ["+", "-"].contains(o) => Some(*o),
                _ => None,
            },
            Parser::mult,
        )
    }
    fn mult(&mut self) -> Result<Expr, Msg> {
        self.chain(
            |p| match p.peek() {
                Some(Tok::Op(o)) if ["*", "/", "%"].contains(o) => Some(*o),
                _ => None,
            },
            Parser::unary,
        )
    }
    fn unary(&mut self) -> Result<Expr, Msg> {
        let start = self.depth;
        let mut ops = Vec::new();
        while let Some(op) = ["!", "-"].into_iter().find(|op| self.is_op(op)) {
            self.pos += 1;
            self.deeper()?;
            ops.push(op);
        }
        let mut e = self.member()?;
        for op in ops.into_iter().rev() {
            e = match op {
                "!" => Expr::Not(bx(e)),
                _ => Expr::Neg(bx(e)),
            };
        }
        self.depth = start;
        Ok(e)
    }
    fn args(&mut self) -> Result<Vec<Expr>, Msg> {
        let mut out = Vec::new();
        if self.eat(")") {
            return Ok(out);
        }
        loop {
            out.push(self.expr()?);
            if self.eat(")") {
                return Ok(out);
            }
            self.expect(",")?;
        }
    }
    /// `target.fn(var, body...)` for the comprehension macros.
    fn macro_call(&mut self, target: Expr, name: &str) -> Result<Expr, Msg> {
        let var = match self.peek() {
            Some(Tok::Ident(v)) => v.clone(),
            _ => {
                return Err(format!(
                    "Syntax error: argument is not an identifier in {name}()"
                ))
            }
        };
        self.pos += 1;
        self.expect(",")?;
        let mut args = vec![self.expr()?];
        while self.eat(",") {
            args.push(self.expr()?);
        }
        self.expect(")")?;
        let ok_arity = match name {
            "map" => args.len() == 1 || args.len() == 2,
            _ => args.len() == 1,
        };
        if !ok_arity {
            return Err(format!("ERROR: wrong number of arguments to {name}()"));
        }
        Ok(Expr::Macro {
            target: bx(target),
            name: name.to_string(),
            var,
            args,
        })
    }
    fn member(&mut self) -> Result<Expr, Msg> {
        let start = self.depth;
        let mut e = self.primary()?;
        loop {
            if self.is_op(".") || self.is_op("[") {
                self.deeper()?;
            }
            if self.eat(".") {
                let name = match self.peek() {
                    Some(Tok::Ident(n)) => n.clone(),
                    _ => {
                        return Err(format!(
                            "Syntax error: mismatched input {} expecting IDENTIFIER",
                            self.describe_here()
                        ))
                    }
                };
                self.pos += 1;
                if self.eat("(") {
                    e = match name.as_str() {
                        "exists" | "all" | "exists_one" | "map" | "filter" => {
                            self.macro_call(e, &name)?
                        }
                        _ => Expr::Call {
                            target: Some(bx(e)),
                            name,
                            args: self.args()?,
                        },
                    };
                } else {
                    e = Expr::Select(bx(e), name);
                }
            } else if self.eat("[") {
                let i = self.expr()?;
                self.expect("]")?;
                e = Expr::Index(bx(e), bx(i));
            } else {
                self.depth = start;
                return Ok(e);
            }
        }
    }
    fn primary(&mut self) -> Result<Expr, Msg> {
        let Some(tok) = self.peek().cloned() else {
            return Err("Syntax error: mismatched input '<EOF>'".into());
        };
        self.pos += 1;
        match tok {
            Tok::Int(n) => Ok(Expr::Int(n)),
            Tok::UInt(n) => Ok(Expr::UInt(n)),
            Tok::Double(d) => Ok(Expr::Double(d)),
            Tok::Str(s) => Ok(Expr::Str(s)),
            Tok::Bytes(b) => Ok(Expr::Bytes(b)),
            Tok::Op("(") => {
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Op("[") => {
                let mut items = Vec::new();
                if !self.eat("]") {
                    loop {
                        items.push(self.expr()?);
                        if self.eat("]") {
                            break;
                        }
                        self.expect(",")?;
                        if self.eat("]") {
                            break;
                        }
                    }
                }
                Ok(Expr::List(items))
            }
            Tok::Op("{") => {
                let mut items = Vec::new();
                if !self.eat("}") {
                    loop {
                        let k = self.expr()?;
                        self.expect(":")?;
                        items.push((k, self.expr()?));
                        if self.eat("}") {
                            break;
                        }
                        self.expect(",")?;
                        if self.eat("}") {
                            break;
                        }
                    }
                }
                Ok(Expr::Map(items))
            }
            Tok::Op(".") => {
                // A leading `.` (a root-scoped name) may repeat; each is
                // one level deeper.
                self.deeper()?;
                let e = self.primary();
                self.depth -= 1;
                e
            }
            Tok::Ident(name) => {
                if RESERVED.contains(&name.as_str()) || name == "in" {
                    return Err(format!("Syntax error: reserved identifier: {name}"));
                }
                if self.eat("(") {
                    if name == "has" {
                        let e = self.expr()?;
                        self.expect(")")?;
                        return Ok(Expr::Has(bx(e)));
                    }
                    return Ok(Expr::Call {
                        target: None,
                        name,
                        args: self.args()?,
                    });
                }
                Ok(Expr::Ident(name))
            }
            Tok::Op(o) => Err(format!("Syntax error: extraneous input '{o}'")),
        }
    }
}

/// The type of `e` in OLM's environment; errors for undeclared names.
fn check(e: &Expr, scope: &mut Vec<String>) -> Result<Ty, Msg> {
    let undeclared = |n: &str| format!("ERROR: undeclared reference to '{n}' (in container '')");
    Ok(match e {
        Expr::Int(_) => Ty::Int,
        Expr::UInt(_) => Ty::UInt,
        Expr::Double(_) => Ty::Double,
        Expr::Str(_) => Ty::Str,
        Expr::Bytes(_) => Ty::Bytes,
        Expr::Ident(name) => match name.as_str() {
            "true" | "false" => Ty::Bool,
            "null" => Ty::Null,
            "properties" => Ty::List,
            _ if scope.contains(name) => Ty::Dyn,
            _ if TYPE_NAMES.contains(&name.as_str()) => Ty::Type,
            _ => return Err(undeclared(name)),
        },
        Expr::List(items) => {
            for i in items {
                check(i, scope)?;
            }
            Ty::List
        }
        Expr::Map(items) => {
            for (k, v) in items {
                check(k, scope)?;
                check(v, scope)?;
            }
            Ty::Map
        }
        Expr::Not(x) => {
            check(x, scope)?;
            Ty::Bool
        }
        Expr::Neg(x) => check(x, scope)?,
        Expr::Binary(op, a, b) => {
            let ta = check(a, scope)?;
            let tb = check(b, scope)?;
            match *op {
                "||" | "&&" | "==" | "!=" | "<" | "<=" | ">" | ">=" | "in" => Ty::Bool,
                _ if ta == tb => ta,
                _ => Ty::Dyn,
            }
        }
        Expr::Cond(c, a, b) => {
            check(c, scope)?;
            let ta = check(a, scope)?;
            let tb = check(b, scope)?;
            if ta == tb {
                ta
            } else {
                Ty::Dyn
            }
        }
        Expr::Select(x, _) | Expr::Index(x, _) => {
            check(x, scope)?;
            if let Expr::Index(_, i) = e {
                check(i, scope)?;
            }
            Ty::Dyn
        }
        Expr::Has(x) => {
            check(x, scope)?;
            Ty::Bool
        }
        Expr::Call { target, name, args } => {
            if let Some(t) = target {
                check(t, scope)?;
            }
            for a in args {
                check(a, scope)?;
            }
            let table = if target.is_some() {
                MEMBER_FUNCS
            } else {
                GLOBAL_FUNCS
            };
            match table.iter().find(|(n, _)| n == name) {
                Some((_, ty)) => *ty,
                None => return Err(undeclared(name)),
            }
        }
        Expr::Macro {
            target,
            name,
            var,
            args,
        } => {
            check(target, scope)?;
            scope.push(var.clone());
            let mut result = Ok(());
            for a in args {
                if let Err(e) = check(a, scope) {
                    result = Err(e);
                    break;
                }
            }
            scope.pop();
            result?;
            match name.as_str() {
                "map" | "filter" => Ty::List,
                _ => Ty::Bool,
            }
        }
    })
}

/// `||` or `&&` over `terms` as a balanced tree, as cel-go's parser
/// builds it (`newBalancer`): a long chain stays shallow. Both operators
/// are commutative in CEL, so the shape does not change the result.
fn balance(op: &'static str, mut terms: Vec<Expr>) -> Expr {
    if terms.len() == 1 {
        return terms.remove(0);
    }
    let right = terms.split_off(terms.len() / 2);
    Expr::Binary(op, bx(balance(op, terms)), bx(balance(op, right)))
}

fn parse(rule: &str) -> Result<Expr, Msg> {
    let size = rule.chars().count();
    if size > MAX_CODE_POINTS {
        return Err(format!(
            "ERROR: expression code point size exceeds limit: size: {size}, limit {MAX_CODE_POINTS}"
        ));
    }
    let toks = lex(rule)?;
    let mut p = Parser {
        toks,
        pos: 0,
        depth: 0,
        nesting: 0,
    };
    let e = p.expr()?;
    if p.pos < p.toks.len() {
        return Err(format!(
            "Syntax error: extraneous input {}",
            p.describe_here()
        ));
    }
    Ok(e)
}

/// Checks a `cel.rule`: `Ok` when OLM would compile it to a boolean rule.
pub fn check_rule(rule: &str) -> Result<(), CelError> {
    Program::compile(rule).map(|_| ())
}

/// A compiled `cel.rule`, ready to evaluate against a bundle.
#[derive(Clone, Debug)]
pub struct Program {
    rule: String,
    expr: Expr,
}

impl PartialEq for Program {
    fn eq(&self, other: &Program) -> bool {
        self.rule == other.rule
    }
}

impl Eq for Program {}

impl Program {
    /// Parses and checks a rule as OLM's `CelEnvironment.Validate` does.
    pub fn compile(rule: &str) -> Result<Program, CelError> {
        let compiled = || -> Result<Expr, Msg> {
            let expr = parse(rule)?;
            match check(&expr, &mut Vec::new())? {
                Ty::Bool => Ok(expr),
                other => Err(format!(
                    "the rule's type is {}, not bool: OLM requires a boolean rule",
                    other.name()
                )),
            }
        };
        let expr = compiled().map_err(|message| CelError {
            stage: CelStage::Compile,
            message,
        })?;
        Ok(Program {
            rule: rule.to_string(),
            expr,
        })
    }

    /// The rule as written.
    pub fn rule(&self) -> &str {
        &self.rule
    }

    /// Evaluates the rule with `properties` bound to a bundle's properties
    /// (`{type, value}` objects). `Err` when evaluation fails (OLM then
    /// counts the bundle as not satisfying the rule).
    pub fn evaluate(&self, properties: &[serde_json::Value]) -> Result<bool, CelError> {
        let props = Val::List(properties.iter().map(Val::from_json).collect());
        let mut env = Env {
            properties: props,
            vars: Vec::new(),
            steps: 0,
        };
        let value = env.eval(&self.expr).and_then(|v| match v {
            Val::Bool(b) => Ok(b),
            other => Err(format!(
                "the rule evaluated to a {}, not a bool",
                other.type_name()
            )),
        });
        value.map_err(|message| CelError {
            stage: CelStage::Evaluate,
            message,
        })
    }
}

/// A CEL value.
#[derive(Clone, Debug)]
enum Val {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Double(f64),
    Str(String),
    Bytes(Vec<u8>),
    List(Vec<Val>),
    Map(Vec<(Val, Val)>),
    Type(String),
}

impl Val {
    /// JSON as Go's `encoding/json` decodes it into `interface{}`:
    /// numbers become doubles.
    fn from_json(v: &serde_json::Value) -> Val {
        use serde_json::Value as J;
        match v {
            J::Null => Val::Null,
            J::Bool(b) => Val::Bool(*b),
            J::Number(n) => Val::Double(n.as_f64().unwrap_or(f64::NAN)),
            J::String(s) => Val::Str(s.clone()),
            J::Array(a) => Val::List(a.iter().map(Val::from_json).collect()),
            J::Object(o) => Val::Map(
                o.iter()
                    .map(|(k, v)| (Val::Str(k.clone()), Val::from_json(v)))
                    .collect(),
            ),
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            Val::Null => "null_type",
            Val::Bool(_) => "bool",
            Val::Int(_) => "int",
            Val::UInt(_) => "uint",
            Val::Double(_) => "double",
            Val::Str(_) => "string",
            Val::Bytes(_) => "bytes",
            Val::List(_) => "list",
            Val::Map(_) => "map",
            Val::Type(_) => "type",
        }
    }

    fn as_f64(&self) -> Option<f64> {
        match self {
            Val::Int(i) => Some(*i as f64),
            Val::UInt(u) => Some(*u as f64),
            Val::Double(d) => Some(*d),
            _ => None,
        }
    }

    /// CEL's heterogeneous equality: numbers compare by value across
    /// int, uint and double.
    fn equals(&self, other: &Val) -> bool {
        match (self, other) {
            (Val::Null, Val::Null) => true,
            (Val::Bool(a), Val::Bool(b)) => a == b,
            (Val::Str(a), Val::Str(b)) => a == b,
            (Val::Bytes(a), Val::Bytes(b)) => a == b,
            (Val::Type(a), Val::Type(b)) => a == b,
            (Val::Int(a), Val::Int(b)) => a == b,
            (Val::UInt(a), Val::UInt(b)) => a == b,
            (Val::List(a), Val::List(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.equals(y))
            }
            (Val::Map(a), Val::Map(b)) => {
                a.len() == b.len()
                    && a.iter().all(|(k, v)| {
                        b.iter()
                            .find(|(k2, _)| k.equals(k2))
                            .is_some_and(|(_, v2)| v.equals(v2))
                    })
            }
            (x, y) => match (x.as_f64(), y.as_f64()) {
                (Some(a), Some(b)) => a == b,
                _ => false,
            },
        }
    }

    fn compare(&self, other: &Val) -> Result<std::cmp::Ordering, Msg> {
        match (self, other) {
            (Val::Str(a), Val::Str(b)) => Ok(a.cmp(b)),
            (Val::Bytes(a), Val::Bytes(b)) => Ok(a.cmp(b)),
            (Val::Bool(a), Val::Bool(b)) => Ok(a.cmp(b)),
            (Val::Int(a), Val::Int(b)) => Ok(a.cmp(b)),
            (Val::UInt(a), Val::UInt(b)) => Ok(a.cmp(b)),
            (x, y) => match (x.as_f64(), y.as_f64()) {
                (Some(a), Some(b)) => a
                    .partial_cmp(&b)
                    .ok_or_else(|| "comparison with NaN".to_string()),
                _ => Err(no_overload("_<_", x, y)),
            },
        }
    }

    fn to_text(&self) -> Result<String, Msg> {
        Ok(match self {
            Val::Str(s) => s.clone(),
            Val::Bool(b) => b.to_string(),
            Val::Int(i) => i.to_string(),
            Val::UInt(u) => u.to_string(),
            Val::Double(d) => d.to_string(),
            Val::Bytes(b) => {
                String::from_utf8(b.clone()).map_err(|_| "invalid UTF-8 in bytes".to_string())?
            }
            Val::Type(t) => t.clone(),
            other => return Err(format!("no such overload: string({})", other.type_name())),
        })
    }
}

fn no_overload(op: &str, a: &Val, b: &Val) -> Msg {
    format!(
        "no such overload: {op} on {} and {}",
        a.type_name(),
        b.type_name()
    )
}

/// blang/semver's `ParseTolerant`, with cel-go's error for OLM's
/// `semver_compare`.
fn tolerant_semver(s: &str) -> Result<semver::Version, Msg> {
    crate::semver_range::parse_tolerant(s)
        .map_err(|_| format!("unable to parse '{s}' to semver format"))
}

/// Evaluation steps allowed, so a hostile rule cannot spin.
const EVAL_BUDGET: usize = 1_000_000;

struct Env {
    properties: Val,
    vars: Vec<(String, Val)>,
    steps: usize,
}

impl Env {
    fn eval(&mut self, e: &Expr) -> Result<Val, Msg> {
        self.steps += 1;
        if self.steps > EVAL_BUDGET {
            return Err("the rule took too many evaluation steps".into());
        }
        Ok(match e {
            Expr::Int(n) => Val::Int(*n),
            Expr::UInt(n) => Val::UInt(*n),
            Expr::Double(d) => Val::Double(*d),
            Expr::Str(s) => Val::Str(s.clone()),
            Expr::Bytes(b) => Val::Bytes(b.clone()),
            Expr::Ident(name) => {
                if let Some((_, v)) = self.vars.iter().rev().find(|(n, _)| n == name) {
                    return Ok(v.clone());
                }
                match name.as_str() {
                    "true" => Val::Bool(true),
                    "false" => Val::Bool(false),
                    "null" => Val::Null,
                    "properties" => self.properties.clone(),
                    t if TYPE_NAMES.contains(&t) => Val::Type(t.to_string()),
                    _ => return Err(format!("undeclared reference to '{name}'")),
                }
            }
            Expr::List(items) => Val::List(
                items
                    .iter()
                    .map(|i| self.eval(i))
                    .collect::<Result<_, _>>()?,
            ),
            Expr::Map(items) => {
                let mut out = Vec::new();
                for (k, v) in items {
                    out.push((self.eval(k)?, self.eval(v)?));
                }
                Val::Map(out)
            }
            Expr::Not(x) => match self.eval(x)? {
                Val::Bool(b) => Val::Bool(!b),
                other => return Err(format!("no such overload: !{}", other.type_name())),
            },
            Expr::Neg(x) => match self.eval(x)? {
                Val::Int(i) => Val::Int(i.checked_neg().ok_or("integer overflow")?),
                Val::Double(d) => Val::Double(-d),
                other => return Err(format!("no such overload: -{}", other.type_name())),
            },
            Expr::Binary(op, a, b) => self.binary(op, a, b)?,
            Expr::Cond(c, a, b) => match self.eval(c)? {
                Val::Bool(true) => self.eval(a)?,
                Val::Bool(false) => self.eval(b)?,
                other => return Err(format!("no such overload: {} ? _ : _", other.type_name())),
            },
            Expr::Select(x, field) => match self.eval(x)? {
                Val::Map(m) => match m
                    .iter()
                    .find(|(k, _)| matches!(k, Val::Str(s) if s == field))
                {
                    Some((_, v)) => v.clone(),
                    None => return Err(format!("no such key: {field}")),
                },
                other => {
                    return Err(format!(
                        "type '{}' does not support field selection",
                        other.type_name()
                    ))
                }
            },
            Expr::Has(x) => match x.as_ref() {
                Expr::Select(target, field) => match self.eval(target)? {
                    Val::Map(m) => Val::Bool(
                        m.iter()
                            .any(|(k, _)| matches!(k, Val::Str(s) if s == field)),
                    ),
                    other => {
                        return Err(format!(
                            "invalid type for field selection: {}",
                            other.type_name()
                        ))
                    }
                },
                _ => return Err("invalid argument to has() macro".into()),
            },
            Expr::Index(x, i) => {
                let target = self.eval(x)?;
                let key = self.eval(i)?;
                match target {
                    Val::List(l) => {
                        let n = match key {
                            Val::Int(n) => n,
                            Val::UInt(n) => i64::try_from(n).unwrap_or(i64::MAX),
                            Val::Double(d) if d.fract() == 0.0 => d as i64,
                            other => {
                                return Err(format!(
                                    "no such overload: list[{}]",
                                    other.type_name()
                                ))
                            }
                        };
                        usize::try_from(n)
                            .ok()
                            .and_then(|n| l.get(n).cloned())
                            .ok_or_else(|| format!("index out of range: {n}"))?
                    }
                    Val::Map(m) => match m.iter().find(|(k, _)| k.equals(&key)) {
                        Some((_, v)) => v.clone(),
                        None => return Err(format!("no such key: {}", key.to_text()?)),
                    },
                    other => return Err(format!("no such overload: {}[_]", other.type_name())),
                }
            }
            Expr::Call { target, name, args } => {
                let mut vals = Vec::new();
                if let Some(t) = target {
                    vals.push(self.eval(t)?);
                }
                for a in args {
                    vals.push(self.eval(a)?);
                }
                call(name, &vals)?
            }
            Expr::Macro {
                target,
                name,
                var,
                args,
            } => self.comprehension(target, name, var, args)?,
        })
    }

    fn binary(&mut self, op: &str, a: &Expr, b: &Expr) -> Result<Val, Msg> {
        // `&&` and `||` absorb an error when the other side decides.
        if op == "&&" || op == "||" {
            let decisive = op == "||";
            let left = self.eval(a).and_then(|v| match v {
                Val::Bool(x) => Ok(x),
                other => Err(format!("no such overload: {}{op}_", other.type_name())),
            });
            if left == Ok(decisive) {
                return Ok(Val::Bool(decisive));
            }
            let right = self.eval(b).and_then(|v| match v {
                Val::Bool(x) => Ok(x),
                other => Err(format!("no such overload: _{op}{}", other.type_name())),
            });
            return match (left, right) {
                (_, Ok(r)) if r == decisive => Ok(Val::Bool(decisive)),
                (Ok(_), Ok(_)) => Ok(Val::Bool(!decisive)),
                (Err(e), _) | (_, Err(e)) => Err(e),
            };
        }
        let x = self.eval(a)?;
        let y = self.eval(b)?;
        use std::cmp::Ordering::*;
        Ok(match op {
            "==" => Val::Bool(x.equals(&y)),
            "!=" => Val::Bool(!x.equals(&y)),
            "<" => Val::Bool(x.compare(&y)? == Less),
            "<=" => Val::Bool(x.compare(&y)? != Greater),
            ">" => Val::Bool(x.compare(&y)? == Greater),
            ">=" => Val::Bool(x.compare(&y)? != Less),
            "in" => match &y {
                Val::List(l) => Val::Bool(l.iter().any(|v| v.equals(&x))),
                Val::Map(m) => Val::Bool(m.iter().any(|(k, _)| k.equals(&x))),
                _ => return Err(no_overload("@in", &x, &y)),
            },
            _ => arith(op, x, y)?,
        })
    }

    fn comprehension(
        &mut self,
        target: &Expr,
        name: &str,
        var: &str,
        args: &[Expr],
    ) -> Result<Val, Msg> {
        let items: Vec<Val> = match self.eval(target)? {
            Val::List(l) => l,
            Val::Map(m) => m.into_iter().map(|(k, _)| k).collect(),
            other => return Err(format!("no such overload: {}.{name}()", other.type_name())),
        };
        let mut found = 0usize;
        let mut any_true = false;
        let mut all_true = true;
        let mut first_err: Option<Msg> = None;
        let mut mapped = Vec::new();
        for item in items {
            self.vars.push((var.to_string(), item.clone()));
            let r = (|| -> Result<(), Msg> {
                match name {
                    "map" => {
                        let keep = match args {
                            [filter, _] => matches!(self.eval(filter)?, Val::Bool(true)),
                            _ => true,
                        };
                        if keep {
                            let body = args.last().ok_or("map() needs a body")?;
                            mapped.push(self.eval(body)?);
                        }
                    }
                    "filter" => {
                        if matches!(self.eval(&args[0])?, Val::Bool(true)) {
                            mapped.push(item.clone());
                        }
                    }
                    _ => match self.eval(&args[0])? {
                        Val::Bool(true) => {
                            any_true = true;
                            found += 1;
                        }
                        Val::Bool(false) => all_true = false,
                        other => {
                            return Err(format!(
                                "no such overload: {name}() body is {}",
                                other.type_name()
                            ))
                        }
                    },
                }
                Ok(())
            })();
            self.vars.pop();
            if let Err(e) = r {
                // exists/all absorb an error when another element decides.
                if matches!(name, "map" | "filter" | "exists_one") {
                    return Err(e);
                }
                first_err.get_or_insert(e);
            }
            if name == "exists" && any_true {
                return Ok(Val::Bool(true));
            }
            if name == "all" && !all_true {
                return Ok(Val::Bool(false));
            }
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        Ok(match name {
            "exists" => Val::Bool(any_true),
            "all" => Val::Bool(all_true),
            "exists_one" => Val::Bool(found == 1),
            _ => Val::List(mapped),
        })
    }
}

fn arith(op: &str, x: Val, y: Val) -> Result<Val, Msg> {
    let overflow = || Msg::from("integer overflow");
    Ok(match (op, &x, &y) {
        ("+", Val::Str(a), Val::Str(b)) => Val::Str(format!("{a}{b}")),
        ("+", Val::Bytes(a), Val::Bytes(b)) => Val::Bytes([a.clone(), b.clone()].concat()),
        ("+", Val::List(a), Val::List(b)) => Val::List([a.clone(), b.clone()].concat()),
        (_, Val::Int(a), Val::Int(b)) => Val::Int(match op {
            "+" => a.checked_add(*b).ok_or_else(overflow)?,
            "-" => a.checked_sub(*b).ok_or_else(overflow)?,
            "*" => a.checked_mul(*b).ok_or_else(overflow)?,
            "/" if *b == 0 => return Err("division by zero".into()),
            "/" => a.checked_div(*b).ok_or_else(overflow)?,
            "%" if *b == 0 => return Err("modulus by zero".into()),
            _ => a.checked_rem(*b).ok_or_else(overflow)?,
        }),
        (_, Val::UInt(a), Val::UInt(b)) => Val::UInt(match op {
            "+" => a.checked_add(*b).ok_or_else(overflow)?,
            "-" => a.checked_sub(*b).ok_or_else(overflow)?,
            "*" => a.checked_mul(*b).ok_or_else(overflow)?,
            "/" if *b == 0 => return Err("division by zero".into()),
            "/" => a / b,
            "%" if *b == 0 => return Err("modulus by zero".into()),
            _ => a % b,
        }),
        (_, Val::Double(a), Val::Double(b)) if op != "%" => Val::Double(match op {
            "+" => a + b,
            "-" => a - b,
            "*" => a * b,
            _ => a / b,
        }),
        _ => return Err(no_overload(op, &x, &y)),
    })
}

/// The functions of OLM's environment, the receiver first for member calls.
fn call(name: &str, args: &[Val]) -> Result<Val, Msg> {
    let bad = || {
        let types: Vec<&str> = args.iter().map(Val::type_name).collect();
        format!("no such overload: {name}({})", types.join(", "))
    };
    Ok(match (name, args) {
        ("semver_compare", [a, b]) => {
            let va = tolerant_semver(&a.to_text()?)?;
            let vb = tolerant_semver(&b.to_text()?)?;
            Val::Int(match va.cmp_precedence(&vb) {
                std::cmp::Ordering::Less => -1,
                std::cmp::Ordering::Equal => 0,
                std::cmp::Ordering::Greater => 1,
            })
        }
        ("size", [v]) => Val::Int(match v {
            Val::Str(s) => s.chars().count(),
            Val::Bytes(b) => b.len(),
            Val::List(l) => l.len(),
            Val::Map(m) => m.len(),
            _ => return Err(bad()),
        } as i64),
        ("contains", [Val::Str(a), Val::Str(b)]) => Val::Bool(a.contains(b.as_str())),
        ("startsWith", [Val::Str(a), Val::Str(b)]) => Val::Bool(a.starts_with(b.as_str())),
        ("endsWith", [Val::Str(a), Val::Str(b)]) => Val::Bool(a.ends_with(b.as_str())),
        ("string", [v]) => Val::Str(v.to_text()?),
        ("bool", [Val::Bool(b)]) => Val::Bool(*b),
        ("bool", [Val::Str(s)]) => match s.as_str() {
            "true" | "True" | "TRUE" | "t" | "1" => Val::Bool(true),
            "false" | "False" | "FALSE" | "f" | "0" => Val::Bool(false),
            _ => {
                return Err(format!(
                    "type conversion error from 'string' to 'bool': {s}"
                ))
            }
        },
        ("int", [v]) => Val::Int(match v {
            Val::Int(i) => *i,
            Val::UInt(u) => i64::try_from(*u).map_err(|_| "integer overflow".to_string())?,
            Val::Double(d) if d.is_finite() && d.abs() < 9.2e18 => d.trunc() as i64,
            Val::Str(s) => s
                .parse()
                .map_err(|_| format!("type conversion error from 'string' to 'int': {s}"))?,
            _ => return Err(bad()),
        }),
        ("uint", [v]) => Val::UInt(match v {
            Val::UInt(u) => *u,
            Val::Int(i) => {
                u64::try_from(*i).map_err(|_| "unsigned integer overflow".to_string())?
            }
            Val::Double(d) if d.is_finite() && *d >= 0.0 && *d < 1.8e19 => d.trunc() as u64,
            Val::Str(s) => s
                .parse()
                .map_err(|_| format!("type conversion error from 'string' to 'uint': {s}"))?,
            _ => return Err(bad()),
        }),
        ("double", [v]) => Val::Double(match v {
            Val::Str(s) => s
                .parse()
                .map_err(|_| format!("type conversion error from 'string' to 'double': {s}"))?,
            other => other.as_f64().ok_or_else(bad)?,
        }),
        ("bytes", [Val::Str(s)]) => Val::Bytes(s.as_bytes().to_vec()),
        ("bytes", [Val::Bytes(b)]) => Val::Bytes(b.clone()),
        ("dyn", [v]) => v.clone(),
        ("type", [v]) => Val::Type(v.type_name().to_string()),
        _ => {
            if GLOBAL_FUNCS
                .iter()
                .chain(MEMBER_FUNCS)
                .any(|(n, _)| *n == name)
            {
                return Err(format!(
                    "{name}() is not evaluated by this implementation ({})",
                    bad()
                ));
            }
            return Err(bad());
        }
    })
}

#[cfg(test)]
mod tests {
    use super::{check_rule, CelStage, Program};
    use serde_json::json;

    #[test]
    fn accepts_olm_style_rules() {
        for ok in [
            "properties.exists(p, p.type == 'olm.test' && (semver_compare(p.value, '1.0.0') == 0))",
            "properties.exists(p, p.type == \"olm.package\" && p.value.packageName == 'etcd')",
            "properties.all(p, p.type != 'x') || size(properties) > 0",
            "!properties.exists(p, p.type in ['a', 'b'])",
            "true",
            "has(properties[0].type) ? true : false",
        ] {
            assert!(check_rule(ok).is_ok(), "{ok}: {:?}", check_rule(ok));
        }
    }

    #[test]
    fn refuses_what_olm_refuses() {
        for (bad, why) in [
            ("properties.exists(p, p.type == 'olm.test' && (doesnt_exist(p.value, '1.0.0') == 0))", "undeclared reference to 'doesnt_exist'"),
            ("1", "not bool"),
            ("properties.exists(p, p.type == 'x'", "missing ')'"),
            ("properties.exists(p, q.type == 'x')", "undeclared reference to 'q'"),
            ("properties[0].value", "dyn, not bool"),
            ("semver_compare(1, 2)", "int, not bool"),
            ("'unterminated", "unterminated"),
            ("a #", "token recognition"),
        ] {
            let e = check_rule(bad).expect_err(bad);
            assert_eq!(e.stage, CelStage::Compile);
            assert!(e.message.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn deep_input_is_refused_not_overflowed() {
        // Each of these used to parse into a tree tens of thousands of
        // levels deep, whose check, evaluation or drop overflowed the
        // stack (or recursed in the parser itself).
        let n = 30_000;
        let hostile = [
            format!("{} == 1", vec!["1"; n].join("+")),
            format!("{} == 1", vec!["2"; n].join("*")),
            format!("properties{} == 1", ".a".repeat(n)),
            format!("properties{} == 1", "[0]".repeat(n)),
            format!("{}true", "!".repeat(n)),
            format!("{}1 == 1", "-".repeat(n)),
            format!("{}properties == []", ".".repeat(n)),
            format!("{}true{}", "(".repeat(n), ")".repeat(n)),
            format!("{}1{} == []", "[".repeat(n), "]".repeat(n)),
            vec!["1"; n].join("<"),
        ];
        for rule in &hostile {
            let e = check_rule(rule).expect_err(&rule[..20]);
            assert!(
                e.message.contains("max recursion depth exceeded"),
                "{}: {e}",
                &rule[..20]
            );
        }
        let e = check_rule(&"!".repeat(100_001)).expect_err("too long");
        assert!(e.message.contains("code point size exceeds limit"), "{e}");
    }

    #[test]
    fn long_logical_chains_stay_shallow_and_deep_nesting_within_the_limit_works() {
        // cel-go balances `||` and `&&` chains, so any length parses.
        let rule = vec!["1 == 2"; 8_000].join(" || ") + " || 1 == 1";
        assert_eq!(eval(&rule, serde_json::json!([])), Ok(true));
        let rule = vec!["1 == 1"; 8_000].join(" && ");
        assert_eq!(eval(&rule, serde_json::json!([])), Ok(true));
        // Just under the limit: parsed, checked and evaluated on a test
        // thread's stack.
        let rule = format!("{}true{}", "(".repeat(90), ")".repeat(90));
        assert_eq!(eval(&rule, serde_json::json!([])), Ok(true));
        let rule = format!("{} == 240", vec!["1"; 240].join("+"));
        assert_eq!(eval(&rule, serde_json::json!([])), Ok(true));
        let rule = format!("{}true", "!".repeat(240));
        assert_eq!(eval(&rule, serde_json::json!([])), Ok(true));
    }

    fn eval(rule: &str, props: serde_json::Value) -> Result<bool, String> {
        let p = Program::compile(rule).map_err(|e| format!("compile: {e}"))?;
        p.evaluate(props.as_array().map(Vec::as_slice).unwrap_or(&[]))
            .map_err(|e| {
                assert_eq!(e.stage, CelStage::Evaluate);
                e.message
            })
    }

    #[test]
    fn evaluates_against_properties() {
        // operator-framework/api constraints/cel_test.go's cases, restated.
        let props = json!([
            {"type": "olm.test", "value": "1.0.0"},
            {"type": "olm.package", "value": {"packageName": "etcd", "version": "0.9.4"}},
            {"type": "olm.gvk", "value": {"group": "g", "version": "v1", "kind": "K", "count": 3}},
        ]);
        for (rule, want) in [
            ("properties.exists(p, p.type == 'olm.test' && (semver_compare(p.value, '1.0.0') == 0))", true),
            ("properties.exists(p, p.type == 'olm.test' && (semver_compare(p.value, '1.0.1') >= 0))", false),
            ("properties.exists(p, p.type == 'olm.package' && semver_compare(p.value.version, 'v0.9') > 0)", true),
            ("properties.exists(p, p.type == 'olm.gvk' && p.value.count == 3)", true),
            ("properties.exists(p, p.type == 'olm.gvk' && p.value.count > 2.5)", true),
            ("properties.all(p, p.type.startsWith('olm.'))", true),
            ("properties.exists_one(p, p.type == 'olm.gvk')", true),
            ("properties.filter(p, p.type == 'olm.gvk').size() == 1", true),
            ("properties.map(p, p.type).exists(t, t == 'olm.package')", true),
            ("size(properties) == 3 && 'olm.test' in properties.map(p, p.type)", true),
            ("properties.exists(p, has(p.value.packageName) && p.value.packageName == 'etcd')", true),
            // A missing key errors in one element; another decides.
            ("properties.exists(p, p.value.packageName == 'etcd')", true),
            ("properties.exists(p, p.type == 'none')", false),
            ("{'a': 1}['a'] + 1 == 2 && 7 / 2 == 3 && -(3) == -3 && \"x\\ty\".size() == 3", true),
            ("false || (true ? 1 : 2) == 1", true),
        ] {
            assert_eq!(eval(rule, props.clone()), Ok(want), "{rule}");
        }
        for (rule, why) in [
            (
                "properties.all(p, p.value.packageName == 'etcd')",
                "field selection",
            ),
            ("properties[1].value.nope == 1", "no such key"),
            (
                "properties.exists(p, p.type == 'olm.test' && semver_compare(p.value, 'x.y') == 0)",
                "semver",
            ),
            ("properties[5].type == 'x'", "index out of range"),
            ("1 / 0 == 1", "division by zero"),
        ] {
            let e = eval(rule, props.clone()).expect_err(rule);
            assert!(e.contains(why), "{rule}: {e}");
        }
    }
}
