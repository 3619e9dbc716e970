//! Turns a rust-hdl block into the emitted Verilog: checks, Verilog
//! generation, the text passes of `postprocess`, and a top-level wrapper
//! that packs rust-hdl's per-lane port arrays (`in_data$0`, `in_data$1`, ...)
//! into plain buses (`in_data[16*L-1:0]`).

use crate::postprocess;
use crate::GenError;
use rust_hdl::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    In,
    Out,
}

/// A port of the emitted top-level module.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Port {
    pub name: String,
    pub dir: Dir,
    pub width: usize,
    /// Elements packed into the bus (1 for a scalar port) and their width.
    pub elements: usize,
    pub element_width: usize,
    pub doc: String,
}

/// A top-level port of the rust-hdl block: a scalar or one element of an array.
struct RawPort {
    base: String,
    index: Option<usize>,
    dir: Dir,
    width: usize,
}

#[derive(Default)]
struct TopPorts {
    depth: usize,
    ports: Vec<RawPort>,
}

impl Probe for TopPorts {
    fn visit_start_scope(&mut self, _name: &str, _node: &dyn Block) {
        self.depth += 1;
    }
    fn visit_end_scope(&mut self, _name: &str, _node: &dyn Block) {
        self.depth -= 1;
    }
    fn visit_atom(&mut self, name: &str, signal: &dyn Atom) {
        if self.depth != 1 {
            return;
        }
        let dir = match signal.kind() {
            AtomKind::InputParameter => Dir::In,
            AtomKind::OutputParameter => Dir::Out,
            _ => return,
        };
        let (base, index) = match name.rsplit_once('$') {
            Some((b, i)) if i.chars().all(|c| c.is_ascii_digit()) => (b.to_string(), i.parse().ok()),
            _ => (name.to_string(), None),
        };
        self.ports.push(RawPort { base, index, dir, width: signal.bits() });
    }
}

fn conns_are_sliced(raw: &[RawPort], name: &str) -> bool {
    raw.iter().any(|r| r.base == name && r.index.is_some())
}

/// A memory of the unit, its own Verilog module (the SRAM swap point).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Memory {
    /// Its role in the unit.
    pub name: String,
    /// The Verilog module holding the storage.
    pub module: String,
    /// Words.
    pub depth: usize,
    /// Bits per word.
    pub width: usize,
    /// depth * width.
    pub bits: u64,
}

/// The manifest's entry for a memory the hdl block declared.
impl From<hdl::prim::ram::MemInfo> for Memory {
    fn from(i: hdl::prim::ram::MemInfo) -> Memory {
        Memory { bits: i.bits(), name: i.name, module: i.module, depth: i.depth, width: i.width }
    }
}

pub struct Elaborated {
    pub verilog: String,
    pub ports: Vec<Port>,
    /// Memories (none for most units).
    pub memories: Vec<Memory>,
}

mod generated {
    include!(concat!(env!("OUT_DIR"), "/port_docs.rs"));
}
pub use generated::PORT_DOCS;

/// The port docs of block type `B`: the `///` comments on its port fields
/// in hdl, collected by build.rs. `vars` fills `{name}` placeholders in
/// them (a latency that depends on a parameter).
fn port_docs<B: Block>(vars: &[(&str, String)]) -> Result<Vec<(String, String)>, GenError> {
    let full = std::any::type_name::<B>();
    let path = full.split('<').next().unwrap_or(full);
    let fields = PORT_DOCS
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, f)| *f)
        .ok_or_else(|| GenError(format!("internal: no port fields found for {path} in hdl/src")))?;
    fields
        .iter()
        .map(|&(name, doc)| {
            let mut d = doc
                .ok_or_else(|| GenError(format!("internal: port {name} of {path} has no /// description in hdl")))?
                .to_string();
            for (k, v) in vars {
                d = d.replace(&format!("{{{k}}}"), v);
            }
            Ok((name.to_string(), d))
        })
        .collect()
}

/// Every port needs a one-line `///` description on its hdl field.
/// Any panic inside rust-hdl or a block's construction is turned into an
/// error: rtl-gen reports, it never crashes on a user.
pub fn elaborate<B: Block>(block: B, module: &str) -> Result<Elaborated, GenError> {
    elaborate_with(block, module, &[], &[])
}

/// `elaborate`, with the top-level width of some scalar ports set apart
/// from the core's: `(port, width)`. An output narrower than its core port
/// takes the core's low bits (the unit guarantees the rest are 0), a wider
/// one is zero-extended; an input is truncated or zero-extended into the
/// core. For ports whose width is a parameter (an address width) while
/// rust-hdl's widths are fixed at compile time. `vars` fills placeholders
/// in the port docs.
pub fn elaborate_with<B: Block>(
    block: B,
    module: &str,
    widths: &[(&str, usize)],
    vars: &[(&str, String)],
) -> Result<Elaborated, GenError> {
    let docs = port_docs::<B>(vars)?;
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| elaborate_inner(block, module, &docs, widths)));
    std::panic::set_hook(hook);
    match r {
        Ok(r) => r,
        Err(e) => {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(GenError(format!("internal error while elaborating {module}: {msg}")))
        }
    }
}

