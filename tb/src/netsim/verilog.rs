//! A reader for the structural Verilog Yosys writes for a mapped netlist
//! (`write_verilog -noattr`): one module of port, wire and cell-instance
//! declarations with named pin connections, and `assign` statements. Every
//! signal bit becomes a net number.

use std::collections::HashMap;

/// A bit of the netlist: a net, or a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bit {
    Net(u32),
    Const(bool),
}

#[derive(Clone, Debug)]
pub struct Signal {
    /// Declared bits, LSB first: bit `i` is `name[lsb + i]` (or the reverse
    /// for an ascending range).
    pub nets: Vec<u32>,
    pub input: bool,
    pub output: bool,
}

#[derive(Clone, Debug)]
pub struct Instance {
    pub cell: String,
    pub name: String,
    pub pins: Vec<(String, Bit)>,
}

#[derive(Clone, Debug, Default)]
pub struct Netlist {
    pub module: String,
    pub nets: u32,
    /// Declared signals by name (escaped names without the backslash).
    pub signals: HashMap<String, Signal>,
    /// Declaration order of the signals.
    pub order: Vec<String>,
    pub instances: Vec<Instance>,
    /// `assign lhs = rhs`, bit by bit.
    pub assigns: Vec<(u32, Bit)>,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Id(String),
    Num(String),
    Sym(char),
}

