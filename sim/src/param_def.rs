//! Parameter tables: one entry per parameter gives its default, its allowed
//! values and a line of meaning. The parameter checks read their ranges from
//! it, and `rtl-gen params` prints it, so the two cannot disagree.

use std::fmt;

/// A parameter's default, as written in a TOML file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    Int(u64),
    Name(&'static str),
    /// Optional parameter, absent by default.
    Unset,
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Name(s) => f.write_str(s),
            Value::Unset => f.write_str("unset"),
        }
    }
}

/// The values a parameter may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allowed {
    /// lo..=hi.
    Range(u64, u64),
    /// A power of two in lo..=hi.
    Pow2(u64, u64),
    /// One of these integers.
    Ints(&'static [u64]),
    /// One of these names.
    Names(&'static [&'static str]),
}

impl fmt::Display for Allowed {
    /// The text that follows "must be" in an error.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Allowed::Range(lo, hi) => write!(f, "in {lo}..={hi}"),
            Allowed::Pow2(lo, hi) => write!(f, "a power of two in {lo}..={hi}"),
            Allowed::Ints(v) => {
                write!(f, "one of {}", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", "))
            }
            Allowed::Names(v) => write!(f, "one of {}", v.join(", ")),
        }
    }
}

impl Allowed {
    pub fn admits(&self, v: u64) -> bool {
        match *self {
            Allowed::Range(lo, hi) => (lo..=hi).contains(&v),
            Allowed::Pow2(lo, hi) => (lo..=hi).contains(&v) && v.is_power_of_two(),
            Allowed::Ints(s) => s.contains(&v),
            Allowed::Names(_) => false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamDef {
    /// Kebab-case, as in a TOML file or on the command line.
    pub name: &'static str,
    pub default: Value,
    pub allowed: Allowed,
    /// One line, lowercase, no final period.
    pub doc: &'static str,
}

impl ParamDef {
    /// `Err("NAME must be RANGE, got V")` unless `allowed` admits `v`.
    pub fn check(&self, v: u64) -> Result<(), String> {
        if self.allowed.admits(v) {
            Ok(())
        } else {
            Err(format!("{} must be {}, got {v}", self.name, self.allowed))
        }
    }

    /// The same for a named choice (worded as serde words a bad enum
    /// variant, which it replaces, plus the parameter's name).
    pub fn check_name(&self, v: &str) -> Result<(), String> {
        match self.allowed {
            Allowed::Names(s) if s.contains(&v) => Ok(()),
            _ => Err(format!("unknown variant `{v}`: {} must be {}", self.name, self.allowed)),
        }
    }
}

/// The entry named `name`; a missing one is a bug in the table's user.
pub fn def<'a>(table: &'a [ParamDef], name: &str) -> &'a ParamDef {
    table.iter().find(|d| d.name == name).unwrap_or_else(|| panic!("no parameter {name} in the table"))
}

/// `def(table, name).check(v)`.
pub fn check(table: &[ParamDef], name: &str, v: impl TryInto<u64>) -> Result<(), String> {
    def(table, name).check(v.try_into().unwrap_or(u64::MAX))
}

/// Largest token vector, `heads * head_dim`, of every unit that takes one
/// (Llama-2-13B's is 5,120).
pub const MAX_VECTOR: usize = 8192;

/// The rule `heads * head_dim <= MAX_VECTOR`, with its one-line message.
pub fn check_vector(heads: usize, head_dim: usize) -> Result<(), String> {
    if heads * head_dim > MAX_VECTOR {
        return Err(format!("heads x head-dim must be at most {MAX_VECTOR}, got {heads} x {head_dim} = {}", heads * head_dim));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_parameter_and_the_range() {
        let d = |allowed| ParamDef { name: "x", default: Value::Int(1), allowed, doc: "" };
        assert_eq!(d(Allowed::Range(1, 8)).check(9).unwrap_err(), "x must be in 1..=8, got 9");
        assert_eq!(d(Allowed::Range(1, 8)).check(0).unwrap_err(), "x must be in 1..=8, got 0");
        d(Allowed::Range(1, 8)).check(8).unwrap();
        assert_eq!(d(Allowed::Pow2(1, 64)).check(12).unwrap_err(), "x must be a power of two in 1..=64, got 12");
        d(Allowed::Pow2(1, 64)).check(64).unwrap();
        assert_eq!(d(Allowed::Ints(&[16, 32])).check(8).unwrap_err(), "x must be one of 16, 32, got 8");
        assert_eq!(d(Allowed::Names(&["a", "b"])).check_name("c").unwrap_err(), "unknown variant `c`: x must be one of a, b");
        d(Allowed::Names(&["a", "b"])).check_name("b").unwrap();
        assert!(d(Allowed::Names(&["a"])).check(0).is_err());
    }
}
