//! The logic of standard cells, read from a Liberty file: each output pin's
//! Boolean function over the input pins (as a truth table), and each
//! edge-triggered flip-flop's `next_state` and `clocked_on`. Only what a
//! two-state, cycle-based simulation needs; timing is ignored.

use std::collections::HashMap;

/// A Boolean expression of the Liberty `function` syntax.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    Const(bool),
    Var(String),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Xor(Box<Expr>, Box<Expr>),
}

impl Expr {
    pub fn eval(&self, var: &dyn Fn(&str) -> bool) -> bool {
        match self {
            Expr::Const(b) => *b,
            Expr::Var(v) => var(v),
            Expr::Not(a) => !a.eval(var),
            Expr::And(a, b) => a.eval(var) && b.eval(var),
            Expr::Or(a, b) => a.eval(var) || b.eval(var),
            Expr::Xor(a, b) => a.eval(var) ^ b.eval(var),
        }
    }

    pub fn vars(&self, out: &mut Vec<String>) {
        match self {
            Expr::Const(_) => {}
            Expr::Var(v) => {
                if !out.contains(v) {
                    out.push(v.clone())
                }
            }
            Expr::Not(a) => a.vars(out),
            Expr::And(a, b) | Expr::Or(a, b) | Expr::Xor(a, b) => {
                a.vars(out);
                b.vars(out);
            }
        }
    }
}

/// Parses a Liberty Boolean function. Precedence, highest first: `!` and
/// postfix `'` (not), `^` (xor), `&`, `*` or juxtaposition (and), `|` or `+`
/// (or).
pub fn parse_function(s: &str) -> Result<Expr, String> {
    let toks: Vec<char> = s.chars().collect();
    let mut p = ExprParser { t: toks, i: 0 };
    let e = p.or()?;
    p.ws();
    if p.i != p.t.len() {
        return Err(format!("function \"{s}\": unexpected '{}'", p.t[p.i]));
    }
    Ok(e)
}

struct ExprParser {
    t: Vec<char>,
    i: usize,
}

impl ExprParser {
    fn ws(&mut self) {
        while self.i < self.t.len() && self.t[self.i].is_whitespace() {
            self.i += 1;
        }
    }
    fn peek(&mut self) -> Option<char> {
        self.ws();
        self.t.get(self.i).copied()
    }
    fn or(&mut self) -> Result<Expr, String> {
        let mut a = self.and()?;
        while matches!(self.peek(), Some('|') | Some('+')) {
            self.i += 1;
            a = Expr::Or(Box::new(a), Box::new(self.and()?));
        }
        Ok(a)
    }
    fn and(&mut self) -> Result<Expr, String> {
        let mut a = self.xor()?;
        loop {
            match self.peek() {
                Some('&') | Some('*') => {
                    self.i += 1;
                }
                // juxtaposition: another operand follows
                Some(c) if c == '(' || c == '!' || c.is_alphanumeric() || c == '_' => {}
                _ => return Ok(a),
            }
            a = Expr::And(Box::new(a), Box::new(self.xor()?));
        }
    }
    fn xor(&mut self) -> Result<Expr, String> {
        let mut a = self.unary()?;
        while self.peek() == Some('^') {
            self.i += 1;
            a = Expr::Xor(Box::new(a), Box::new(self.unary()?));
        }
        Ok(a)
    }
    fn unary(&mut self) -> Result<Expr, String> {
        let mut e = match self.peek() {
            Some('!') => {
                self.i += 1;
                Expr::Not(Box::new(self.unary()?))
            }
            Some('(') => {
                self.i += 1;
                let e = self.or()?;
                if self.peek() != Some(')') {
                    return Err("missing ')'".into());
                }
                self.i += 1;
                e
            }
            Some(c) if c.is_alphanumeric() || c == '_' => {
                let start = self.i;
                while self.i < self.t.len() && (self.t[self.i].is_alphanumeric() || self.t[self.i] == '_') {
                    self.i += 1;
                }
                let w: String = self.t[start..self.i].iter().collect();
                match w.as_str() {
                    "0" => Expr::Const(false),
                    "1" => Expr::Const(true),
                    _ => Expr::Var(w),
                }
            }
            c => return Err(format!("unexpected {c:?}")),
        };
        while self.peek() == Some('\'') {
            self.i += 1;
            e = Expr::Not(Box::new(e));
        }
        Ok(e)
    }
}

/// The storage of a cell: an edge-triggered flip-flop, `ff (iq, iqn) {
/// next_state; clocked_on; }`, or a level-sensitive latch, `latch (iq, iqn)
/// { data_in; enable; }`, held here as `next_state` and `clocked_on`.
#[derive(Clone, Debug)]
pub struct Ff {
    pub iq: String,
    pub iqn: String,
    pub next_state: Expr,
    pub clocked_on: Expr,
    /// A latch: `iq` follows `next_state` while `clocked_on` is 1.
    pub latch: bool,
}

