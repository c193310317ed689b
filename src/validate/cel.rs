//! A checker for the CEL rules of `olm.constraint` dependencies.
//!
//! OLM compiles `cel.rule` in an environment with one variable,
//! `properties` (a list of maps), the standard CEL functions and macros, and
//! `semver_compare(a, b)` (an int); a rule must compile and its type must be
//! `bool` (operator-framework/api `pkg/constraints/cel.go`, used by
//! operator-registry's bundle validation). This module parses the rule with
//! CEL's grammar, resolves identifiers and function names in that
//! environment and infers the result type, which covers the errors
//! upstream reports: syntax errors, undeclared references and non-bool rules.

/// Why a rule is refused.
pub type CelError = String;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Int,
    UInt,
    Double,
    Str,
    Bytes,
    Op(&'static str),
}

const OPS: &[&str] = &[
    "||", "&&", "==", "!=", "<=", ">=", "<", ">", "!", "+", "-", "*", "/", "%", "?", ":", ".", ",",
    "(", ")", "[", "]", "{", "}",
];

fn lex(src: &str) -> Result<Vec<Tok>, CelError> {
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
            out.push(if is_bytes { Tok::Bytes } else { Tok::Str });
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
            if !double && i < b.len() && matches!(b[i], b'u' | b'U') {
                i += 1;
                out.push(Tok::UInt);
            } else {
                out.push(if double { Tok::Double } else { Tok::Int });
            }
            let _ = start;
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

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    scope: Vec<String>,
    depth: usize,
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
    fn expect(&mut self, op: &str) -> Result<(), CelError> {
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

    fn expr(&mut self) -> Result<Ty, CelError> {
        self.depth += 1;
        if self.depth > 100 {
            return Err("Syntax error: expression nested too deeply".into());
        }
        let c = self.or()?;
        let t = if self.eat("?") {
            let a = self.or()?;
            self.expect(":")?;
            let b = self.expr()?;
            if a == b {
                a
            } else {
                Ty::Dyn
            }
        } else {
            c
        };
        self.depth -= 1;
        Ok(t)
    }
    fn or(&mut self) -> Result<Ty, CelError> {
        let mut t = self.and()?;
        while self.eat("||") {
            self.and()?;
            t = Ty::Bool;
        }
        Ok(t)
    }
    fn and(&mut self) -> Result<Ty, CelError> {
        let mut t = self.relation()?;
        while self.eat("&&") {
            self.relation()?;
            t = Ty::Bool;
        }
        Ok(t)
    }
    fn relation(&mut self) -> Result<Ty, CelError> {
        let mut t = self.addition()?;
        loop {
            let rel = ["==", "!=", "<=", ">=", "<", ">"]
                .iter()
                .any(|op| self.is_op(op))
                || matches!(self.peek(), Some(Tok::Ident(s)) if s == "in");
            if !rel {
                return Ok(t);
            }
            self.pos += 1;
            self.addition()?;
            t = Ty::Bool;
        }
    }
    fn addition(&mut self) -> Result<Ty, CelError> {
        let mut t = self.mult()?;
        while self.is_op("+") || self.is_op("-") {
            self.pos += 1;
            let u = self.mult()?;
            if t != u {
                t = Ty::Dyn;
            }
        }
        Ok(t)
    }
    fn mult(&mut self) -> Result<Ty, CelError> {
        let mut t = self.unary()?;
        while self.is_op("*") || self.is_op("/") || self.is_op("%") {
            self.pos += 1;
            let u = self.unary()?;
            if t != u {
                t = Ty::Dyn;
            }
        }
        Ok(t)
    }
    fn unary(&mut self) -> Result<Ty, CelError> {
        if self.eat("!") {
            self.unary()?;
            return Ok(Ty::Bool);
        }
        if self.eat("-") {
            return self.unary();
        }
        self.member()
    }
    fn args(&mut self) -> Result<Vec<Ty>, CelError> {
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
    fn macro_call(&mut self, name: &str) -> Result<Ty, CelError> {
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
        self.scope.push(var);
        let first = self.expr();
        let mut n = 1;
        let mut result = first.clone();
        while result.is_ok() && self.eat(",") {
            result = self.expr();
            n += 1;
        }
        self.scope.pop();
        result?;
        self.expect(")")?;
        let ok_arity = match name {
            "map" => n == 1 || n == 2,
            _ => n == 1,
        };
        if !ok_arity {
            return Err(format!("ERROR: wrong number of arguments to {name}()"));
        }
        Ok(match name {
            "map" | "filter" => Ty::List,
            _ => Ty::Bool,
        })
    }
    fn member(&mut self) -> Result<Ty, CelError> {
        let mut t = self.primary()?;
        loop {
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
                    t = match name.as_str() {
                        "exists" | "all" | "exists_one" | "map" | "filter" => {
                            self.macro_call(&name)?
                        }
                        _ => {
                            self.args()?;
                            match MEMBER_FUNCS.iter().find(|(n, _)| *n == name) {
                                Some((_, ty)) => *ty,
                                None => {
                                    return Err(format!(
                                        "ERROR: undeclared reference to '{name}' (in container '')"
                                    ))
                                }
                            }
                        }
                    };
                } else {
                    t = Ty::Dyn;
                }
            } else if self.eat("[") {
                self.expr()?;
                self.expect("]")?;
                t = Ty::Dyn;
            } else {
                return Ok(t);
            }
        }
    }
    fn primary(&mut self) -> Result<Ty, CelError> {
        let Some(tok) = self.peek().cloned() else {
            return Err("Syntax error: mismatched input '<EOF>'".into());
        };
        self.pos += 1;
        match tok {
            Tok::Int => Ok(Ty::Int),
            Tok::UInt => Ok(Ty::UInt),
            Tok::Double => Ok(Ty::Double),
            Tok::Str => Ok(Ty::Str),
            Tok::Bytes => Ok(Ty::Bytes),
            Tok::Op("(") => {
                let t = self.expr()?;
                self.expect(")")?;
                Ok(t)
            }
            Tok::Op("[") => {
                if !self.eat("]") {
                    loop {
                        self.expr()?;
                        if self.eat("]") {
                            break;
                        }
                        self.expect(",")?;
                        if self.eat("]") {
                            break;
                        }
                    }
                }
                Ok(Ty::List)
            }
            Tok::Op("{") => {
                if !self.eat("}") {
                    loop {
                        self.expr()?;
                        self.expect(":")?;
                        self.expr()?;
                        if self.eat("}") {
                            break;
                        }
                        self.expect(",")?;
                        if self.eat("}") {
                            break;
                        }
                    }
                }
                Ok(Ty::Map)
            }
            Tok::Op(".") => self.primary(),
            Tok::Ident(name) => {
                if RESERVED.contains(&name.as_str()) || name == "in" {
                    return Err(format!("Syntax error: reserved identifier: {name}"));
                }
                if self.eat("(") {
                    if name == "has" {
                        self.expr()?;
                        self.expect(")")?;
                        return Ok(Ty::Bool);
                    }
                    self.args()?;
                    return match GLOBAL_FUNCS.iter().find(|(n, _)| *n == name) {
                        Some((_, ty)) => Ok(*ty),
                        None => Err(format!(
                            "ERROR: undeclared reference to '{name}' (in container '')"
                        )),
                    };
                }
                match name.as_str() {
                    "true" | "false" => Ok(Ty::Bool),
                    "null" => Ok(Ty::Null),
                    "properties" => Ok(Ty::List),
                    _ if self.scope.contains(&name) => Ok(Ty::Dyn),
                    _ if TYPE_NAMES.contains(&name.as_str()) => Ok(Ty::Type),
                    _ => Err(format!(
                        "ERROR: undeclared reference to '{name}' (in container '')"
                    )),
                }
            }
            Tok::Op(o) => Err(format!("Syntax error: extraneous input '{o}'")),
        }
    }
}

/// Checks a `cel.rule`: `Ok` when OLM would compile it to a boolean rule.
pub fn check_rule(rule: &str) -> Result<(), CelError> {
    let toks = lex(rule)?;
    let mut p = Parser {
        toks,
        pos: 0,
        scope: Vec::new(),
        depth: 0,
    };
    let ty = p.expr()?;
    if p.pos < p.toks.len() {
        return Err(format!(
            "Syntax error: extraneous input {}",
            p.describe_here()
        ));
    }
    match ty {
        Ty::Bool => Ok(()),
        other => Err(format!(
            "the rule's type is {}, not bool: OLM requires a boolean rule",
            other.name()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::check_rule;

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
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