fn tokenize(s: &str) -> Result<Vec<Tok>, String> {
    let c = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::with_capacity(s.len() / 6);
    while i < c.len() {
        let ch = c[i];
        if ch.is_ascii_whitespace() {
            i += 1;
        } else if ch == b'/' && c.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < c.len() && !(c[i] == b'*' && c[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
        } else if ch == b'/' && c.get(i + 1) == Some(&b'/') {
            while i < c.len() && c[i] != b'\n' {
                i += 1;
            }
        } else if ch == b'\\' {
            // escaped identifier: up to whitespace
            let start = i + 1;
            while i < c.len() && !c[i].is_ascii_whitespace() {
                i += 1;
            }
            out.push(Tok::Id(s[start..i].to_string()));
        } else if ch.is_ascii_alphabetic() || ch == b'_' || ch == b'$' {
            let start = i;
            while i < c.len() && (c[i].is_ascii_alphanumeric() || c[i] == b'_' || c[i] == b'$') {
                i += 1;
            }
            out.push(Tok::Id(s[start..i].to_string()));
        } else if ch.is_ascii_digit() {
            let start = i;
            while i < c.len() && (c[i].is_ascii_alphanumeric() || c[i] == b'\'' || c[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Num(s[start..i].to_string()));
        } else if ch == b'\'' {
            // unsized constant such as 'h0
            let start = i;
            i += 1;
            while i < c.len() && (c[i].is_ascii_alphanumeric() || c[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Num(s[start..i].to_string()));
        } else if b"()[]{},;.:=".contains(&ch) {
            out.push(Tok::Sym(ch as char));
            i += 1;
        } else {
            return Err(format!("netlist: unexpected character '{}'", ch as char));
        }
    }
    Ok(out)
}

/// The bits of a sized constant such as `1'h0`, `8'b1010_0000`, LSB first.
fn constant(s: &str) -> Result<Vec<bool>, String> {
    let (size, rest) = match s.split_once('\'') {
        Some((a, b)) => (if a.is_empty() { None } else { Some(a.parse::<usize>().map_err(|e| e.to_string())?) }, b),
        None => (None, s),
    };
    let rest = rest.trim_start_matches(['s', 'S']);
    let (radix, digits) = match rest.chars().next() {
        Some('h') | Some('H') => (16, &rest[1..]),
        Some('b') | Some('B') => (2, &rest[1..]),
        Some('d') | Some('D') => (10, &rest[1..]),
        Some('o') | Some('O') => (8, &rest[1..]),
        _ => (10, rest),
    };
    let digits: String = digits.chars().filter(|&c| c != '_').collect();
    if digits.chars().any(|c| matches!(c, 'x' | 'X' | 'z' | 'Z' | '?')) {
        return Err(format!("netlist: constant {s} has x or z bits (run setundef)"));
    }
    let v = u128::from_str_radix(&digits, radix).map_err(|e| format!("netlist: constant {s}: {e}"))?;
    let n = size.unwrap_or(32);
    Ok((0..n).map(|k| k < 128 && (v >> k) & 1 == 1).collect())
}

struct P {
    t: Vec<Tok>,
    i: usize,
}

impl P {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i)
    }
    fn next(&mut self) -> Result<Tok, String> {
        let t = self.t.get(self.i).cloned().ok_or("netlist: unexpected end of file")?;
        self.i += 1;
        Ok(t)
    }
    fn sym(&mut self, c: char) -> Result<(), String> {
        match self.next()? {
            Tok::Sym(x) if x == c => Ok(()),
            t => Err(format!("netlist: expected '{c}', found {t:?}")),
        }
    }
    fn id(&mut self) -> Result<String, String> {
        match self.next()? {
            Tok::Id(s) => Ok(s),
            t => Err(format!("netlist: expected a name, found {t:?}")),
        }
    }
    fn int(&mut self) -> Result<i64, String> {
        match self.next()? {
            Tok::Num(s) => s.parse().map_err(|e| format!("netlist: {s}: {e}")),
            t => Err(format!("netlist: expected a number, found {t:?}")),
        }
    }
    fn is_sym(&self, c: char) -> bool {
        self.peek() == Some(&Tok::Sym(c))
    }
}

struct Decl {
    msb: i64,
    lsb: i64,
}

impl Netlist {
    fn declare(&mut self, name: String, range: Option<(i64, i64)>, input: bool, output: bool) {
        if let Some(s) = self.signals.get_mut(&name) {
            s.input |= input;
            s.output |= output;
            return;
        }
        let (msb, lsb) = range.unwrap_or((0, 0));
        let n = (msb - lsb).unsigned_abs() as u32 + 1;
        let nets = (self.nets..self.nets + n).collect();
        self.nets += n;
        self.order.push(name.clone());
        self.signals.insert(name, Signal { nets, input, output });
    }

    fn bit(&self, name: &str, idx: Option<i64>, decls: &HashMap<String, Decl>) -> Result<u32, String> {
        let s = self.signals.get(name).ok_or_else(|| format!("netlist: undeclared signal {name}"))?;
        let d = &decls[name];
        let k = match idx {
            None if s.nets.len() == 1 => 0,
            None => return Err(format!("netlist: {name} is {} bits wide, used as one", s.nets.len())),
            Some(i) => {
                let (lo, hi) = (d.lsb.min(d.msb), d.lsb.max(d.msb));
                if i < lo || i > hi {
                    return Err(format!("netlist: {name}[{i}] is out of its range"));
                }
                if d.msb >= d.lsb {
                    i - d.lsb
                } else {
                    d.lsb - i
                }
            }
        };
        Ok(s.nets[k as usize])
    }
}

/// An expression: identifier, bit or part select, constant, or
/// concatenation; its bits LSB first.
fn expr(p: &mut P, nl: &Netlist, decls: &HashMap<String, Decl>) -> Result<Vec<Bit>, String> {
    match p.next()? {
        Tok::Sym('{') => {
            let mut parts = Vec::new();
            loop {
                parts.push(expr(p, nl, decls)?);
                if p.is_sym(',') {
                    p.i += 1;
                    continue;
                }
                p.sym('}')?;
                break;
            }
            // {a, b}: a is the most significant part
            Ok(parts.into_iter().rev().flatten().collect())
        }
        Tok::Num(s) => Ok(constant(&s)?.into_iter().map(Bit::Const).collect()),
        Tok::Id(name) => {
            if p.is_sym('[') {
                p.i += 1;
                let a = p.int()?;
                if p.is_sym(':') {
                    p.i += 1;
                    let b = p.int()?;
                    p.sym(']')?;
                    // the right-hand index is the least significant bit
                    let idx: Vec<i64> = if a >= b { (b..=a).collect() } else { (a..=b).rev().collect() };
                    idx.into_iter().map(|k| nl.bit(&name, Some(k), decls).map(Bit::Net)).collect()
                } else {
                    p.sym(']')?;
                    Ok(vec![Bit::Net(nl.bit(&name, Some(a), decls)?)])
                }
            } else {
                let s = nl.signals.get(&name).ok_or_else(|| format!("netlist: undeclared signal {name}"))?;
                Ok(s.nets.iter().map(|&n| Bit::Net(n)).collect())
            }
        }
        t => Err(format!("netlist: unexpected {t:?} in an expression")),
    }
}

/// Parses the first module of `text`.
pub fn parse(text: &str) -> Result<Netlist, String> {
    let mut p = P { t: tokenize(text)?, i: 0 };
    let mut nl = Netlist::default();
    let mut decls: HashMap<String, Decl> = HashMap::new();
    loop {
        match p.next()? {
            Tok::Id(k) if k == "module" => break,
            _ => continue,
        }
    }
    nl.module = p.id()?;
    // the port list: names only (directions come from the declarations)
    if p.is_sym('(') {
        while !p.is_sym(')') {
            p.i += 1;
        }
        p.i += 1;
    }
    p.sym(';')?;
    loop {
        let t = p.next()?;
        let Tok::Id(k) = t else { return Err(format!("netlist: unexpected {t:?}")) };
        match k.as_str() {
            "endmodule" => break,
            "input" | "output" | "inout" | "wire" | "reg" => {
                if k == "inout" {
                    return Err("netlist: inout ports are not supported".into());
                }
                let mut range = None;
                if p.is_sym('[') {
                    p.i += 1;
                    let a = p.int()?;
                    p.sym(':')?;
                    let b = p.int()?;
                    p.sym(']')?;
                    range = Some((a, b));
                }
                loop {
                    let name = p.id()?;
                    let (msb, lsb) = range.unwrap_or((0, 0));
                    decls.entry(name.clone()).or_insert(Decl { msb, lsb });
                    nl.declare(name, range, k == "input", k == "output");
                    if p.is_sym(',') {
                        p.i += 1;
                        continue;
                    }
                    break;
                }
                p.sym(';')?;
            }
            "assign" => {
                let lhs = expr(&mut p, &nl, &decls)?;
                p.sym('=')?;
                let mut rhs = expr(&mut p, &nl, &decls)?;
                p.sym(';')?;
                rhs.resize(lhs.len(), Bit::Const(false));
                for (l, r) in lhs.into_iter().zip(rhs) {
                    let Bit::Net(l) = l else { return Err("netlist: assign to a constant".into()) };
                    nl.assigns.push((l, r));
                }
            }
            cell => {
                let name = p.id()?;
                p.sym('(')?;
                let mut pins = Vec::new();
                while !p.is_sym(')') {
                    p.sym('.')?;
                    let pin = p.id()?;
                    p.sym('(')?;
                    let bits = if p.is_sym(')') { vec![] } else { expr(&mut p, &nl, &decls)? };
                    p.sym(')')?;
                    match bits.as_slice() {
                        [] => {}
                        [b] => pins.push((pin, *b)),
                        _ => return Err(format!("netlist: cell {name} pin {pin} is connected to {} bits", bits.len())),
                    }
                    if p.is_sym(',') {
                        p.i += 1;
                    }
                }
                p.sym(')')?;
                p.sym(';')?;
                nl.instances.push(Instance { cell: cell.to_string(), name, pins });
            }
        }
    }
    Ok(nl)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_declarations_cells_and_assigns() {
        let text = r"
/* Generated by Yosys */
module top(a, b, y, z);
  wire _0_;
  input [3:0] a;
  wire [3:0] a;
  input b;
  output [1:0] y;
  output z;
  wire [1:2] \odd.name ;
  NAND2X1 _1_ (
    .A(a[2]),
    .B(b),
    .Y(_0_)
  );
  INVX1 _2_ (.A(_0_), .Y(y[1]));
  assign y[0] = 1'h1;
  assign \odd.name  = {a[3], 1'b0};
  assign z = \odd.name [1];
endmodule
";
        let nl = parse(text).unwrap();
        assert_eq!(nl.module, "top");
        let a = &nl.signals["a"];
        assert!(a.input && a.nets.len() == 4);
        let y = &nl.signals["y"];
        assert!(y.output && y.nets.len() == 2);
        assert_eq!(nl.instances.len(), 2);
        assert_eq!(nl.instances[0].pins[0], ("A".to_string(), Bit::Net(a.nets[2])));
        assert_eq!(nl.instances[1].pins[1], ("Y".to_string(), Bit::Net(y.nets[1])));
        // nets are LSB first; in [1:2] bit 2 is the least significant, and
        // {a[3], 1'b0} puts a[3] in the most significant bit, odd.name[1]
        let odd = &nl.signals["odd.name"].nets;
        assert!(nl.assigns.contains(&(y.nets[0], Bit::Const(true))));
        assert!(nl.assigns.contains(&(odd[1], Bit::Net(a.nets[3]))));
        assert!(nl.assigns.contains(&(odd[0], Bit::Const(false))));
        assert!(nl.assigns.contains(&(nl.signals["z"].nets[0], Bit::Net(odd[1]))));
    }

    #[test]
    fn rejects_x_constants_and_unknown_signals() {
        assert!(parse("module t(y); output y; assign y = 1'bx; endmodule").is_err());
        assert!(parse("module t(y); output y; assign y = q; endmodule").is_err());
    }
}
