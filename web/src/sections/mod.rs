//! A pane's GE run-time views (issue 27), one tab each: graph I/O, atomic clean, single-op,
//! runtime allocators per stream, one flow (hybrid), allocator statistics with the access
//! cost per level, the training step, and the expandable-memory virtual blocks. Each tab is
//! computed when opened, from the pane's plan and settings, by the same core reports the CLI
//! prints ([`compute`]).

pub mod compute;

use yew::prelude::*;

use crate::app::App;
use crate::format;
use crate::pane::ResultRef;
use crate::platform::event_value;
use crate::settings::PaneSettings;
pub use compute::Model;

impl Model {
    /// The open model of the page, if any (what the panes planned).
    pub fn of(app: &App) -> Option<Model> {
        Some(Model {
            source: app.source.clone()?,
            built: app.built.clone()?,
            bindings: app.state.bindings.clone(),
            gears: app.state.gears.clone(),
            lowering: crate::model::Lowering {
                alias_views: app.state.alias_views,
                schedule: app.state.schedule,
                sizes: app.state.sizes.clone(),
            },
        })
    }
}

/// The tabs: key (test ids), label, what it models.
const TABS: [(&str, &str, &str); 8] = [
    ("io", "Graph I/O", "per graph input and output: offset, size, the ops whose tasks take its address, zero-copy or the bytes copied per run (memplan plan --io)"),
    ("atomic", "Atomic clean", "the memset ops and the ranges they zero, and how many memsets each GE atomicCleanPolicy needs (memplan plan --atomic-clean)"),
    ("single", "Single-op", "each op run alone: its inputs and outputs are the caller's buffers, only its workspaces are GE's (memplan plan --single-op)"),
    ("streams", "Streams", "runtime allocators replayed on the buffers' streams: V1 one shared allocator, V2 shared, V2 one per stream (memplan simulate -a ge-v1 -a ge-v2 -a ge-v2-streams)"),
    ("hybrid", "Hybrid", "one flow: tensors of known size planned by this pane's strategy, tensors with a symbolic dim through ge-v2 at run time (memplan plan --hybrid)"),
    ("stats", "Statistics", "allocator statistics (hits, probes, leak records, transfers) and the access cost per memory level (memplan simulate)"),
    ("training", "Training", "the training step of this forward graph beside inference (memplan plan --training)"),
    ("expandable", "Expandable", "the dynamic-batch region's virtual blocks, one per memory type or pieces of at most 400 MiB with expandable memory"),
];

/// Properties of a pane's sections.
#[derive(Properties, PartialEq)]
pub struct SectionsProps {
    /// The pane's 0-based index.
    pub index: usize,
    /// The open model.
    pub model: Model,
    /// The pane's settings.
    pub settings: PaneSettings,
    /// The pane's result.
    pub result: Option<ResultRef>,
}

