//! The outputs of `kvsim compare` (docs/spec.md §16.5): the report as JSON,
//! as Markdown tables, and the two plots (SVG, drawn with `plotters`).

use super::hardware::{SchemeCost, Side};
use super::{Row, Scheme, SCHEMES};
use plotters::prelude::*;
use serde::Serialize;
use std::path::Path;

#[derive(Clone, Debug, Serialize)]
pub struct CompareReport {
    pub input: String,
    pub shape: [usize; 5],
    pub heads: usize,
    pub head_dim: usize,
    pub q_source: String,
    pub queries_per_sequence: usize,
    pub queries: u64,
    pub thresholds: String,
    pub ppa: String,
    pub rows: Vec<Row>,
    pub hardware: Vec<SchemeCost>,
}

fn db(x: Option<f64>) -> String {
    x.map_or("exact".into(), |v| format!("{v:.2} dB"))
}

fn opt(x: Option<f64>, f: impl Fn(f64) -> String) -> String {
    x.map_or("-".into(), f)
}

/// `12,345`.
fn grouped(x: f64) -> String {
    let s = format!("{}", x.round() as i64);
    let b = s.as_bytes();
    let mut out = String::new();
    for (i, c) in b.iter().enumerate() {
        if i > 0 && (b.len() - i) % 3 == 0 && *c != b'-' && b[i - 1] != b'-' {
            out.push(',');
        }
        out.push(*c as char);
    }
    out
}

impl CompareReport {
    /// The default row of a scheme.
    pub fn default_row(&self, s: Scheme) -> Option<&Row> {
        self.rows.iter().find(|r| r.scheme == s && r.default)
    }

    pub fn markdown(&self) -> String {
        let mut s = String::new();
        s += "# Five schemes on one KV set (spec §16)\n\n";
        s += &format!(
            "Set `{}`, shape {:?}, {} KV heads of {}; Q {}, {} queries per sequence ({} in all); Oaken thresholds {}; hardware from `{}`.\n\n",
            self.input, self.shape, self.heads, self.head_dim, self.q_source, self.queries_per_sequence, self.queries, self.thresholds, self.ppa
        );
        s += "## Fidelity and stored bits\n\n";
        s += "Bits per element count every stored bit of the quantized elements (§16.2); the FP16 window is the share of elements still in FP16 at the end of the set, counted at 16 bits in \"all in\". SQNR over the quantized elements; attention error and top-1 agreement over decode-step queries with the window exact (§16.3). `*`: the scheme's default.\n\n";
        s += "| scheme | setting | bits/element stored | FP16 window | bits/element all in | SQNR K | SQNR V | attention rel. error | top-1 agreement |\n";
        s += "|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
        for r in &self.rows {
            let name = format!("{}{}", r.setting, if r.default { " *" } else { "" });
            match &r.bits {
                None => {
                    s += &format!("| {} | {name} | not run: {} | | | | | | |\n", r.scheme.name(), r.not_run.as_deref().unwrap_or("-"));
                }
                Some(b) => {
                    let all = b.quantized_elements + b.full_precision_elements;
                    let fp = if all == 0 { 0.0 } else { b.full_precision_elements as f64 / all as f64 };
                    s += &format!(
                        "| {} | {name} | {:.4} | {:.2}% | {:.4} | {} | {} | {} | {} |\n",
                        r.scheme.name(),
                        b.per_quantized,
                        100.0 * fp,
                        b.all_in,
                        db(r.sqnr_k_db),
                        db(r.sqnr_v_db),
                        opt(r.attention_rel_error, |e| format!("{e:.4}")),
                        opt(r.top1_agreement, |a| format!("{:.1}%", 100.0 * a)),
                    );
                }
            }
        }
        s += "\n## Stored bits by part (per quantized element)\n\n| scheme | setting | parts | FP16 window |\n|---|---|---|---|\n";
        for r in self.rows.iter().filter(|r| r.bits.is_some()) {
            let b = r.bits.as_ref().unwrap();
            let parts: Vec<String> = b.parts.iter().filter(|p| p.bits != 0.0).map(|p| format!("{} {:.4}", p.part, p.bits)).collect();
            s += &format!("| {} | {} | {} | {} |\n", r.scheme.name(), r.setting, parts.join(" + "), r.window);
        }
        s += "\n## Hardware at the default parameters\n\n";
        s += "NAND2-eq per element per cycle: each unit's logic NAND2-eq (memories as macros where synthesized that way, their bits apart) over the elements it takes per cycle, summed over the units of a side (§16.4). The error is the default setting's.\n\n";
        s += "| scheme | quantize side, NAND2-eq/elem/cycle | dequantize or compute side | memory bits | max clock | attention rel. error | bits/element all in |\n";
        s += "|---|---:|---:|---:|---:|---:|---:|\n";
        for h in &self.hardware {
            let missing = |side: Side| -> String {
                let us: Vec<String> = h.units.iter().filter(|u| u.side == side && u.nand2_eq_per_element_cycle.is_none()).map(|u| format!("{} ({}): {}", u.unit, u.role, u.source)).collect();
                if h.units.is_empty() {
                    "no RTL: a baseline, not a unit".into()
                } else {
                    us.join("; ")
                }
            };
            let side = |v: Option<f64>, sd: Side| v.map_or_else(|| missing(sd), |x| format!("{x:.0}"));
            let d = self.default_row(h.scheme);
            s += &format!(
                "| {} | {} | {} | {} | {} | {} | {} |\n",
                h.scheme.name(),
                side(h.quantize_nand2_per_element_cycle, Side::Quantize),
                side(h.dequantize_nand2_per_element_cycle, Side::Dequantize),
                opt(h.memory_bits.map(|m| m as f64), grouped),
                opt(h.max_clock_mhz, |c| format!("{c:.1} MHz")),
                opt(d.and_then(|r| r.attention_rel_error), |e| format!("{e:.4}")),
                opt(d.and_then(|r| r.bits.as_ref()).map(|b| b.all_in), |b| format!("{b:.4}")),
            );
        }
        s += "\n| scheme | side | unit | role | source | NAND2-eq | memory bits | elements/cycle | NAND2-eq/elem/cycle | max clock |\n";
        s += "|---|---|---|---|---|---:|---:|---:|---:|---:|\n";
        for h in &self.hardware {
            for u in &h.units {
                s += &format!(
                    "| {} | {:?} | `{}` | {} | {} | {} | {} | {} | {} | {} |\n",
                    h.scheme.name(),
                    u.side,
                    u.unit,
                    u.role,
                    u.source,
                    opt(u.nand2_eq, grouped),
                    opt(u.memory_bits.map(|m| m as f64), grouped),
                    opt(u.elements_per_cycle, |e| format!("{e}")),
                    opt(u.nand2_eq_per_element_cycle, |e| format!("{e:.0}")),
                    opt(u.max_clock_mhz, |c| format!("{c:.1} MHz")),
                );
            }
        }
        s
    }

