//! One comparison pane: its settings form and its numbers.

use std::rc::Rc;

use yew::prelude::*;

use crate::analysis::PaneState;
use crate::format;
use crate::settings::{self, PaneSettings, ALIGNMENTS, MAX_ALIGNMENT};

/// A pane's result, compared by address: results are shared and never changed in place, and
/// comparing two plans of 60k buffers field by field on every render cost milliseconds.
#[derive(Clone)]
pub struct ResultRef(pub Rc<PaneState>);

impl PartialEq for ResultRef {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

/// The time limits a pane offers, milliseconds: a ladder from 0.5 s to the most a pane may
/// ask ([`settings::MAX_TIME_LIMIT_MS`]), plus `current` when a link gave another.
fn time_limits(current: u64) -> Vec<u64> {
    let mut v = vec![
        500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000, 120_000, 300_000,
    ];
    v.push(settings::MAX_TIME_LIMIT_MS);
    if !v.contains(&current) {
        v.push(current);
        v.sort_unstable();
    }
    v
}

/// A time limit as the selector shows it (`2 s`, `0.5 s`, `1.5 s`).
fn time_limit_text(ms: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let secs = ms as f64 / 1000.0;
    format!("{secs} s")
}

/// What a pane shows while its plan is computed in the worker.
const PLANNING: &str = "Planning in a background worker…";

/// Properties of a pane.
#[derive(Properties, PartialEq)]
pub struct PaneProps {
    /// 0-based index.
    pub index: usize,
    /// Settings.
    pub settings: PaneSettings,
    /// Result (or the planner's error).
    pub result: Option<ResultRef>,
    /// Pane 1's peak, to show differences against.
    pub baseline: Option<u64>,
    /// Memory budget in bytes, if the user set one.
    #[prop_or_default]
    pub budget: Option<u64>,
    /// Shown in the views.
    pub focused: bool,
    /// The model has dynamic-batch gears (the 400 MiB split switch applies).
    #[prop_or_default]
    pub gears: bool,
    /// The model is a graph (it has graph inputs and outputs; a buffer list has none).
    #[prop_or_default]
    pub graph: bool,
    /// Can be removed.
    pub removable: bool,
    /// Read-only (embed).
    pub readonly: bool,
    /// Settings changed.
    pub on_change: Callback<(usize, PaneSettings)>,
    /// Remove clicked.
    pub on_remove: Callback<usize>,
    /// Focus clicked.
    pub on_focus: Callback<usize>,
    /// While the worker plans this pane: milliseconds since it started.
    #[prop_or_default]
    pub planning_ms: Option<f64>,
    /// Cancel clicked (while planning in the worker).
    #[prop_or_default]
    pub on_cancel: Callback<usize>,
    /// "Plan again" clicked (after a cancel or a crash).
    #[prop_or_default]
    pub on_retry: Callback<usize>,
    /// Tensors of unknown size (not planned, not in any figure).
    #[prop_or_default]
    pub unknown: usize,
    /// Symbolic dims the user did not give, as bound (`batch = 1`).
    #[prop_or_default]
    pub defaulted: Vec<String>,
    /// A `.tflite` model: what TFLM's arena needs beyond the plan (the pane shows the arena
    /// size to write and offers the plan as TFLM files).
    #[prop_or_default]
    pub tflm: Option<crate::tflm::TflmArena>,
    /// Why this pane's plan could not be exported to TFLM (last download asked).
    #[prop_or_default]
    pub tflm_error: Option<String>,
    /// Why the pane opens with its strategy, one line ([`settings::Rules::why`]).
    #[prop_or_default]
    pub why: Option<&'static str>,
    /// "Download planned .tflite" / "Download C header" clicked.
    #[prop_or_default]
    pub on_tflm: Callback<(usize, crate::tflm::TflmFile)>,
    /// The open model, for the pane's GE run-time views ([`crate::sections`]).
    #[prop_or_default]
    pub sections: Option<crate::sections::Model>,
}

use crate::platform::{event_checked, event_value};

/// One runtime-allocator knob as a form field (text, policy menu or switch).
///
/// A value the knob refuses stays in the field, marked invalid, with the reason under it; the
/// pane keeps planning with the last good value until it is fixed.
fn knob_field(
    i: usize,
    s: &PaneSettings,
    name: &'static str,
    summary: &'static str,
    on_change: &Callback<(usize, PaneSettings)>,
    errors: &UseStateHandle<FieldErrors>,
) -> Html {
    let id = format!("pane{i}-knob-{name}");
    let key = format!("{}/{name}", s.strategy);
    let onchange = {
        let s = s.clone();
        let cb = on_change.clone();
        let errors = errors.clone();
        let key = key.clone();
        Callback::from(move |e: Event| {
            let mut n = s.clone();
            let v = if name.starts_with("no-") {
                event_checked(&e).to_string()
            } else {
                event_value(&e)
            };
            match n.knobs.set(name, &v) {
                Ok(()) => {
                    errors.set(without(&errors, &key));
                    cb.emit((i, n));
                }
                Err(why) => errors.set(with(&errors, &key, v, why)),
            }
        })
    };
    let draft = errors.get(&key).cloned();
    let oninput = on_typing(errors, &key);
    let value = draft
        .as_ref()
        .map_or_else(|| s.knobs.get(name), |(typed, _)| typed.clone());
    let bad = draft.and_then(|(_, why)| why);
    match name {
        "no-stats" | "no-leak-detector" => html! {
            <span class="checks" title={summary}><label><input type="checkbox" id={id.clone()} data-testid={id} checked={value == "true"} {onchange} />{ format!(" {}", name.trim_start_matches("no-").replace('-', " ")) }{ " off" }</label></span>
        },
        "policy" => html! {
            <>
                <label for={id.clone()} title={summary}>{ "Tier policy" }</label>
                <select id={id.clone()} data-testid={id} ~value={if value.is_empty() { "frequency".to_string() } else { value.clone() }} {onchange}>
                    <option value="frequency" selected={value.is_empty() || value == "frequency"}>{ "by access frequency" }</option>
                    <option value="fastest" selected={value == "fastest"}>{ "fastest level first" }</option>
                </select>
            </>
        },
        _ => html! {
            <>
                <label for={id.clone()} title={summary}>{ name.replace('-', " ") }</label>
                <span class="field">
                    <input type="text" class="num" id={id.clone()} data-testid={id.clone()} title={summary} placeholder="default" value={value} {onchange} {oninput}
                        aria-invalid={bad.is_some().then_some("true")} aria-describedby={bad.is_some().then(|| format!("{id}-error"))} />
                    { field_error(&id, bad.as_deref()) }
                </span>
            </>
        },
    }
}

/// Fields holding text that is not their value: key → (the text typed, why it was refused;
/// `None` while it is being typed). The field shows this text, so a re-render of the pane (five
/// a second while a pane plans) does not wipe what is being typed.
pub type FieldErrors = std::collections::BTreeMap<String, (String, Option<String>)>;

fn with(errors: &FieldErrors, key: &str, typed: String, why: String) -> FieldErrors {
    let mut e = errors.clone();
    e.insert(key.to_string(), (typed, Some(why)));
    e
}

/// Text typed in field `key`, not committed yet: a refused value's reason stays until the next
/// commit.
fn typing(errors: &FieldErrors, key: &str, typed: String) -> FieldErrors {
    let mut e = errors.clone();
    let why = e.remove(key).and_then(|(_, why)| why);
    e.insert(key.to_string(), (typed, why));
    e
}

/// The `oninput` of field `key`: keeps what is typed in the pane's field state.
fn on_typing(errors: &UseStateHandle<FieldErrors>, key: &str) -> Callback<InputEvent> {
    let errors = errors.clone();
    let key = key.to_string();
    Callback::from(move |e: InputEvent| errors.set(typing(&errors, &key, event_value(&e))))
}

fn without(errors: &FieldErrors, key: &str) -> FieldErrors {
    let mut e = errors.clone();
    e.remove(key);
    e
}

/// The Blocks figure: every block (children included) and, for GE plans, how many are top
/// level (GE's `blocks` statistic, which the CLI prints).
fn blocks_text(plan: &memplan_core::Plan) -> String {
    if plan.blocks.is_empty() {
        return "—".to_string();
    }
    let all = plan.blocks.len();
    match plan.stat("blocks") {
        Some(top) if usize::try_from(top).ok() != Some(all) => format!("{all} ({top} top-level)"),
        _ => all.to_string(),
    }
}

/// The reason a field's value was refused, under the field (`{id}-error`, which the field names
/// in `aria-describedby`); nothing when the value is good.
pub fn field_error(id: &str, why: Option<&str>) -> Html {
    let e = format!("{id}-error");
    why.map_or_else(|| html! {}, |w| error_note(&e, &e, w))
}

/// The one rendering of a refused value's reason, for the panes' fields and the model form's:
/// element `id` (named by the field's `aria-describedby`), test id `testid`. A `<span>`, as it
/// sits in a `<span class="field">` (a flex column lays it out under the input).
pub fn error_note(id: &str, testid: &str, why: &str) -> Html {
    html! { <span class="field-error" id={id.to_string()} data-testid={testid.to_string()} role="alert">{ why.to_string() }</span> }
}

/// A comparison pane.
#[function_component(Pane)]
pub fn pane(p: &PaneProps) -> Html {
    let i = p.index;
    let s = p.settings.clone();
    let errors = use_state(FieldErrors::new);
    let change = |f: fn(&mut PaneSettings, &Event)| {
        let s = s.clone();
        let cb = p.on_change.clone();
        Callback::from(move |e: Event| {
            let mut n = s.clone();
            f(&mut n, &e);
            cb.emit((i, n));
        })
    };
    let id = |what: &str| format!("pane{i}-{what}");
    let custom = !ALIGNMENTS.contains(&s.alignment);
    // a .tflite model: TFLM's rules, not GE's (no GE-only switches or run-time views)
    let tflite = p.tflm.is_some();
    // a custom alignment the planner refuses stays typed, with the reason under it
    let align_custom = id("align-custom");
    let align_draft = errors.get("align").cloned();
    let align_typed = align_draft.as_ref().map(|d| d.0.clone());
    let align_bad = align_draft.and_then(|d| d.1);
    let on_align_typing = on_typing(&errors, "align");
    let on_align_custom = {
        let s = s.clone();
        let cb = p.on_change.clone();
        let errors = errors.clone();
        Callback::from(move |e: Event| {
            let typed = event_value(&e);
            match typed.trim().parse::<u64>() {
                Ok(a) if (1..=MAX_ALIGNMENT).contains(&a) => {
                    errors.set(without(&errors, "align"));
                    let mut n = s.clone();
                    n.alignment = a;
                    cb.emit((i, n));
                }
                _ => {
                    let why =
                        format!("alignment: a whole number of bytes from 1 to {MAX_ALIGNMENT}");
                    errors.set(with(&errors, "align", typed, why));
                }
            }
        })
    };
    // a preset chosen drops the refused custom value: coming back to "custom" starts afresh
    let on_align = {
        let s = s.clone();
        let cb = p.on_change.clone();
        let errors = errors.clone();
        Callback::from(move |e: Event| {
            let mut n = s.clone();
            match event_value(&e).parse::<u64>() {
                Ok(a) => {
                    errors.set(without(&errors, "align"));
                    n.alignment = a;
                }
                Err(_) => {
                    if ALIGNMENTS.contains(&n.alignment) {
                        n.alignment = 1;
                    }
                }
            }
            cb.emit((i, n));
        })
    };
    let stats = match p.result.as_ref().map(|r| &*r.0) {
        None => html! { <p class="muted">{ "No model loaded." }</p> },
        Some(PaneState::Queued | PaneState::Planning { .. }) => {
            let cancel = {
                let cb = p.on_cancel.clone();
                Callback::from(move |_| cb.emit(i))
            };
            let elapsed = match p.planning_ms {
                Some(ms) => format!(" {:.1} s", ms / 1000.0),
                None => " (queued)".to_string(),
            };
            // an anytime search stops at its time limit: its progress is a fraction of it
            let limit = settings::is_anytime(&s.strategy).then(|| s.options().time_limit_ms);
            let progress = match (limit, p.planning_ms) {
                (Some(l), Some(ms)) => html! {
                    <>
                        <span data-testid={format!("pane{i}-limit")}>{ format!(" of at most {:.1} s (its time limit)", l as f64 / 1000.0) }</span>{ " " }
                        <progress data-testid={format!("pane{i}-progress")} max={l.to_string()} value={format!("{:.0}", ms.min(l as f64))} aria-label="time used of the search's limit" />
                    </>
                },
                _ => html! {},
            };
            html! {
                <p class="muted planning" role="status" data-testid={format!("pane{i}-planning")}>
                    { PLANNING }<span data-testid={format!("pane{i}-elapsed")}>{ elapsed }</span>{ progress }{ " " }
                    <button type="button" data-testid={format!("pane{i}-cancel")} onclick={cancel}>{ "Cancel" }</button>
                </p>
            }
        }
        Some(PaneState::Failed(f)) => {
            let retry = {
                let cb = p.on_retry.clone();
                Callback::from(move |_| cb.emit(i))
            };
            html! {
                <div class="error" role="alert" data-testid={format!("pane{i}-error")}>
                    <p>{ &f.reason }</p>
                    if f.retry && !p.readonly {
                        <button type="button" data-testid={format!("pane{i}-retry")} onclick={retry}>{ "Plan again" }</button>
                    }
                </div>
            }
        }
        Some(PaneState::Done(r)) => {
            // every arena together: GE's headline peak is HBM's alone (Plan::device_bytes)
            let need = r.plan.device_bytes();
            let diff = match p.baseline {
                Some(b) if i > 0 => html! {
                    <div class="stat diff"><dt>{ "vs pane 1" }</dt>
                    <dd data-testid={format!("pane{i}-diff")}>{ format::diff(b, need) }</dd></div>
                },
                _ => html! {},
            };
            let valid = match &r.valid {
                Ok(()) => {
                    html! { <span class="ok" data-testid={format!("pane{i}-valid")} title="the independent validator accepts this plan">{ "✓ valid" }</span> }
                }
                Err(e) => {
                    html! { <span class="error" data-testid={format!("pane{i}-invalid")} title={e.clone()}>{ "✗ invalid plan" }</span> }
                }
            };
            let gap = r
                .gap
                .as_ref()
                .map(|g| gap_view(i, &s.strategy, g, r.plan.arenas.len() > 1))
                .unwrap_or_default();
            html! {
                <>
                // an embed (read-only) says it once, in its header
                if !p.defaulted.is_empty() && !p.readonly {
                    <p class="banner note small" role="status" data-testid={format!("pane{i}-defaulted")}>
                        { format!("Assumed {}: symbolic dim{} not given (set above). The figures hold for {}.",
                            p.defaulted.join(", "), if p.defaulted.len() == 1 { "" } else { "s" },
                            if p.defaulted.len() == 1 { "this value" } else { "these values" }) }
                    </p>
                }
                <dl class="stats">
                    <div class="stat peak"><dt>{ "Peak" }</dt><dd data-testid={format!("pane{i}-peak")} data-bytes={r.plan.peak.to_string()}>{ format::bytes(r.plan.peak) }
                        if p.unknown > 0 {
                            <span class="muted small" data-testid={format!("pane{i}-unknown")} data-count={p.unknown.to_string()}
                                title="not planned: their size could not be inferred (listed in the warnings)">
                                { format!(" (+{} tensor{} of unknown size)", p.unknown, if p.unknown == 1 { "" } else { "s" }) }
                            </span>
                        }
                    </dd></div>
                    { diff }
                    if let Some(b) = p.budget {
                        <div class="stat"><dt title="the memory budget set above the panes">{ "Budget" }</dt>
                            <dd data-testid={format!("pane{i}-budget")} data-fits={(need <= b).to_string()}>
                                if need <= b {
                                    <span class="ok">{ format!("fits, {} to spare", format::binary(b - need)) }</span>
                                } else {
                                    <span class="error">{ format!("over by {}", format::bytes(need - b)) }</span>
                                }
                            </dd></div>
                    }
                    <div class="stat"><dt title="live-set lower bound on this pane's planned sizes (padding and alignment included): what any placement of these sizes needs; the sentence below measures from raw bytes">{ "÷ lower bound (planned sizes)" }</dt><dd>{ format::ratio(need, r.lower_bound) }<span class="muted">{ format!(" of {}", format::binary(r.lower_bound)) }</span></dd></div>
                    if !r.plan.arenas.is_empty() {
                        { arenas_view(i, &r.plan.arenas) }
                    }
                    if r.plan.arenas.len() > 1 {
                        <div class="stat"><dt title="the bytes of every memory type's arena: what budgets, the comparison with pane 1 and the ratio to the lower bound (which counts every type) use; the peak above is HBM's">{ "All arenas" }</dt>
                            <dd data-testid={format!("pane{i}-device")} data-bytes={need.to_string()}>{ format::bytes(need) }</dd></div>
                    }
                    <div class="stat"><dt>{ "No-reuse total" }</dt><dd>{ format::bytes(r.no_reuse) }</dd></div>
                    <div class="stat"><dt title="every block of the plan, level-2 children included (the outlines on the timeline); GE's own statistic, the CLI's 'blocks', counts the top-level blocks only">{ "Blocks" }</dt><dd data-testid={format!("pane{i}-blocks")}>{ blocks_text(&r.plan) }</dd></div>
                    <div class="stat"><dt title="bytes added by padding and alignment over all tensors">{ "Padding waste" }</dt><dd>{ format::bytes(r.padding_waste) }</dd></div>
                    <div class="stat"><dt>{ "Planning time" }</dt><dd data-testid={format!("pane{i}-time")} data-ms={format!("{:.1}", r.time_ms)}>{ format::millis(r.time_ms) }{ " " }{ valid }</dd></div>
                    if !r.plan.notes.is_empty() {
                        <div class="stat wide notes"><dt title="what the strategy reports about this plan">{ "Why" }</dt>
                            <dd data-testid={format!("pane{i}-notes")}>{ for r.plan.notes.iter().map(|n| html! { <p>{ n }</p> }) }</dd></div>
                    }
                    if let Some(o) = &r.overlay {
                        <div class="stat wide"><dt title="each gear's region: the largest offset + size over the shared and that gear's tensors">{ "Gears (batch: region)" }</dt>
                            <dd data-testid={format!("pane{i}-gears")}>{ o.gears.iter().map(|g| format!("{}: {}", g.batch, format::binary(g.peak_bytes))).collect::<Vec<_>>().join(" · ") }</dd></div>
                        <div class="stat wide"><dt title="each gear planned alone, laid side by side, versus the overlay in one region">{ "Side by side → overlaid" }</dt>
                            <dd data-testid={format!("pane{i}-overlay")} data-side={o.side_by_side_bytes.to_string()} data-overlay={o.overlay_bytes.to_string()}>{ format!("{} → {} (saves {})", format::binary(o.side_by_side_bytes), format::binary(o.overlay_bytes), format::binary(o.saving_bytes)) }</dd></div>
                    }
                    if let Some(sim) = &r.sim {
                        <div class="stat"><dt title="successful allocations / frees">{ "Allocs / frees" }</dt><dd data-testid={format!("pane{i}-allocs")}>{ if sim.stats { format!("{} / {}", sim.allocations, sim.frees) } else { "statistics off".to_string() } }{ if sim.failures > 0 { format!(" · {} failed", sim.failures) } else { String::new() } }</dd></div>
                        <div class="stat"><dt title="memplan simulate's peak: the allocator's highest byte in whole blocks (tiered: each level's highest used bytes, summed). The Peak above is the top byte of the replay's layout (offset + tensor size; tiered: the levels laid end to end from L1 at 0), so the two differ by the rounding and the levels' unused room">{ "Allocator peak" }</dt><dd data-testid={format!("pane{i}-sim-peak")} data-bytes={sim.peak.to_string()}>{ format::bytes(sim.peak) }</dd></div>
                        if sim.stats {
                            <div class="stat"><dt title="most bytes held from the device at once">{ "Reserved" }</dt><dd data-testid={format!("pane{i}-reserved")} data-bytes={sim.reserved.to_string()}>{ format::bytes(sim.reserved) }</dd></div>
                            <div class="stat"><dt title="most bytes handed out at once, rounding included">{ "Peak in use" }</dt><dd data-testid={format!("pane{i}-inuse")} data-bytes={sim.peak_in_use.to_string()}>{ format::bytes(sim.peak_in_use) }</dd></div>
                            <div class="stat"><dt title="allocations served from memory the allocator already held">{ "Cache hits" }</dt><dd data-testid={format!("pane{i}-hits")}>{ sim.cache_hits.to_string() }</dd></div>
                            <div class="stat"><dt title="1 − largest free chunk / total free, at the step with most bytes in use">{ "Fragmentation at peak" }</dt><dd>{ format!("{:.1}%", sim.fragmentation * 100.0) }</dd></div>
                            if sim.overhead > 0 {
                                <div class="stat"><dt title="aligned_alloc: alignment + a pointer-sized header per system allocation">{ "aligned_alloc overhead" }</dt><dd data-testid={format!("pane{i}-overhead")}>{ format::bytes(sim.overhead) }</dd></div>
                            }
                        }
                        <div class="stat"><dt title="tensors never freed that are not graph outputs (nobody consumes them)">{ "Leaks" }</dt>
                            <dd data-testid={format!("pane{i}-leaks")} data-records={sim.records.to_string()} title={sim.leaks.iter().map(|(n, op, b)| format!("{n} ({op}): {b} B")).collect::<Vec<_>>().join("\n")}>
                                { if !sim.leak_detector { "detector off".to_string() } else if sim.leaks.is_empty() { "none".to_string() } else { format!("{} tensor(s), {}", sim.leaks.len(), format::bytes(sim.leaks.iter().map(|l| l.2).sum())) } }
                            </dd></div>
                        if !sim.levels.is_empty() {
                            <div class="stat wide"><dt title="per level: peak in use / capacity, allocations, spilled in from a faster level, failures">{ "Levels" }</dt>
                                <dd data-testid={format!("pane{i}-levels")}>{ for sim.levels.iter().map(|(n, cap, peak, allocs, spilled, failed)| html! {
                                    <p>{ format!("{n}: {} / {} · {allocs} allocs · {spilled} spilled in{}", format::binary(*peak), if *cap >= u64::MAX / 2 { "∞".to_string() } else { format::binary(*cap) }, if *failed > 0 { format!(" · {failed} failed") } else { String::new() }) }</p>
                                }) }</dd></div>
                        }
                        <div class="stat wide">
                            <crate::occupancy::Occupancy index={i} points={sim.occupancy.clone()} levels={sim.levels.iter().map(|l| l.0.clone()).collect::<Vec<_>>()} />
                        </div>
                    }
                </dl>
                { gap }
                if let Some(t) = &p.tflm {
                    { tflm_view(i, t, r.plan.peak, p) }
                }
                </>
            }
        }
    };
    let focus_cls = if p.focused { "pane focused" } else { "pane" };
    if p.readonly {
        return html! {
            <section class={focus_cls} aria-label={format!("pane {}", i + 1)}>
                <h3>{ format!("{}. {}", i + 1, s.label()) }</h3>
                { stats }
            </section>
        };
    }
    let on_focus = {
        let cb = p.on_focus.clone();
        Callback::from(move |_| cb.emit(i))
    };
    let on_remove = {
        let cb = p.on_remove.clone();
        Callback::from(move |_| cb.emit(i))
    };
    html! {
        <section class={focus_cls} aria-label={format!("pane {}", i + 1)} data-testid={format!("pane{i}")}>
            <header class="pane-head">
                <h3>{ format!("Pane {}", i + 1) }</h3>
                <button type="button" class={if p.focused { "chip on" } else { "chip" }} onclick={on_focus} aria-pressed={p.focused.to_string()} title="show this pane's plan in the timeline">{ if p.focused { "shown below" } else { "show below" } }</button>
                if p.removable {
                    <button type="button" class="icon" onclick={on_remove} aria-label={format!("remove pane {}", i + 1)} title="remove pane">{ "×" }</button>
                }
            </header>
            <div class="form">
                <label for={id("strategy")}>{ "Strategy" }</label>
                <select id={id("strategy")} data-testid={format!("pane{i}-strategy")} title={settings::summary(&s.strategy)} ~value={s.strategy.clone()}
                    onchange={change(|n, e| n.strategy = event_value(e))}>
                    { for settings::strategy_names().into_iter().map(|name| html! {
                        <option value={name} selected={name == s.strategy} title={settings::summary(name)}>{ name }</option>
                    }) }
                </select>
                <p class="muted small summary-line" data-testid={format!("pane{i}-summary")}>{ settings::summary(&s.strategy) }</p>
                if let Some(why) = p.why {
                    <p class="small why-line" data-testid={format!("pane{i}-why")}>{ why }</p>
                }
                if settings::is_anytime(&s.strategy) {
                    <label for={id("time-limit")} title="the search stops here and keeps its best plan (the CLI's --time-limit); links carry it">{ "Time limit" }</label>
                    // a select, not a number field: a pane that plans re-renders five times a
                    // second, and a controlled text field would lose what is being typed
                    <select id={id("time-limit")} data-testid={format!("pane{i}-time-limit")}
                        ~value={s.options().time_limit_ms.to_string()}
                        onchange={change(|n, e| n.time_limit_ms = event_value(e).parse().ok())}>
                        { for time_limits(s.options().time_limit_ms).into_iter().map(|ms| html! {
                            <option value={ms.to_string()} selected={ms == s.options().time_limit_ms}>{ time_limit_text(ms) }</option>
                        }) }
                    </select>
                }
                if let Some(a) = settings::runtime_allocator(&s.strategy) {
                    { for a.knobs.iter().filter(|k| k.name != "align").map(|k| knob_field(i, &s, k.name, k.summary, &p.on_change, &errors)) }
                }
                <label for={id("align")}>{ "Block alignment" }</label>
                <span class="row">
                    <select id={id("align")} data-testid={format!("pane{i}-align")} ~value={if custom { "custom".to_string() } else { s.alignment.to_string() }}
                        onchange={on_align}>
                        { for ALIGNMENTS.iter().map(|a| html! { <option value={a.to_string()} selected={*a == s.alignment}>{ format!("{a} B") }</option> }) }
                        <option value="custom" selected={custom}>{ "custom…" }</option>
                    </select>
                    if custom {
                        <span class="field">
                            <input type="number" min="1" max={MAX_ALIGNMENT.to_string()} class="num" aria-label="custom alignment in bytes"
                                id={align_custom.clone()} data-testid={align_custom.clone()}
                                value={align_typed.unwrap_or_else(|| s.alignment.to_string())}
                                aria-invalid={align_bad.is_some().then_some("true")} aria-describedby={align_bad.is_some().then(|| format!("{align_custom}-error"))}
                                onchange={on_align_custom} oninput={on_align_typing} />
                            { field_error(&align_custom, align_bad.as_deref()) }
                        </span>
                    }
                </span>
                <label for={id("pad")}>{ "Padding" }</label>
                <select id={id("pad")} ~value={if s.ge_padding { "ge" } else { "none" }} onchange={change(|n, e| n.ge_padding = event_value(e) == "ge")}>
                    <option value="ge" selected={s.ge_padding}>{ "GE: ceil32 + 32" }</option>
                    <option value="none" selected={!s.ge_padding}>{ "none (raw bytes)" }</option>
                </select>
                // GE's planning rules; a runtime replay frees each tensor after its last reader
                if !settings::is_runtime(&s.strategy) {
                <span class="checks">
                    <label><input type="checkbox" checked={s.reuse} onchange={change(|n, e| n.reuse = event_checked(e))} />{ " reuse" }</label>
                    // GE's I/O and atomic-clean policies: TFLM keeps inputs and outputs in the
                    // arena and has no memset ops, so a .tflite pane shows zero-copy I/O only
                    // to turn it back off (a link may carry it) and never the atomic policy
                    if !tflite || s.zero_copy_io {
                        <label title="graph inputs and outputs are user buffers, not reused"><input type="checkbox" data-testid={format!("pane{i}-zero-copy-io")} checked={s.zero_copy_io} onchange={change(|n, e| n.zero_copy_io = event_checked(e))} />{ " zero-copy I/O" }</label>
                    }
                    if !tflite {
                        <label title="on: atomic-clean outputs are cleared by one memset and not reused (GE policy 0); off: cleaned one by one and reused (policy 1)"><input type="checkbox" data-testid={format!("pane{i}-atomic-central")} checked={s.atomic_centralised} onchange={change(|n, e| n.atomic_centralised = event_checked(e))} />{ " central atomic clean" }</label>
                    }
                    if p.gears && settings::is_block(&s.strategy) {
                        <label title="GE expandable memory (ge.exec.staticMemoryPolicy): the largest gear's region is cut into virtual blocks of at most 400 MiB, and a smaller gear's block may not straddle a cut"><input type="checkbox" data-testid={format!("pane{i}-expandable")} checked={s.expandable_memory} onchange={change(|n, e| n.expandable_memory = event_checked(e))} />{ " 400 MiB split (expandable memory)" }</label>
                    }
                    if p.graph && s.zero_copy_io && settings::is_block(&s.strategy) {
                        <label title="GE's I/O reuse options (ge.exec.inputReuseMemIndexes / outputReuseMemIndexes for every index): graph inputs and outputs stay zero-copy user buffers after the feature maps, but ordinary blocks nest inside them over their live range"><input type="checkbox" data-testid={format!("pane{i}-zero-copy-reuse")} checked={s.zero_copy_reuse} onchange={change(|n, e| n.zero_copy_reuse = event_checked(e))} />{ " zero-copy reuse" }</label>
                    }
                </span>
                }
            </div>
            { stats }
            // mounted whatever the state, so the chosen tab survives a re-plan
            // GE's run-time views (graph I/O, atomic clean, streams...) model GE, not TFLM
            if let Some(m) = p.sections.as_ref().filter(|_| !tflite) { <crate::sections::Sections index={i} model={m.clone()} settings={s.clone()} result={p.result.clone()} /> }
        </section>
    }
}

/// One bar per memory type (GE lays each out from offset 0; the headline peak is HBM's),
/// widths relative to the largest.
/// A `.tflite` model's pane: the arena size to write for this plan, and the plan as files
/// TFLM runs (refusals shown here, as the pane's message).
fn tflm_view(i: usize, t: &crate::tflm::TflmArena, head: u64, p: &PaneProps) -> Html {
    use crate::tflm::TflmFile;
    let click = |f: TflmFile| {
        let cb = p.on_tflm.clone();
        Callback::from(move |_: MouseEvent| cb.emit((i, f)))
    };
    html! {
        <div class="tflm" data-testid={format!("pane{i}-tflm")}>
            <dl class="stats">
                <div class="stat wide"><dt title="TFLM's arena = the head (non-persistent: activations and scratch, planned) + the persistent tail (variable tensors, TFLM's own structures)">{ "TFLM arena" }</dt>
                    <dd data-testid={format!("pane{i}-tflm-arena")} data-head={head.to_string()}>
                        { for t.advice(head).into_iter().map(|l| html! { <p>{ l }</p> }) }
                    </dd></div>
            </dl>
            if !p.readonly {
                <p class="tflm-downloads">
                    <button type="button" data-testid={format!("pane{i}-download-tflite")} onclick={click(TflmFile::Model)}
                        title="the model with this plan as its OfflineMemoryAllocation metadata: TFLM places every tensor at this plan's offset">{ "Download planned .tflite" }</button>{ " " }
                    <button type="button" data-testid={format!("pane{i}-download-header")} onclick={click(TflmFile::Header)}
                        title="a C header: the arena head size, every tensor's offset and TFLM's BufferPlan for NonPersistentMemoryPlannerShim">{ "Download C header" }</button>
                </p>
            }
            if let Some(e) = &p.tflm_error {
                { error_note(&format!("pane{i}-tflm-error"), &format!("pane{i}-tflm-error"), e) }
            }
        </div>
    }
}

fn arenas_view(i: usize, arenas: &[memplan_core::Arena]) -> Html {
    let top = arenas.iter().map(|a| a.bytes).max().unwrap_or(0).max(1) as f64;
    html! {
        <div class="stat wide"><dt title="each memory type has its own offset space from 0 (GE: one [IMAS] line per type); the peak above is HBM's">{ "Arenas by memory type" }</dt>
            <dd data-testid={format!("pane{i}-arenas")}>
                { for arenas.iter().map(|a| html! {
                    <div class="arena-row" data-type={a.name.clone()} data-bytes={a.bytes.to_string()}>
                        <span class="arena-name">{ &a.name }</span>
                        <span class="arena-bar"><span class="arena-fill" style={format!("width:{:.2}%", a.bytes as f64 / top * 100.0)}></span></span>
                        <span class="arena-bytes" title={format!("{} B", a.bytes)}>{ format::binary(a.bytes) }</span>
                    </div>
                }) }
            </dd></div>
    }
}

/// The parts of a gap, largest first: label, bytes, CSS class, what it means.
fn gap_parts(
    g: &memplan_core::explain::Gap,
) -> Vec<(&'static str, u64, &'static str, &'static str)> {
    let mut parts = vec![
        ("slack inside blocks", g.block_slack, "slack", "bytes of blocks holding a live tensor that no live member covers (block bytes − member bytes)"),
        ("idle arena", g.idle, "idle", "free, or held by blocks none of whose tensors is live at this step"),
        ("GE padding", g.padding, "pad", "ceil32(bytes) + 32 − bytes, for each live tensor"),
        ("alignment", g.alignment, "align", "planned size − padded size, for each live tensor"),
        ("zero-copy / atomic regions", g.reserved, "reserved", "kept for zero-copy and atomic-clean tensors not live at this step (never reused)"),
    ];
    parts.retain(|p| p.1 > 0);
    parts.sort_by_key(|p| std::cmp::Reverse(p.1));
    parts
}

/// One sentence saying why a plan is above the lower bound, from the core's breakdown.
pub fn gap_sentence(strategy: &str, g: &memplan_core::explain::Gap) -> String {
    let total = g.total();
    if total == 0 {
        return format!(
            "{strategy} reaches the lower bound of raw bytes: at step {}, every arena byte holds a live tensor.",
            g.step
        );
    }
    let parts = gap_parts(g);
    let list: Vec<String> = parts
        .iter()
        .map(|(label, b, _, _)| format!("{} {label}", format::binary(*b)))
        .collect();
    let list = match list.len() {
        0 => String::new(),
        1 => list[0].clone(),
        n => format!("{} and {}", list[..n - 1].join(", "), list[n - 1]),
    };
    let at = match g.gear {
        Some(b) => format!("step {} of gear {b}", g.step),
        None => format!("step {}", g.step),
    };
    format!(
        "{strategy} uses {} more than the lower bound of {} raw bytes ({}): at {at}, the busiest, {list}.",
        format::binary(total),
        format::binary(g.lower_bound),
        format::ratio(g.peak, g.lower_bound),
    )
}

/// The stacked breakdown of the gap and its sentence.
fn gap_view(i: usize, strategy: &str, g: &memplan_core::explain::Gap, types: bool) -> Html {
    let total = g.total().max(1) as f64;
    let parts = gap_parts(g);
    html! {
        <div class="gap" data-testid={format!("pane{i}-gap")} data-total={g.total().to_string()}
            data-parts={g.parts().to_string()}>
            <p class="small gap-sentence" data-testid={format!("pane{i}-gap-sentence")}>
                { gap_sentence(strategy, g) }
                // explain_gap measures HBM's arena alone (the others are GE's separate spaces)
                if types { { " In HBM; the other memory types' arenas are listed above." } }
            </p>
            if g.total() > 0 {
                <div class="gapbar" role="img" aria-label={format!("gap to the lower bound: {}", parts.iter().map(|p| format!("{} {}", p.0, format::binary(p.1))).collect::<Vec<_>>().join(", "))}>
                    { for parts.iter().map(|(label, b, cls, why)| html! {
                        <span class={classes!("seg", *cls)} style={format!("width:{:.2}%", *b as f64 / total * 100.0)}
                            title={format!("{label}: {} ({} B) — {why}", format::binary(*b), b)} data-bytes={b.to_string()}></span>
                    }) }
                </div>
                <ul class="gap-legend small">
                    { for parts.iter().map(|(label, b, cls, _)| html! {
                        <li><span class={classes!("sw", *cls)}></span>{ format!("{label} {}", format::binary(*b)) }</li>
                    }) }
                </ul>
            }
        </div>
    }
}

#[cfg(test)]
mod tests {
    use memplan_core::explain::Gap;

    #[test]
    fn the_sentence_names_the_parts_largest_first() {
        let g = Gap {
            step: 3,
            gear: None,
            peak: 1536,
            lower_bound: 700,
            padding: 36,
            alignment: 288,
            block_slack: 0,
            reserved: 0,
            idle: 512,
        };
        let s = super::gap_sentence("ge-block", &g);
        assert!(
            s.starts_with("ge-block uses 836 B more than the lower bound of 700 B raw bytes"),
            "{s}"
        );
        assert!(s.contains("step 3"), "{s}");
        let (a, b, c) = (
            s.find("512 B idle").unwrap(),
            s.find("288 B alignment").unwrap(),
            s.find("36 B GE padding").unwrap(),
        );
        assert!(a < b && b < c, "{s}");
        let tight = Gap {
            peak: 700,
            padding: 0,
            alignment: 0,
            idle: 0,
            ..g
        };
        assert!(super::gap_sentence("optimal", &tight).contains("reaches the lower bound"));
    }
}
