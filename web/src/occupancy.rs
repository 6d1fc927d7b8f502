//! A runtime pane's occupancy over time: bytes in use and reserved after each step (and, for a
//! tiered allocator, in use per level), as a small SVG line chart.

use yew::prelude::*;

use crate::format;

/// Width and height of the chart, SVG units.
const W: f64 = 320.0;
const H: f64 = 80.0;

/// Properties: the points `(step, in use, reserved, per level in use)` and level names.
#[derive(Properties, PartialEq)]
pub struct OccupancyProps {
    /// Pane index (test ids).
    pub index: usize,
    /// Points in step order.
    pub points: Vec<(u64, u64, u64, Vec<u64>)>,
    /// Level names, fastest first (empty when not tiered).
    pub levels: Vec<String>,
}

fn path(
    points: &[(u64, u64, u64, Vec<u64>)],
    max: u64,
    y: impl Fn(&(u64, u64, u64, Vec<u64>)) -> u64,
) -> String {
    let n = points.len().max(2) - 1;
    points
        .iter()
        .enumerate()
        .map(|(k, p)| {
            // screen coordinates: a lossy f64 is what we want here
            #[allow(clippy::cast_precision_loss)]
            let (x, v) = (k as f64 / n as f64 * W, y(p) as f64 / max.max(1) as f64);
            format!("{}{x:.1},{:.1}", if k == 0 { "M" } else { " L" }, H - v * H)
        })
        .collect()
}

/// The chart.
#[function_component(Occupancy)]
pub fn occupancy(p: &OccupancyProps) -> Html {
    if p.points.is_empty() {
        return html! { <p class="muted" data-testid={format!("pane{}-occupancy", p.index)}>{ "Occupancy: statistics off." }</p> };
    }
    // Scaled to the bytes in use; reserved is drawn only when it is on the same scale (a pool
    // or a tiered manager reserves far more than it uses).
    let in_use = p.points.iter().map(|q| q.1).max().unwrap_or(1).max(1);
    let reserved = p.points.iter().map(|q| q.2).max().unwrap_or(0);
    let show_reserved = reserved <= in_use.saturating_mul(4);
    let max = if show_reserved {
        reserved.max(in_use)
    } else {
        in_use
    };
    let colours = [
        "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
    ];
    let levels: Html = p
        .levels
        .iter()
        .enumerate()
        .map(|(k, name)| {
            let d = path(&p.points, max, |q| q.3.get(k).copied().unwrap_or(0));
            let c = colours[k % colours.len()];
            html! { <path d={d} fill="none" stroke={c} stroke-width="1.2"><title>{ format!("{name} in use") }</title></path> }
        })
        .collect();
    let first = p.points.first().map_or(0, |q| q.0);
    let last = p.points.last().map_or(0, |q| q.0);
    html! {
        <figure class="occupancy" data-testid={format!("pane{}-occupancy", p.index)} data-points={p.points.len().to_string()} data-levels={p.levels.len().to_string()}>
            <svg viewBox={format!("0 0 {W} {H}")} width="100%" height="80" role="img"
                aria-label={format!("occupancy over steps {first} to {last}; top {}", format::binary(max))}>
                if show_reserved {
                    <path d={path(&p.points, max, |q| q.2)} fill="none" stroke="#999" stroke-dasharray="3 2" stroke-width="1"><title>{ "reserved" }</title></path>
                }
                if p.levels.is_empty() {
                    <path d={path(&p.points, max, |q| q.1)} fill="none" stroke="#1f77b4" stroke-width="1.5"><title>{ "in use" }</title></path>
                } else {
                    { levels }
                }
            </svg>
            <figcaption class="muted">
                { format!("Occupancy, steps {first}–{last}: ") }
                if p.levels.is_empty() {
                    <span style="color:#1f77b4">{ "in use" }</span>
                } else {
                    { for p.levels.iter().enumerate().map(|(k, n)| html! { <span style={format!("color:{}", colours[k % colours.len()])}>{ format!("{n} ") }</span> }) }
                }
                { if show_reserved { format!(" · reserved (dashed) · top {}", format::binary(max)) } else { format!(" · top {} (reserved {} is off this scale)", format::binary(max), format::binary(reserved)) } }
            </figcaption>
        </figure>
    }
}
