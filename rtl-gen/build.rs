//! Collects the port documentation of the hdl blocks: the `///` comment on
//! each `pub` port field (`Signal<In, _>` or `Signal<Out, _>`, alone or in a
//! `Vec` or an array) of every struct in hdl/src. Writes
//! `$OUT_DIR/port_docs.rs`: per struct, keyed by its path as
//! `std::any::type_name` spells it, the field name and its doc, or `None`
//! when the field has no comment (an emission that meets one fails).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

struct Field {
    name: String,
    doc: Option<String>,
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// `hdl/src/a/b.rs` -> `hdl::a::b`; `mod.rs` and `lib.rs` name their folder.
fn module_path(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts = vec!["hdl".to_string()];
    parts.extend(rel.iter().map(|c| c.to_string_lossy().into_owned()));
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts.join("::")
}

/// A port type: `Signal<In | Out, _>`, possibly inside `Vec<_>` or `[_; N]`.
fn is_port(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Array(a) => is_port(&a.elem),
        syn::Type::Path(p) => {
            let Some(seg) = p.path.segments.last() else { return false };
            let syn::PathArguments::AngleBracketed(args) = &seg.arguments else { return false };
            let mut types = args.args.iter().filter_map(|a| match a {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            });
            if seg.ident == "Signal" {
                matches!(types.next(), Some(syn::Type::Path(d)) if d.path.is_ident("In") || d.path.is_ident("Out"))
            } else {
                seg.ident == "Vec" && types.next().is_some_and(is_port)
            }
        }
        _ => false,
    }
}

/// The `///` lines of a field, trimmed and joined by spaces.
fn doc(attrs: &[syn::Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value().trim().to_string()),
                _ => None,
            },
            _ => None,
        })
        .filter(|l| !l.is_empty())
        .collect();
    (!lines.is_empty()).then(|| lines.join(" "))
}

fn collect(module: &str, items: &[syn::Item], out: &mut Vec<(String, Vec<Field>)>) {
    for item in items {
        match item {
            syn::Item::Struct(s) => {
                let syn::Fields::Named(named) = &s.fields else { continue };
                let fields: Vec<Field> = named
                    .named
                    .iter()
                    .filter(|f| matches!(f.vis, syn::Visibility::Public(_)) && is_port(&f.ty))
                    .map(|f| Field { name: f.ident.as_ref().unwrap().to_string(), doc: doc(&f.attrs) })
                    .collect();
                if !fields.is_empty() {
                    out.push((format!("{module}::{}", s.ident), fields));
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    collect(&format!("{module}::{}", m.ident), inner, out);
                }
            }
            _ => {}
        }
    }
}

/// constraints/ files that rtl-gen embeds (`include_str!` of `$OUT_DIR`).
const EMBEDDED: &[&str] = &[
    "unit.sdc.in",
    "synth.tcl.in",
    "sta.tcl.in",
    "clock_gate.v",
    "orfs/config.mk.in",
    "orfs/constraint.sdc.in",
    "fusesoc.core.in",
    "lint_waivers.vlt",
];

fn main() {
    let pkg = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = pkg.join("../hdl/src");
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    // each file, not the folder: cargo would compare the folders' own times,
    // which a fresh clone sets to now (.ci/run fixes only the files'); a new
    // file is named in an existing one's `mod`, so that one changes too.
    // Relative to this package (`../hdl/src/..`), which cargo resolves at
    // each check: an absolute path would tie the build folder to the clone
    // that filled it (a clone elsewhere reran this and rebuilt rtl-gen).
    println!("cargo:rerun-if-changed=build.rs");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.strip_prefix(pkg).unwrap_or(f).display());
    }
    // The constraint templates rtl-gen embeds, copied into $OUT_DIR and
    // embedded from there: cargo records an `include_str!` of a file
    // outside the package by its absolute path, which tied the build folder
    // to its clone as well.
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("constraints");
    std::fs::create_dir_all(out.join("orfs")).unwrap();
    for f in EMBEDDED {
        let rel = Path::new("../constraints").join(f);
        println!("cargo:rerun-if-changed={}", rel.display());
        std::fs::copy(pkg.join(&rel), out.join(f)).unwrap_or_else(|e| panic!("{}: {e}", rel.display()));
    }
    let mut structs = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        collect(&module_path(&src, f), &file.items, &mut structs);
    }
    let mut code = String::from("/// Per hdl struct with port fields: (field, its `///` doc).\n");
    code.push_str("pub const PORT_DOCS: &[(&str, &[(&str, Option<&str>)])] = &[\n");
    for (path, fields) in &structs {
        writeln!(code, "    ({path:?}, &[").unwrap();
        for f in fields {
            writeln!(code, "        ({:?}, {:?}),", f.name, f.doc).unwrap();
        }
        code.push_str("    ]),\n");
    }
    code.push_str("];\n");
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).join("port_docs.rs");
    std::fs::write(out, code).unwrap();
}