/// The pane's tabs, folded under one summary line; nothing is computed until a tab is chosen.
#[function_component(Sections)]
pub fn sections(p: &SectionsProps) -> Html {
    let i = p.index;
    let tab = use_state(|| None::<&'static str>);
    let optimizer = use_state(|| "adam".to_string());
    let tabs = TABS.iter().map(|&(key, label, title)| {
        let on = *tab == Some(key);
        let t = tab.clone();
        let onclick = Callback::from(move |_| t.set(if on { None } else { Some(key) }));
        html! {
            <button type="button" role="tab" class={if on { "chip on" } else { "chip" }} aria-selected={on.to_string()}
                data-testid={format!("pane{i}-tab-{key}")} {title} {onclick}>{ label }</button>
        }
    });
    // computed once per (tab, optimizer, model, settings, plan): a pane re-renders often
    let handle = optimizer.clone();
    let body = use_memo(
        (
            *tab,
            (*optimizer).clone(),
            p.model.clone(),
            p.settings.clone(),
            p.result.clone(),
        ),
        move |(tab, chosen, model, s, r)| {
            let problem = &model.built.problem;
            // the summary stays in the page whatever the pane's state (open over a re-plan)
            let done = r.as_ref().and_then(|r| r.0.done());
            match (*tab, done) {
                (None, _) => html! {},
                (Some(_), None) => html! { <p class="muted">{ "No plan yet." }</p> },
                (Some(t), Some(r)) => match t {
                    "io" => io_view(i, compute::io(model, &r.plan)),
                    "atomic" => atomic_view(i, compute::atomic(problem, &r.plan, s)),
                    "single" => single_view(i, compute::single(problem, s)),
                    "streams" => streams_view(i, compute::streams(problem, s)),
                    "hybrid" => hybrid_view(i, compute::hybrid(model, s)),
                    "stats" => stats_view(i, compute::stats(problem, s)),
                    "training" => {
                        let o = handle.clone();
                        let onchange = Callback::from(move |e: Event| o.set(event_value(&e)));
                        html! {
                            <>
                            <label>{ "Optimizer " }
                                <select data-testid={format!("pane{i}-optimizer")} {onchange}>
                                    { for ["sgd", "momentum", "adam"].into_iter().map(|o| html! { <option value={o} selected={o == chosen.as_str()}>{ o }</option> }) }
                                </select>
                            </label>
                            { training_view(i, compute::train(model, s, chosen), r.plan.peak) }
                            </>
                        }
                    }
                    _ => expandable_view(i, &r.plan, s),
                },
            }
        },
    );
    html! {
        <details class="sections" data-testid={format!("pane{i}-sections")}>
            <summary data-testid={format!("pane{i}-sections-open")} title="graph I/O, atomic clean, single-op, streams, hybrid, allocator statistics and access cost, training, expandable memory: the CLI's reports of this pane's plan">{ "GE run-time views" }</summary>
            <div class="tabs" role="tablist">{ for tabs }</div>
            if let Some(key) = *tab {
                <div class="section-body" role="tabpanel" data-testid={format!("pane{i}-sec-{key}")}>{ (*body).clone() }</div>
            }
        </details>
    }
}

fn failed(i: usize, e: &str) -> Html {
    html! { <p class="muted" data-testid={format!("pane{i}-sec-error")}>{ e.to_string() }</p> }
}

fn io_view(i: usize, r: Result<Vec<memplan_core::report::graph_io::GraphIo>, String>) -> Html {
    let rows = match r {
        Ok(r) => r,
        Err(e) => return failed(i, &e),
    };
    let copied: u64 = rows
        .iter()
        .fold(0u64, |a, r| a.saturating_add(r.copied_bytes));
    html! {
        <>
        <p class="small muted">{ "GE run time: each task taking a graph input's or output's address is refreshed with the user's buffer; a copied one costs its bytes each run." }</p>
        <table class="sec"><thead><tr><th></th><th>{ "tensor" }</th><th>{ "offset" }</th><th>{ "size" }</th><th>{ "ops taking its address" }</th><th>{ "zero-copy or copied" }</th></tr></thead>
        <tbody>{ for rows.iter().map(|io| {
            let how = if io.zero_copy { "zero-copy".to_string() } else {
                let why: Vec<&str> = io.copy_reasons.iter().map(|r| r.phrase()).collect();
                format!("copied {} B: {}", io.copied_bytes, why.join(", "))
            };
            html! { <tr data-testid={format!("pane{i}-io-row")}>
                <td>{ if io.input { "input" } else { "output" } }</td><td>{ &io.name }</td>
                <td>{ io.offset.map_or("-".to_string(), |o| o.to_string()) }</td><td>{ io.size.to_string() }</td>
                <td>{ io.address_ops.join(", ") }</td><td>{ how }</td></tr> }
        }) }</tbody></table>
        <p data-testid={format!("pane{i}-io-copied")} data-bytes={copied.to_string()}>{ format!("copied per run: {copied} B") }</p>
        </>
    }
}

fn atomic_view(
    i: usize,
    r: Result<memplan_core::report::atomic_clean::AtomicCleanReport, String>,
) -> Html {
    let r = match r {
        Ok(r) => r,
        Err(e) => return failed(i, &e),
    };
    html! {
        <>
        <p data-testid={format!("pane{i}-atomic-counts")} data-central={r.memsets_centralised.to_string()} data-per-op={r.memsets_per_op.to_string()}>
            { format!("{} ({}): {} memset op(s); centralised policy {}, per-op policy {}",
                "this plan", if r.centralised { "centralised, GE atomicCleanPolicy=0" } else { "per op, GE atomicCleanPolicy=1" },
                r.memsets.len(), r.memsets_centralised, r.memsets_per_op) }
        </p>
        <p class="small muted">{ "The other policy's ranges: switch \u{201c}central atomic clean\u{201d} above (the plan changes with it)." }</p>
        <ul>{ for r.memsets.iter().map(|m| {
            let ranges: Vec<String> = m.ranges.iter().map(|x| {
                let t = if x.memory_type == 0 { String::new() } else { format!(" {}", memplan_core::plan::memory_type_name(x.memory_type)) };
                format!("[{}, +{}){t}", x.offset, x.size)
            }).collect();
            html! { <li data-testid={format!("pane{i}-memset")}>{ format!("{} for {}: {}", m.name, m.cleans_for.join(", "), ranges.join(" ")) }</li> }
        }) }</ul>
        </>
    }
}

fn single_view(
    i: usize,
    r: Result<memplan_core::report::single_op::SingleOpReport, String>,
) -> Html {
    let r = match r {
        Ok(r) => r,
        Err(e) => return failed(i, &e),
    };
    html! {
        <>
        <p data-testid={format!("pane{i}-single-device")} data-bytes={r.device_bytes.to_string()}>
            { format!("device memory {}: per stream the largest op's workspaces", format::bytes(r.device_bytes)) }</p>
        <table class="sec"><thead><tr><th>{ "op" }</th><th>{ "stream" }</th><th>{ "user buffers" }</th><th>{ "workspaces" }</th></tr></thead>
        <tbody>{ for r.ops.iter().map(|o| html! {
            <tr data-testid={format!("pane{i}-single-row")}><td>{ &o.name }</td><td>{ o.stream.to_string() }</td><td>{ o.user_bytes.to_string() }</td><td>{ o.workspace_bytes.to_string() }</td></tr>
        }) }</tbody></table>
        <ul>{ for r.streams.iter().map(|st| html! {
            <li data-testid={format!("pane{i}-single-stream")}>{ format!("stream {}: {} B held, {} device allocation(s)", st.stream, st.device_bytes, st.allocations) }</li>
        }) }</ul>
        </>
    }
}

fn streams_view(i: usize, r: Result<Vec<compute::StreamRun>, String>) -> Html {
    let runs = match r {
        Ok(r) => r,
        Err(e) => return failed(i, &e),
    };
    html! {
        <>
        <p class="small muted">{ "V1 shares one allocator between the streams; V2 gives each stream its own, so a span freed on one stream is cached for that stream only (the pane's sizes and knobs)." }</p>
        <table class="sec"><thead><tr><th>{ "allocator" }</th><th>{ "peak" }</th><th>{ "reserved" }</th><th>{ "in use" }</th><th>{ "hits" }</th><th>{ "per stream: buffers [lowest, highest end)" }</th></tr></thead>
        <tbody>{ for runs.iter().map(|s| html! {
            <tr data-testid={format!("pane{i}-streams-{}", s.name)} data-reserved={s.report.reserved_bytes.to_string()} data-peak={s.report.peak_bytes.to_string()} data-hits={s.report.cache_hits.to_string()}>
                <td>{ s.name }</td><td>{ s.report.peak_bytes.to_string() }</td><td>{ s.report.reserved_bytes.to_string() }</td>
                <td>{ s.report.peak_in_use_bytes.to_string() }</td><td>{ s.report.cache_hits.to_string() }</td>
                <td>{ s.streams.iter().map(|(st, n, lo, hi)| format!("stream {st}: {n} [{lo}, {hi})")).collect::<Vec<_>>().join(" · ") }</td>
            </tr>
        }) }</tbody></table>
        </>
    }
}

fn hybrid_view(i: usize, r: Result<memplan_core::report::hybrid::HybridReport, String>) -> Html {
    let r = match r {
        Ok(r) => r,
        Err(e) => return failed(i, &e),
    };
    html! {
        <p data-testid={format!("pane{i}-hybrid")} data-static={r.static_bytes.to_string()} data-reserved={r.runtime_reserved_bytes.to_string()} data-device={r.device_bytes.to_string()}>
            { format!("static {} ({} buffers, {} B) · run time {} reserved ({} buffers, {} B) · device {} ({} B)",
                format::binary(r.static_bytes), r.static_buffers, r.static_bytes,
                format::binary(r.runtime_reserved_bytes), r.dynamic_buffers, r.runtime_reserved_bytes,
                format::binary(r.device_bytes), r.device_bytes) }
        </p>
    }
}

fn stats_view(i: usize, r: Result<compute::Stats, String>) -> Html {
    let st = match r {
        Ok(r) => r,
        Err(e) => return failed(i, &e),
    };
    let sim = match &st.sim {
        Some(s) if s.switches.stats => {
            let requests = s.allocations + s.failures;
            #[allow(clippy::cast_precision_loss)]
            let per = if requests == 0 {
                0.0
            } else {
                s.probes as f64 / requests as f64
            };
            html! {
                <dl class="stats">
                    <div class="stat"><dt title="allocations served from memory an earlier allocation gave back">{ "Hits" }</dt><dd data-testid={format!("pane{i}-stat-hits")}>{ s.cache_hits.to_string() }</dd></div>
                    <div class="stat"><dt title="candidates the allocator's search looked at, over all requests (per request)">{ "Probes" }</dt><dd data-testid={format!("pane{i}-stat-probes")} data-probes={s.probes.to_string()}>{ format!("{} ({per:.2} per request)", s.probes) }</dd></div>
                    <div class="stat"><dt title="records the leak detector kept / allocations it could not record (table full: their leaks are missed)">{ "Leak records" }</dt><dd data-testid={format!("pane{i}-stat-records")} data-dropped={s.records_dropped.to_string()}>{ format!("{} kept, {} dropped", s.records.len(), s.records_dropped) }</dd></div>
                    <div class="stat"><dt title="host-device bytes per run: graph inputs and outputs are the allocator's memory (not zero-copy); host-memory tensors read by device ops">{ "Transfers per run" }</dt><dd data-testid={format!("pane{i}-stat-transfers")} data-io={s.io_transfer_bytes.to_string()} data-cross={s.cross_type_transfer_bytes.to_string()}>{ format!("graph I/O {} B, host memory {} B", s.io_transfer_bytes, s.cross_type_transfer_bytes) }</dd></div>
                </dl>
            }
        }
        Some(_) => html! { <p class="muted">{ "statistics off (the pane's knob)" }</p> },
        None => {
            html! { <p class="small muted">{ "A static plan: no allocator at run time (hits, probes and leak records are a runtime pane's). The access cost is per memory type." }</p> }
        }
    };
    if st.access.levels.is_empty() {
        // statistics off: the replay counted no traffic
        return sim;
    }
    html! {
        <>
        { sim }
        <p data-testid={format!("pane{i}-access-total")} data-cost={st.access.total_cost.to_string()}>
            { format!("access cost per run: {} units (each buffer written once, read once per reading op; default prices per byte, illustrative, not measured: memplan simulate --access-cost sets them)", format::grouped(st.access.total_cost)) }</p>
        <table class="sec"><thead><tr><th>{ "level" }</th><th>{ "read" }</th><th>{ "written" }</th><th>{ "units/B" }</th><th>{ "cost" }</th></tr></thead>
        <tbody>{ for st.access.levels.iter().map(|l| html! {
            <tr data-testid={format!("pane{i}-access-{}", l.level)} data-cost={l.cost.to_string()}><td>{ &l.level }</td><td>{ l.bytes_read.to_string() }</td><td>{ l.bytes_written.to_string() }</td><td>{ l.cost_per_byte.to_string() }</td><td>{ l.cost.to_string() }</td></tr>
        }) }</tbody></table>
        </>
    }
}

fn training_view(i: usize, r: Result<compute::TrainingView, String>, inference: u64) -> Html {
    let t = match r {
        Ok(t) => t,
        Err(e) => return failed(i, &e),
    };
    let peak = t.peak.map_or_else(
        || "not planned (choose a static strategy that answers at once)".to_string(),
        format::bytes,
    );
    html! {
        <dl class="stats">
            <div class="stat"><dt title="live-set lower bound of the training step's arena">{ "Training arena, lower bound" }</dt><dd data-testid={format!("pane{i}-training-bound")} data-bytes={t.lower_bound.to_string()}>{ format::bytes(t.lower_bound) }</dd></div>
            <div class="stat"><dt>{ "Training arena, this strategy" }</dt><dd data-testid={format!("pane{i}-training-peak")}>{ peak }</dd></div>
            <div class="stat"><dt>{ "Inference (this pane)" }</dt><dd>{ format::bytes(inference) }</dd></div>
            <div class="stat"><dt title="kept apart from the arena">{ "Weights" }</dt><dd data-testid={format!("pane{i}-training-weights")} data-bytes={t.weights.to_string()}>{ format::bytes(t.weights) }</dd></div>
            <div class="stat"><dt title="in the arena">{ "Weight gradients" }</dt><dd data-testid={format!("pane{i}-training-grads")} data-bytes={t.weight_grads.to_string()}>{ format::bytes(t.weight_grads) }</dd></div>
            <div class="stat"><dt title="SGD none, momentum 1x the weights, Adam 2x; kept apart">{ format!("Optimizer state ({:?})", t.optimizer) }</dt><dd data-testid={format!("pane{i}-training-state")} data-bytes={t.state.to_string()}>{ format::bytes(t.state) }</dd></div>
        </dl>
    }
}

fn expandable_view(i: usize, plan: &memplan_core::Plan, s: &PaneSettings) -> Html {
    let groups = memplan_core::report::virtual_block_groups(plan);
    if groups.is_empty() {
        return html! { <p class="muted" data-testid={format!("pane{i}-vblocks")} data-groups="">{ "No dynamic-batch region: give the model gears (a GE block strategy plans them) to see its virtual blocks." }</p> };
    }
    let data: Vec<String> = groups
        .iter()
        .map(|g| g.iter().map(u64::to_string).collect::<Vec<_>>().join(","))
        .collect();
    let list: Vec<String> = groups
        .iter()
        .map(|g| {
            format!(
                "[{}]",
                g.iter()
                    .map(|&b| format::binary(b))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .collect();
    html! {
        <p data-testid={format!("pane{i}-vblocks")} data-groups={data.join(";")}>
            { format!("dynamic-batch virtual blocks: {}{}", list.join(" + "),
                if s.expandable_memory { " (expandable memory: pieces of at most 400 MiB)" } else { " (one per memory type; the 400 MiB split switch above cuts them)" }) }
        </p>
    }
}
