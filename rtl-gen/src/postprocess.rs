//! Text passes over rust-hdl's Verilog (toolchain notes, traps 3 and 5):
//! module names are put under the unit's name, rust-hdl's mask-style casts
//! become SystemVerilog size casts (lint-clean and width-exact), and every
//! localparam gets an explicit range (Yosys reads unranged signed
//! localparams as unsigned).

/// Renames rust-hdl's `top` module tree to `core`, `core$...`.
pub fn rename_modules(v: &str, core: &str) -> String {
    let mut out = String::with_capacity(v.len() + 1024);
    for line in v.lines() {
        let t = line.trim_start();
        let indent = &line[..line.len() - t.len()];
        if let Some(rest) = t.strip_prefix("module top") {
            out.push_str(&format!("{indent}module {core}{rest}\n"));
        } else if let Some(rest) = t.strip_prefix("endmodule // top") {
            out.push_str(&format!("{indent}endmodule // {core}{rest}\n"));
        } else if t.starts_with("top$") && t.ends_with('(') && !t.contains('=') {
            out.push_str(&format!("{indent}{core}{}\n", &t[3..]));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// `((expr) & N'hMASK)` with MASK = 2^N-1 -> `N'(expr)`. rust-hdl writes
/// an expression on one line, so each line is rewritten alone (a rescan
/// of the whole text after every cast was quadratic: seconds on the
/// largest units); within a line the scan resumes where the last cast
/// began, as nothing before it changed.
pub fn size_casts(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for line in v.split_inclusive('\n') {
        if !line.contains(") & ") {
            out.push_str(line);
            continue;
        }
        let mut s = line.to_string();
        let mut from = 0;
        while let Some((start, end, n, inner)) = find_cast(&s, from) {
            let rep = format!("{n}'({inner})");
            s.replace_range(start..end, &rep);
            from = start;
        }
        out.push_str(&s);
    }
    out
}

/// The first cast whose `) & ` is at or after `from`.
fn find_cast(s: &str, mut from: usize) -> Option<(usize, usize, usize, String)> {
    let b = s.as_bytes();
    while let Some(off) = s[from..].find(") & ") {
        let close = from + off; // the ')' that ends the inner expression
        from = close + 1;
        let rest = &s[close + 4..];
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        if digits.is_empty() || !rest[digits.len()..].starts_with("'h") {
            continue;
        }
        let hex_start = digits.len() + 2;
        let hex: String = rest[hex_start..].chars().take_while(|c| c.is_ascii_hexdigit()).collect();
        if hex.is_empty() || !rest[hex_start + hex.len()..].starts_with(')') {
            continue;
        }
        let n: usize = digits.parse().ok()?;
        if !is_all_ones(&hex, n) {
            continue;
        }
        // walk back to the '(' matching `close`
        let mut depth = 0i32;
        let mut open = None;
        for i in (0..close).rev() {
            match b[i] {
                b')' => depth += 1,
                b'(' if depth == 0 => {
                    open = Some(i);
                    break;
                }
                b'(' => depth -= 1,
                _ => {}
            }
        }
        let open = open?;
        if open == 0 || b[open - 1] != b'(' {
            continue;
        }
        let end = close + 4 + hex_start + hex.len() + 1;
        let inner = s[open + 1..close].to_string();
        return Some((open - 1, end, n, inner));
    }
    None
}

fn is_all_ones(hex: &str, n: usize) -> bool {
    let bits = hex.len() * 4;
    let full = n / 4;
    let rem = n % 4;
    if bits < n || hex.len() != full + (rem > 0) as usize {
        return false;
    }
    let mut chars = hex.chars();
    if rem > 0 {
        let top = chars.next().and_then(|c| c.to_digit(16)).unwrap_or(0);
        if top != (1 << rem) - 1 {
            return false;
        }
    }
    chars.all(|c| c == 'f')
}

/// `localparam [signed] name = N'...;` -> `localparam [signed] [N-1:0] name = ...;`
pub fn range_localparams(v: &str) -> String {
    let mut out = String::with_capacity(v.len() + 1024);
    for line in v.lines() {
        let t = line.trim_start();
        let indent = &line[..line.len() - t.len()];
        if let Some(rest) = t.strip_prefix("localparam") {
            let rest = rest.trim_start();
            let (signed, rest) = match rest.strip_prefix("signed") {
                Some(r) => ("signed ", r.trim_start()),
                None => ("", rest),
            };
            if let Some((name, value)) = rest.split_once(" = ") {
                let width: Option<usize> = value.split('\'').next().and_then(|w| w.trim().parse().ok());
                if let Some(w) = width {
                    out.push_str(&format!("{indent}localparam {signed}[{}:0] {} = {}\n", w - 1, name.trim(), value));
                    continue;
                }
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts() {
        assert_eq!(size_casts("y = ((a) & 8'hff);"), "y = 8'(a);");
        assert_eq!(size_casts("y = ((w) & 3'h7);"), "y = 3'(w);");
        assert_eq!(size_casts("z = k + ((a + (b)) & 5'h1f);"), "z = k + 5'(a + (b));");
        // nested
        assert_eq!(size_casts("z = ((((a) & 4'hf) + b) & 6'h3f);"), "z = 6'(4'(a) + b);");
        // a mask that is not all ones is left alone
        assert_eq!(size_casts("z = ((a) & 8'h0f);"), "z = ((a) & 8'h0f);");
        assert_eq!(size_casts("y = ((a) & 1'h1);"), "y = 1'(a);");
    }

    #[test]
    fn localparams() {
        assert_eq!(range_localparams("    localparam  k = 8'h5;"), "    localparam [7:0] k = 8'h5;\n");
        assert_eq!(
            range_localparams("localparam signed lo = 32'hffff8000;"),
            "localparam signed [31:0] lo = 32'hffff8000;\n"
        );
        assert_eq!(range_localparams("localparam  b = 1'b0;"), "localparam [0:0] b = 1'b0;\n");
    }

    #[test]
    fn renames() {
        let v = "module top(a);\n    top$x$0 x$0(\n        .a(x$0$a)\n    );\nendmodule // top\nmodule top$x$0(a);\nendmodule // top$x$0\n";
        let r = rename_modules(v, "unit_core");
        assert!(r.contains("module unit_core(a);"));
        assert!(r.contains("    unit_core$x$0 x$0(\n"));
        assert!(r.contains("module unit_core$x$0(a);"));
        assert!(r.contains("endmodule // unit_core$x$0"));
    }
}