fn elaborate_inner<B: Block>(
    mut block: B,
    module: &str,
    docs: &[(String, String)],
    widths: &[(&str, usize)],
) -> Result<Elaborated, GenError> {
    block.connect_all();
    check_all(&block).map_err(|e| GenError(format!("internal: rust-hdl check failed for {module}: {e:?}")))?;
    let raw = generate_verilog_unchecked(&block);
    let core = format!("{module}_core");
    let v = postprocess::rename_modules(&raw, &core);
    let v = postprocess::size_casts(&v);
    let v = postprocess::range_localparams(&v);

    let mut probe = TopPorts::default();
    block.accept("top", &mut probe);
    let mut ports: Vec<Port> = Vec::new();
    let mut conns: Vec<String> = Vec::new();
    // resized ports: (declaration, assignment) in the wrapper
    let mut glue: Vec<String> = Vec::new();
    for rp in &probe.ports {
        let pos = ports.iter().position(|p| p.name == rp.base);
        let p = match pos {
            Some(i) => &mut ports[i],
            None => {
                let doc = docs
                    .iter()
                    .find(|(n, _)| *n == rp.base)
                    .map(|(_, d)| d.clone())
                    .ok_or_else(|| GenError(format!("internal: port {} of {module} has no description", rp.base)))?;
                ports.push(Port { name: rp.base.clone(), dir: rp.dir.clone(), width: 0, elements: 0, element_width: rp.width, doc });
                ports.last_mut().unwrap()
            }
        };
        match rp.index {
            Some(i) => {
                assert_eq!(i, p.elements, "port array elements arrive in order");
                let lo = i * rp.width;
                conns.push(format!(".{}${}({}[{}:{}])", rp.base, i, rp.base, lo + rp.width - 1, lo));
            }
            None => match widths.iter().find(|(n, _)| *n == rp.base) {
                Some(&(_, w)) if w != rp.width => {
                    let (cw, inner) = (rp.width, format!("{}_core", rp.base));
                    glue.push(format!("    wire [{}:0] {inner};", cw - 1));
                    let (to, from, tw) = if rp.dir == Dir::Out { (rp.base.as_str(), inner.as_str(), w) } else { (inner.as_str(), rp.base.as_str(), cw) };
                    let fw = if rp.dir == Dir::Out { cw } else { w };
                    let rhs = if tw < fw { format!("{from}[{}:0]", tw - 1) } else { format!("{{{}'d0, {from}}}", tw - fw) };
                    glue.push(format!("    assign {to} = {rhs};"));
                    conns.push(format!(".{}({inner})", rp.base));
                }
                _ => conns.push(format!(".{0}({0})", rp.base)),
            },
        }
        p.elements += 1;
        p.width += rp.width;
        if rp.index.is_none() {
            if let Some(&(_, w)) = widths.iter().find(|(n, _)| *n == rp.base) {
                (p.width, p.element_width) = (w, w);
            }
        }
    }
    for (n, _) in widths {
        if !probe.ports.iter().any(|r| r.base == *n && r.index.is_none()) {
            return Err(GenError(format!("internal: {module} has no scalar port {n} to resize")));
        }
    }
    let mut w = String::new();
    w.push_str(&format!("module {module} (\n"));
    let decls: Vec<String> = ports
        .iter()
        .map(|p| {
            let dir = if p.dir == Dir::In { "input  wire" } else { "output wire" };
            // arrays keep a range even at one bit, since the core is wired by slices
            let array = conns_are_sliced(&probe.ports, &p.name);
            let range = if p.width > 1 || array { format!("[{}:0] ", p.width - 1) } else { String::new() };
            format!("    {dir} {range}{}", p.name)
        })
        .collect();
    for (i, (d, p)) in decls.iter().zip(&ports).enumerate() {
        let comma = if i + 1 < ports.len() { "," } else { "" };
        w.push_str(&format!("{d}{comma} // {}\n", p.doc));
    }
    w.push_str(");\n");
    for g in &glue {
        w.push_str(g);
        w.push('\n');
    }
    w.push_str(&format!("    {core} core (\n        {}\n    );\n", conns.join(",\n        ")));
    w.push_str(&format!("endmodule // {module}\n\n"));
    Ok(Elaborated { verilog: format!("{w}{}", v.trim_start()), ports, memories: Vec::new() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_without_a_doc_is_an_error() {
        // the shifter's core documents `en` but not `clock`
        let e = match elaborate(hdl::prim::zero_remove::ZeroRemove::<8>::new(4, 1), "x") {
            Ok(_) => panic!("elaborated without docs"),
            Err(e) => e.0,
        };
        assert_eq!(e, "internal: port clock of hdl::prim::zero_remove::ZeroRemove has no /// description in hdl");
    }

    #[test]
    fn vec_and_array_ports_are_collected() {
        let docs = |path: &str| PORT_DOCS.iter().find(|(p, _)| *p == path).map(|(_, f)| *f).unwrap();
        let shifter = docs("hdl::prim::zero_remove::ZeroRemoveShifter");
        // the `pub` In/Out fields, Vec ones included; not the private
        // sub-block `net` nor the local `advance`
        let names: Vec<&str> = shifter.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            ["clock", "reset", "in_valid", "in_ready", "in_data", "in_keep", "out_valid", "out_ready", "out_data", "out_count"]
        );
        assert!(shifter.iter().all(|(_, d)| d.is_some()));
    }
}