    /// One row per scheme at its default setting: the README's table
    /// (`make readme-compare`).
    pub fn summary(&self) -> String {
        let mut s = String::new();
        s += "| scheme, default setting | bits/element all in | SQNR K / V | attention rel. error | top-1 key | NAND2-eq/elem/cycle, quantize + dequantize | max clock |\n";
        s += "|---|---:|---|---:|---:|---|---:|\n";
        for sc in SCHEMES {
            let Some(r) = self.default_row(sc) else { continue };
            let Some(b) = &r.bits else { continue };
            let h = self.hardware.iter().find(|h| h.scheme == sc);
            let area = match h {
                Some(h) if h.units.is_empty() => "no unit (baseline)".to_string(),
                Some(h) => match (h.quantize_nand2_per_element_cycle, h.dequantize_nand2_per_element_cycle) {
                    (Some(q), Some(d)) => format!("{} + {}", grouped(q), grouped(d)),
                    _ => {
                        let miss: Vec<String> = h
                            .units
                            .iter()
                            .filter(|u| u.nand2_eq_per_element_cycle.is_none())
                            .map(|u| format!("{} ({})", u.unit, if u.source == "no RTL yet" { "no RTL yet" } else { "not synthesized" }))
                            .collect();
                        format!("incomplete: {}", miss.join(", "))
                    }
                },
                None => "-".into(),
            };
            s += &format!(
                "| {}, {} | {:.2} | {} / {} | {} | {} | {} | {} |\n",
                sc.name(),
                r.setting,
                b.all_in,
                db(r.sqnr_k_db),
                db(r.sqnr_v_db),
                opt(r.attention_rel_error, |e| format!("{e:.3}")),
                opt(r.top1_agreement, |a| format!("{:.1}%", 100.0 * a)),
                area,
                opt(h.and_then(|h| h.max_clock_mhz), |c| format!("{c:.0} MHz")),
            );
        }
        s
    }

    /// Attention error against all-in bits per element, one series per scheme.
    pub fn plot_bits(&self, path: &Path) -> Result<(), String> {
        let series: Vec<(Scheme, Vec<(f64, f64)>)> = SCHEMES
            .iter()
            .map(|&sc| {
                let mut pts: Vec<(f64, f64)> = self.rows.iter().filter(|r| r.scheme == sc).filter_map(|r| Some((r.bits.as_ref()?.all_in, r.attention_rel_error?))).collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
                (sc, pts)
            })
            .collect();
        let all: Vec<(f64, f64)> = series.iter().flat_map(|s| s.1.clone()).collect();
        plot(path, "Attention-output error against stored bits", "bits per element, all in (FP16 window at 16 bits)", &series, &all, None, &[])
    }