/// One cell's logic.
#[derive(Clone, Debug, Default)]
pub struct Cell {
    pub inputs: Vec<String>,
    /// Output pin and its function (over inputs, or over the ff's state).
    pub outputs: Vec<(String, Expr)>,
    pub ff: Option<Ff>,
    /// Anything this simulator does not model (asynchronous set/clear,
    /// state tables, three-state outputs), named; such a cell is rejected
    /// when a netlist uses it.
    pub unsupported: Option<String>,
}

// ------------------------------------------------------------- tokenizer

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Word(String),
    Str(String),
    Sym(char),
}

fn tokenize(s: &str) -> Vec<Tok> {
    let c: Vec<char> = s.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() || ch == '\\' {
            i += 1; // line continuations
        } else if ch == '/' && c.get(i + 1) == Some(&'*') {
            i += 2;
            while i + 1 < c.len() && !(c[i] == '*' && c[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if ch == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '"' {
            let start = i + 1;
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += 1;
            }
            out.push(Tok::Str(c[start..i].iter().collect()));
            i += 1;
        } else if "(){}:;,".contains(ch) {
            out.push(Tok::Sym(ch));
            i += 1;
        } else {
            let start = i;
            while i < c.len() && !c[i].is_whitespace() && !"(){}:;,\"".contains(c[i]) {
                i += 1;
            }
            out.push(Tok::Word(c[start..i].iter().collect()));
        }
    }
    out
}

/// A Liberty group: `name (args) { attributes and groups }`.
#[derive(Debug, Default)]
struct Group {
    name: String,
    args: Vec<String>,
    attrs: Vec<(String, String)>,
    groups: Vec<Group>,
}

impl Group {
    fn attr(&self, k: &str) -> Option<&str> {
        self.attrs.iter().find(|(a, _)| a == k).map(|(_, v)| v.as_str())
    }
}

fn word(t: &Tok) -> String {
    match t {
        Tok::Word(w) | Tok::Str(w) => w.clone(),
        Tok::Sym(c) => c.to_string(),
    }
}

/// Parses the statements of a group body up to its closing brace.
fn body(t: &[Tok], i: &mut usize, g: &mut Group) -> Result<(), String> {
    while *i < t.len() {
        if t[*i] == Tok::Sym('}') {
            *i += 1;
            return Ok(());
        }
        let name = word(&t[*i]);
        *i += 1;
        match t.get(*i) {
            Some(Tok::Sym(':')) => {
                *i += 1;
                let mut v = String::new();
                while *i < t.len() && t[*i] != Tok::Sym(';') && t[*i] != Tok::Sym('}') {
                    v.push_str(&word(&t[*i]));
                    *i += 1;
                }
                if t.get(*i) == Some(&Tok::Sym(';')) {
                    *i += 1;
                }
                g.attrs.push((name, v));
            }
            Some(Tok::Sym('(')) => {
                *i += 1;
                let mut args = Vec::new();
                while *i < t.len() && t[*i] != Tok::Sym(')') {
                    if t[*i] != Tok::Sym(',') {
                        args.push(word(&t[*i]));
                    }
                    *i += 1;
                }
                *i += 1; // ')'
                match t.get(*i) {
                    Some(Tok::Sym('{')) => {
                        *i += 1;
                        let mut sub = Group { name, args, ..Default::default() };
                        body(t, i, &mut sub)?;
                        g.groups.push(sub);
                    }
                    _ => {
                        if t.get(*i) == Some(&Tok::Sym(';')) {
                            *i += 1;
                        }
                        g.attrs.push((name, args.join(",")));
                    }
                }
            }
            Some(Tok::Sym(';')) => *i += 1,
            other => return Err(format!("liberty: unexpected {other:?} after '{name}'")),
        }
    }
    Ok(())
}

/// The cells of a Liberty file.
pub fn parse(text: &str) -> Result<HashMap<String, Cell>, String> {
    let t = tokenize(text);
    let mut root = Group::default();
    let mut i = 0;
    body(&t, &mut i, &mut root)?;
    let lib = root.groups.iter().find(|g| g.name == "library").ok_or("liberty: no library group")?;
    let mut cells = HashMap::new();
    for cg in lib.groups.iter().filter(|g| g.name == "cell") {
        let name = cg.args.first().cloned().ok_or("liberty: a cell without a name")?;
        let mut cell = Cell::default();
        let mut unsupported = Vec::new();
        for g in &cg.groups {
            match g.name.as_str() {
                "pin" => {
                    let pin = g.args.first().cloned().unwrap_or_default();
                    match g.attr("direction") {
                        Some("input") => cell.inputs.push(pin.clone()),
                        Some("output") => match g.attr("function") {
                            Some(f) => {
                                let e = parse_function(f).map_err(|e| format!("cell {name} pin {pin}: {e}"))?;
                                cell.outputs.push((pin.clone(), e));
                            }
                            None => unsupported.push(format!("output {pin} without a function")),
                        },
                        Some(d) => unsupported.push(format!("pin {pin} direction {d}")),
                        None => {}
                    }
                    if g.attr("three_state").is_some() {
                        unsupported.push(format!("three-state pin {pin}"));
                    }
                }
                "ff" | "latch" => {
                    if g.attr("clear").is_some() || g.attr("preset").is_some() {
                        unsupported.push(format!("{} with asynchronous clear or preset", g.name));
                    }
                    let latch = g.name == "latch";
                    let (d, c) = if latch { ("data_in", "enable") } else { ("next_state", "clocked_on") };
                    let (Some(ns), Some(co)) = (g.attr(d), g.attr(c)) else {
                        return Err(format!("cell {name}: {} without {d} or {c}", g.name));
                    };
                    cell.ff = Some(Ff {
                        iq: g.args.first().cloned().unwrap_or_default(),
                        iqn: g.args.get(1).cloned().unwrap_or_default(),
                        next_state: parse_function(ns)?,
                        clocked_on: parse_function(co)?,
                        latch,
                    });
                }
                "statetable" => unsupported.push(g.name.clone()),
                _ => {}
            }
        }
        if !unsupported.is_empty() {
            cell.unsupported = Some(unsupported.join(", "));
        }
        cells.insert(name, cell);
    }
    Ok(cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tt(f: &str, vars: &[&str]) -> Vec<bool> {
        let e = parse_function(f).unwrap();
        (0..1usize << vars.len())
            .map(|k| e.eval(&|v: &str| k >> vars.iter().position(|x| *x == v).unwrap() & 1 == 1))
            .collect()
    }

    #[test]
    fn functions_follow_liberty_precedence() {
        // AOI21: !((A B)+C)
        assert_eq!(tt("(!((A B)+C))", &["A", "B", "C"]), vec![true, true, true, false, false, false, false, false]);
        // the OSU018 MUX2X1 inverts: !((S A) + (!S B))
        let m = tt("(!((S A) + (!S B)))", &["S", "A", "B"]);
        for k in 0..8 {
            let (s, a, b) = (k & 1 == 1, k & 2 != 0, k & 4 != 0);
            assert_eq!(m[k], !(if s { a } else { b }), "S {s} A {a} B {b}");
        }
        // xor binds tighter than and, and tighter than or; postfix '
        assert_eq!(tt("A B^C", &["A", "B", "C"]), tt("A&(B^C)", &["A", "B", "C"]));
        assert_eq!(tt("A+B C", &["A", "B", "C"]), tt("A|(B&C)", &["A", "B", "C"]));
        assert_eq!(tt("A'", &["A"]), vec![true, false]);
        assert!(parse_function("(A B").is_err());
    }

    #[test]
    fn reads_the_osu018_cells() {
        let path = super::super::super::build::tools::liberty();
        let Ok(text) = std::fs::read_to_string(&path) else {
            panic!("{} not found: run `make` to install the standard cells", path.display())
        };
        let cells = parse(&text).unwrap();
        assert!(cells.len() >= 30, "{} cells", cells.len());
        let dff = &cells["DFFPOSX1"];
        let ff = dff.ff.as_ref().unwrap();
        assert_eq!((ff.iq.as_str(), ff.next_state.clone(), ff.clocked_on.clone()), ("DS0000", Expr::Var("D".into()), Expr::Var("CLK".into())));
        assert_eq!(dff.outputs, vec![("Q".to_string(), Expr::Var("DS0000".into()))]);
        assert!(dff.unsupported.is_none());
        assert!(cells["DFFSR"].unsupported.is_some(), "asynchronous set/reset is not modelled");
        let latch = &cells["LATCH"];
        let l = latch.ff.as_ref().unwrap();
        assert!(l.latch && !ff.latch && latch.unsupported.is_none());
        assert_eq!((l.next_state.clone(), l.clocked_on.clone()), (Expr::Var("D".into()), Expr::Var("CLK".into())));
        assert_eq!(latch.outputs, vec![("Q".to_string(), Expr::Var("DS0000".into()))]);
        let fa = &cells["FAX1"];
        assert_eq!(fa.outputs.len(), 2);
    }
}