    /// The Pareto chart: attention error against NAND2-eq per element per
    /// cycle (both sides), one point per scheme at its defaults.
    pub fn plot_area(&self, path: &Path) -> Result<(), String> {
        let mut series = vec![];
        let mut left_out = vec![];
        for h in &self.hardware {
            let err = self.default_row(h.scheme).and_then(|r| r.attention_rel_error);
            match (h.total(), err) {
                (Some(x), Some(y)) => series.push((h.scheme, vec![(x, y)])),
                _ if h.units.is_empty() => left_out.push(format!("{}: no RTL (a baseline)", h.scheme.name())),
                _ => {
                    let why: Vec<String> = h.units.iter().filter(|u| u.nand2_eq_per_element_cycle.is_none()).map(|u| format!("{} {}", u.unit, u.source)).collect();
                    left_out.push(format!("{}: {}", h.scheme.name(), why.join(", ")));
                }
            }
        }
        let all: Vec<(f64, f64)> = series.iter().flat_map(|s| s.1.clone()).collect();
        plot(path, "Attention-output error against area (defaults)", "NAND2-eq per element per cycle, quantize + dequantize side (OSU018)", &series, &all, Some(0.0), &left_out)
    }
}

fn color(s: Scheme) -> RGBColor {
    match s {
        Scheme::Oaken => RGBColor(31, 119, 180),
        Scheme::Kivi => RGBColor(255, 127, 14),
        Scheme::Titanus => RGBColor(44, 160, 44),
        Scheme::PackKv => RGBColor(214, 39, 40),
        Scheme::Hack => RGBColor(148, 103, 189),
        Scheme::Intn => RGBColor(100, 100, 100),
    }
}

/// One chart: a log error axis, `series` as lines with points (a single
/// point is a labelled marker), `notes` under the caption.
fn plot(path: &Path, title: &str, x_desc: &str, series: &[(Scheme, Vec<(f64, f64)>)], all: &[(f64, f64)], x_from: Option<f64>, notes: &[String]) -> Result<(), String> {
    let e = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let (mut x0, mut x1) = all.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let (mut y0, mut y1) = all.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.1), b.max(p.1)));
    if all.is_empty() {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.01, 1.0);
    }
    let pad = ((x1 - x0) * 0.08).max(x1.abs() * 0.05).max(0.1);
    x0 = x_from.unwrap_or(x0 - pad).min(x0 - pad).max(x_from.unwrap_or(f64::NEG_INFINITY));
    x1 += pad;
    (y0, y1) = (y0 / 1.5, y1 * 1.5);
    let height = 520 + 18 * notes.len() as u32;
    let root = SVGBackend::new(path, (900, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let (top, body) = root.split_vertically(40 + 18 * notes.len() as u32);
    top.draw(&Text::new(title.to_string(), (10, 8), ("sans-serif", 20).into_font())).map_err(|x| e(&x))?;
    for (i, n) in notes.iter().enumerate() {
        top.draw(&Text::new(format!("not plotted: {n}"), (10, 34 + 18 * i as i32), ("sans-serif", 13).into_font())).map_err(|x| e(&x))?;
    }
    let mut chart = ChartBuilder::on(&body)
        .margin(12)
        .x_label_area_size(42)
        .y_label_area_size(64)
        .build_cartesian_2d(x0..x1, (y0..y1).log_scale())
        .map_err(|x| e(&x))?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("attention-output relative error vs FP16")
        .y_label_formatter(&|v| format!("{v:.3}"))
        .x_label_formatter(&|v| if x1 > 100.0 { grouped(*v) } else { format!("{v:.1}") })
        .draw()
        .map_err(|x| e(&x))?;
    // points only: a scheme's settings are not one curve (Oaken's modes,
    // Titanus's pruning), so no line joins them
    for (sc, pts) in series {
        let c = color(*sc);
        let style = ShapeStyle { color: c.to_rgba(), filled: true, stroke_width: 2 };
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 5, style)))
            .map_err(|x| e(&x))?
            .label(sc.name())
            .legend(move |(x, y)| Circle::new((x + 8, y), 5, style));
        if pts.len() == 1 {
            let label = Text::new(sc.name().to_string(), (8, -18), ("sans-serif", 14).into_font());
            chart.draw_series(std::iter::once(EmptyElement::at(pts[0]) + label)).map_err(|x| e(&x))?;
        }
    }
    chart.configure_series_labels().background_style(WHITE.mix(0.85)).border_style(BLACK).position(SeriesLabelPosition::UpperRight).draw().map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))?;
    Ok(())
}
