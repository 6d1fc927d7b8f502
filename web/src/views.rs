//! The page's sections: load panel, model summary, panes, timeline, live curve, table, embed.

use memplan_core::graph::ScheduleOrder;
use yew::prelude::*;

use crate::app::{App, Col, Export, Msg};
use crate::format;
use crate::model::{Format, Origin, MAX_FILE_BYTES};
use crate::pane::Pane;
use crate::platform;
use crate::samples::SAMPLES;
use crate::state::{Draft, Field};
use crate::timeline::{self, H, MARGIN, W};

impl App {
    pub(crate) fn view_full(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let ondragover = link.callback(|e: DragEvent| {
            e.prevent_default();
            Msg::DragOver(true)
        });
        let ondragleave = link.callback(|e: DragEvent| {
            e.prevent_default();
            Msg::DragOver(false)
        });
        let ondrop = link.batch_callback(|e: DragEvent| {
            e.prevent_default();
            let mut v = vec![Msg::DragOver(false)];
            if let Some(f) = crate::platform::dropped_file(&e) {
                v.push(Msg::File(f));
            }
            v
        });
        html! {
            <div class={classes!("app", self.drag_over.then_some("dragging"))} {ondragover} {ondragleave} {ondrop}>
                { self.view_header(ctx) }
                <main>
                    { self.view_messages(ctx) }
                    { self.view_load(ctx) }
                    { self.view_summary(ctx) }
                    { self.view_advisor(ctx) }
                    // a phone shows the picture first, then each pane's settings and figures:
                    // in the document, so that Tab goes the way the eye does
                    if self.narrow {
                        { self.view_plots(ctx) }
                        { self.view_panes(ctx) }
                    } else {
                        { self.view_panes(ctx) }
                        { self.view_plots(ctx) }
                    }
                    { self.view_table(ctx) }
                </main>
                <footer class="muted">
                    { "memplan playground · everything runs in your browser; files are never uploaded · keys: ←/→ step, / search, + − 0 zoom" }
                </footer>
                if let Some(snippet) = &self.dialog {
                    <div class="dialog-backdrop" onclick={link.callback(|_| Msg::CloseDialog)}>
                        <div class="dialog" id="embed-dialog" tabindex="-1" role="dialog" aria-modal="true" aria-label="Embed snippet" data-testid="embed-dialog" onclick={Callback::from(|e: MouseEvent| e.stop_propagation())}
                            onkeydown={Callback::from(|e: KeyboardEvent| platform::trap_tab(&e, "embed-dialog", "embed-text", "embed-close"))}>
                            <h2>{ "Embed this view" }</h2>
                            <p>{ "Paste into any page. The frame is read-only, follows the theme given in its URL, and reports its height so the snippet's script can size it." }</p>
                            if let Some(w) = &self.embed_warning {
                                <p class="banner error" role="alert" data-testid="embed-warning">{ w }</p>
                            } else if let Some(i) = &self.embed_info {
                                <p class="banner note" data-testid="embed-lowered">{ i }</p>
                            }
                            <textarea id="embed-text" readonly=true rows="6" data-testid="embed-snippet" value={snippet.clone()} />
                            <p>
                                <button type="button" id="embed-copy" data-testid="embed-copy" onclick={link.callback(|_| Msg::CopySnippet)}>{ "Copy" }</button>
                                { " " }
                                <button type="button" id="embed-close" onclick={link.callback(|_| Msg::CloseDialog)}>{ "Close" }</button>
                                if let Some(n) = &self.dialog_note {
                                    <span class="muted small" role="status" data-testid="embed-copied">{ format!(" {n}") }</span>
                                }
                            </p>
                        </div>
                    </div>
                }
                if self.drag_over {
                    <div class="drop-overlay">{ "Drop to open — the file is read in your browser, nothing is uploaded" }</div>
                }
            </div>
        }
    }

    fn view_header(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let ready = self.built.is_some();
        html! {
            <header class="top">
                <h1><span class="logo" aria-hidden="true">{ "▦" }</span>{ " memplan " }<span class="muted">{ "playground" }</span></h1>
                <nav class="actions">
                    <button type="button" onclick={link.callback(|_| Msg::CopyLink)} disabled={!ready} data-testid="copy-link">{ "Copy link" }</button>
                    <button type="button" onclick={link.callback(|_| Msg::ShowEmbed)} disabled={!ready} data-testid="embed">{ "Embed" }</button>
                    <button type="button" onclick={link.callback(|_| Msg::Export(Export::PlanJson))} disabled={!ready} data-testid="export-json" title="all panes, in the CLI's memplan.plan/1 schema">{ "Plan JSON" }</button>
                    <button type="button" onclick={link.callback(|_| Msg::Export(Export::Svg))} disabled={!ready} data-testid="export-svg">{ "Timeline SVG" }</button>
                    <button type="button" onclick={link.callback(|_| Msg::Export(Export::Png))} disabled={!ready} data-testid="export-png">{ "PNG" }</button>
                    <button type="button" onclick={link.callback(|_| Msg::Export(Export::Csv))} disabled={!ready} data-testid="export-csv">{ "Tensors CSV" }</button>
                    <button type="button" class="icon" onclick={link.callback(|_| Msg::ToggleTheme)} aria-label="toggle light/dark theme" title="toggle light/dark theme">{ if self.dark() { "☀" } else { "☾" } }</button>
                </nav>
            </header>
        }
    }

    /// While the default sample stands in for a model the link left out: says so, in the
    /// full page and in an embed.
    fn view_missing_model(&self) -> Html {
        let Some(name) = &self.state.missing_model else {
            return html! {};
        };
        let which = if name.is_empty() {
            "its model".to_string()
        } else {
            format!("its model, {name}")
        };
        let shown = crate::samples::find(crate::samples::DEFAULT_SAMPLE).map_or("", |s| s.title);
        let tail = if self.embed {
            "The settings are the link's; the plans below are not of its model."
        } else {
            "The settings are the link's: open the same file to apply them to it."
        };
        html! {
            <div class="banner error" role="alert" data-testid="model-missing">
                <strong>{ format!("This {} does not include {which}", if self.embed { "embed" } else { "link" }) }</strong>
                { format!(" (too large to carry inline). Shown instead: the default sample, {shown}. {tail}") }
            </div>
        }
    }

    fn view_messages(&self, ctx: &Context<Self>) -> Html {
        let close = ctx.link().callback(|_| Msg::Notice(String::new()));
        html! {
            <>
                { self.view_missing_model() }
                if let Some(e) = &self.state.link_error {
                    <div class="banner error" role="alert" data-testid="link-error">
                        <strong>{ "This link could not be opened: " }</strong>{ e }
                        <span class="muted">{ " — showing the default sample instead." }</span>
                    </div>
                }
                if let Some(e) = &self.error {
                    <div class="banner error" role="alert" data-testid="load-error">{ e }</div>
                }
                if let Some(n) = self.state.notice.as_ref().filter(|n| !n.is_empty()) {
                    <div class="banner note" role="status" data-testid="notice">{ n }{ " " }<button type="button" class="icon" aria-label="dismiss" onclick={close}>{ "×" }</button></div>
                }
                if let Some(p) = &self.parsing {
                    <div class="banner note" role="status" data-testid="parsing">
                        { self.loading.clone().unwrap_or_default() }
                        <span data-testid="parse-elapsed">{ format!(" {:.1} s", (crate::platform::now_ms() - p.since_ms) / 1000.0) }</span>{ " " }
                        <button type="button" data-testid="parse-cancel" onclick={ctx.link().callback(|_| Msg::CancelParse)}>{ "Cancel" }</button>
                    </div>
                } else if let Some(l) = &self.loading {
                    <div class="banner note" role="status">{ l }</div>
                }
            </>
        }
    }

    fn view_load(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let current = match self.source.as_ref().map(|s| &s.origin) {
            Some(Origin::Sample(id)) => id.clone(),
            _ => String::new(),
        };
        let on_sample = link.batch_callback(|e: Event| {
            let v = platform::event_value(&e);
            (!v.is_empty()).then_some(Msg::Sample(v))
        });
        let on_file =
            link.batch_callback(|e: Event| crate::platform::input_file(&e).map(Msg::File));
        let sample = SAMPLES.iter().find(|s| s.id == current);
        let gear_dim = self
            .built
            .as_ref()
            .and_then(|b| b.gears.as_ref())
            .map(|g| g.0.clone());
        let dims: Vec<String> = self
            .built
            .as_ref()
            .map(|b| b.symbols.clone())
            .unwrap_or_default()
            .into_iter()
            .filter(|d| Some(d) != gear_dim.as_ref())
            .collect();
        let is_graph = self.built.as_ref().is_some_and(|b| b.is_graph);
        let on_gears = link.callback(|e: Event| Msg::Gears(platform::event_value(&e)));
        let typing = |field: Field| {
            link.callback(move |e: InputEvent| {
                Msg::Typing(field.clone(), platform::event_value(&e))
            })
        };
        let gears_text = self
            .state
            .gears
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let gears = self.field(&Field::Gears, "gears-error", "gears-error", gears_text);
        let sizes = self.field(
            &Field::Sizes,
            "sizes-error",
            "sizes-error",
            self.state
                .sizes
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", "),
        );
        html! {
            <section class="load card" aria-label="load a model">
                <div class="load-row">
                    <label for="sample">{ "Sample" }</label>
                    <select id="sample" data-testid="sample" ~value={current.to_string()} onchange={on_sample}>
                        if current.is_empty() { <option value="" selected=true>{ "— your file —" }</option> }
                        { for SAMPLES.iter().map(|s| html! {
                            <option value={s.id} selected={s.id == current}>
                                { s.title }
                            </option>
                        }) }
                    </select>
                    <span class="or muted">{ "or" }</span>
                    <label class="button file">
                        { "Open file…" }
                        <input type="file" accept=".onnx,.tflite,.json,.csv" data-testid="file" onchange={on_file} />
                    </label>
                    <span class="muted drop-hint">{ format!("or drop an .onnx, .tflite, .json or .csv file anywhere (up to {}). It is read in your browser; nothing is uploaded.", format::binary(MAX_FILE_BYTES)) }</span>
                </div>
                if let Some(s) = sample {
                    <p class="muted source">{ format!("Source: {} · Licence: {}", s.source, s.licence) }</p>
                }
                if let Some(b) = self.built.as_ref().filter(|b| b.lowered) {
                    <p class="banner note" data-testid="lowered-note">{ self.lowered_note(b) }</p>
                } else if !dims.is_empty() || is_graph {
                    <form class="dims" onsubmit={Callback::from(|e: SubmitEvent| e.prevent_default())}>
                        if !dims.is_empty() { <span>{ "Symbolic dims:" }</span> }
                        { for dims.iter().enumerate().map(|(i, d)| {
                            let name = d.clone();
                            let onchange = link.callback(move |e: Event| {
                                let v = platform::event_value(&e);
                                Msg::Bind(name.clone(), v)
                            });
                            let oninput = typing(Field::Dim(d.to_string()));
                            // a dim the user has not given shows empty: a named one is assumed
                            // 1 (the placeholder, and the panes' "Assumed" line say so), one
                            // the file leaves unnamed is unknown
                            let given = self.state.user_dims.contains(d.as_str()) || memplan_core::graph::is_unknown_dim(d);
                            let current = if given { self.state.bindings.get(d).map(ToString::to_string).unwrap_or_default() } else { String::new() };
                            let (placeholder, hint) = if memplan_core::graph::is_unknown_dim(d) {
                                ("?", "unknown until you give it")
                            } else {
                                ("1", "not given: assumed 1 until you give it")
                            };
                            let (value, invalid, described, error) = self.field(&Field::Dim(d.to_string()), &format!("dim-error-{i}"), &format!("dim-{d}-error"), current);
                            html! {
                                <span class="field">
                                    <label>{ d }{ " = " }
                                        <input type="number" min="1" class="num" data-testid={format!("dim-{d}")} {placeholder} title={hint} {value} aria-invalid={invalid} aria-describedby={described} {onchange} {oninput} />
                                    </label>
                                    { error }
                                </span>
                            }
                        }) }
                        if is_graph {
                            <span class="field">
                                <label title="GE dynamic batch: one plan per batch size, gears overlaid in one region (the leading symbolic dim of the first input is the batch)">
                                    { "Dynamic batch gears " }
                                    <input type="text" class="gears" placeholder="e.g. 1,2,4,8" data-testid="gears" value={gears.0} aria-invalid={gears.1} aria-describedby={gears.2} onchange={on_gears} oninput={typing(Field::Gears)} />
                                </label>
                                { gears.3 }
                            </span>
                            if let Some(d) = &gear_dim { <span class="muted small">{ format!("batch dim: {d}") }</span> }
                            <label title="Reshape, Flatten, Squeeze, Unsqueeze and Identity outputs share their input's buffer when the input dies there, as onnxruntime, TFLite and GE do (the CLI's --alias-views; off: every tensor its own buffer, comparable with per-tensor references)">
                                <input type="checkbox" data-testid="alias-views" checked={self.state.alias_views} onchange={link.callback(|e: Event| Msg::AliasViews(platform::event_checked(&e)))} />
                                { " views share their input" }
                            </label>
                            <span class="field">
                                <label title="Give a tensor's size in bytes when its shape is not inferred, or to resize one (the CLI's --size NAME=BYTES): name=bytes pairs, comma-separated, e.g. y=4MiB">
                                    { "Tensor sizes " }
                                    <input type="text" class="sizes" placeholder="name=bytes, …" data-testid="sizes"
                                        value={sizes.0} aria-invalid={sizes.1} aria-describedby={sizes.2}
                                        onchange={link.callback(|e: Event| Msg::Sizes(platform::event_value(&e)))}
                                        oninput={typing(Field::Sizes)} />
                                </label>
                                { sizes.3 }
                            </span>
                            <label title="The order the ops run in, which sets every lifetime: as the file says (its \"schedule\", else file order), file order, GE's default depth-first topological sort (compute_graph.cc DFSTopologicalSorting), or the order of lowest live-set lower bound found (exact search where the state space allows, never above the file order; the CLI's --schedule)">
                                { "Op order " }
                                <select data-testid="schedule" ~value={self.state.schedule.map_or("", ScheduleOrder::name)} onchange={link.callback(|e: Event| Msg::Schedule(ScheduleOrder::from_name(&platform::event_value(&e)).ok()))}>
                                    <option value="" selected={self.state.schedule.is_none()}>{ "as in the file" }</option>
                                    <option value="file" selected={self.state.schedule == Some(ScheduleOrder::File)}>{ "file order" }</option>
                                    <option value="ge-dfs" selected={self.state.schedule == Some(ScheduleOrder::GeDfs)}>{ "GE depth-first" }</option>
                                    <option value="memory" selected={self.state.schedule == Some(ScheduleOrder::Memory)}>{ "least memory" }</option>
                                </select>
                            </label>
                        }
                    </form>
                }
            </section>
        }
    }

    /// An input of field `key` (see [`State::drafts`]): its value (what is being typed or was
    /// refused, else `current`), its `aria-invalid` and `aria-describedby`, and the error shown
    /// under it (element `id`, test id `testid`).
    fn field(
        &self,
        key: &Field,
        id: &str,
        testid: &str,
        current: String,
    ) -> (String, Option<AttrValue>, Option<AttrValue>, Html) {
        match self.state.drafts.get(key) {
            Some(Draft {
                text,
                error: Some(error),
            }) => (
                text.clone(),
                Some("true".into()),
                Some(AttrValue::from(id.to_string())),
                crate::pane::error_note(id, testid, error),
            ),
            Some(d) => (d.text.clone(), None, None, html! {}),
            None => (current, None, None, html! {}),
        }
    }

    /// What a model carried lowered by its link is, and what it cannot do without its file.
    fn lowered_note(&self, b: &crate::model::Built) -> String {
        let name = self.source.as_ref().map_or("", |s| s.name.as_str());
        let mut how: Vec<String> = self
            .state
            .bindings
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect();
        if let Some((_, g)) = &b.gears {
            let g: Vec<String> = g.iter().map(u64::to_string).collect();
            how.push(format!("gears {}", g.join(",")));
        }
        let how = if how.is_empty() {
            String::new()
        } else {
            format!(" (lowered with {})", how.join(", "))
        };
        let fixed = if b.is_graph {
            " The graph itself is not in the link: its dims, gears, tensor sizes, view aliasing and op order cannot be changed here; open the file for that."
        } else {
            ""
        };
        // a buffer list has no ops or shapes: say only what the link holds
        let held = if b.is_graph {
            "its buffers with their sizes and live ranges, its ops and the table's shapes"
        } else {
            "its buffers with their sizes and live ranges"
        };
        format!("This link carries the lowered problem of {name}{how} instead of the file (a link carries a file itself only as JSON or CSV text of at most 8 KB compressed): {held}, so every plan is the file's.{fixed}")
    }

    fn view_summary(&self, ctx: &Context<Self>) -> Html {
        let (Some(b), Some(src)) = (&self.built, &self.source) else {
            return html! {};
        };
        let p = &b.problem;
        let lb = b.raw_bounds;
        let fmt = match src.format {
            Format::ProblemJson => "inline problem from the link",
            Format::Lowered => "lowered problem from the link",
            f => f.name(),
        };
        html! {
            <section class="summary card" aria-label="model">
                <h2 data-testid="model-name" title={(!p.name.is_empty() && p.name != src.name).then(|| format!("graph name: {}", p.name))}>{ model_title(&src.name, &p.name) }</h2>
                <p class="muted">
                    { format!("{} · {} · {} buffers · {} steps", src.name, fmt, format::grouped(p.buffers.len() as u64), format::grouped(p.steps)) }
                    { format!(" · raw lower bound {} · raw no-reuse {}", format::bytes(lb.lower_bound), format::binary(lb.no_reuse)) }
                    if p.weight_bytes > 0 { { format!(" · weights (not planned) {}", format::binary(p.weight_bytes)) } }
                    if let Some(v) = &b.views {
                        <span data-testid="views-aliased" data-bytes={v.bytes.to_string()}>{ format!(" · views aliased: {} tensors share their input's buffer ({} not allocated)", v.tensors, format::binary(v.bytes)) }</span>
                    }
                </p>
                if !b.unknown.is_empty() {
                    <p class="banner note" data-testid="unknown-size" data-count={b.unknown.len().to_string()}>
                        { format!("{} tensor(s) of unknown size are not planned: no figure here counts them. ", b.unknown.len()) }
                        { unknown_dims_hint(&b.symbols, &self.state.bindings) }
                    </p>
                }
                if b.tflm.is_some() {
                    <p class="muted small" data-testid="tflm-note">
                        { "TFLite model: the panes open on TFLM's rules (every tensor rounded up to 16 B, no padding, graph inputs and outputs in the arena), TFLM's own GreedyMemoryPlanner (tflm-greedy) against the best packing memplan finds (optimal). Each pane gives the arena size to write and downloads its plan as a planned .tflite (OfflineMemoryAllocation) or a C header." }
                    </p>
                }
                { self.view_planned_sizes() }
                { self.view_budget(ctx, lb.lower_bound) }
                if !b.warnings.is_empty() {
                    <details class="warnings">
                        <summary>{ format!("{} warning(s)", b.warnings.len()) }</summary>
                        <ul>{ for b.warnings.iter().take(200).map(|w| html! { <li>{ w }</li> }) }</ul>
                    </details>
                }
            </section>
        }
    }

    /// The figures that follow from the panes' size rules (padding, alignment) and not from
    /// their strategies: the no-reuse total of the planned sizes and the padding waste. One
    /// line when every planned pane agrees, else one figure per pane.
    fn view_planned_sizes(&self) -> Html {
        let planned: Vec<(usize, u64, u64)> = self
            .results
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.done().map(|r| (i, r.no_reuse, r.padding_waste)))
            .collect();
        let Some(&(_, no_reuse, waste)) = planned.first() else {
            return html! {};
        };
        if planned.iter().all(|&(_, n, w)| (n, w) == (no_reuse, waste)) {
            return html! {
                <p class="muted small planned-sizes" data-testid="planned-sizes" data-no-reuse={no_reuse.to_string()} data-padding={waste.to_string()}>
                    { format!("Planned sizes (the same in every pane: they follow its padding and alignment, not its strategy): no-reuse {} · padding waste {}", format::bytes(no_reuse), format::bytes(waste)) }
                </p>
            };
        }
        let each: Vec<String> = planned
            .iter()
            .map(|&(i, n, w)| {
                format!(
                    "pane {}: no-reuse {}, padding waste {}",
                    i + 1,
                    format::binary(n),
                    format::binary(w)
                )
            })
            .collect();
        html! {
            <p class="muted small planned-sizes" data-testid="planned-sizes">
                { format!("Planned sizes differ with the panes' padding and alignment: {}", each.join(" · ")) }
            </p>
        }
    }

    /// The memory budget field (read-only text in an embed), and a word when even the raw
    /// lower bound is over it.
    fn view_budget(&self, ctx: &Context<Self>, raw_lb: u64) -> Html {
        let below = self.state.budget.filter(|&b| b < raw_lb).map(|b| {
            html! { <span class="error small" data-testid="budget-infeasible">{ format!("no plan can fit: the lower bound is {} over it", format::bytes(raw_lb - b)) }</span> }
        });
        if self.embed {
            return match self.state.budget {
                Some(b) => {
                    html! { <p class="budget muted">{ format!("Memory budget {} ", format::bytes(b)) }{ for below }</p> }
                }
                None => html! {},
            };
        }
        let on_budget = ctx
            .link()
            .callback(|e: Event| Msg::Budget(platform::event_value(&e)));
        let oninput = ctx
            .link()
            .callback(|e: InputEvent| Msg::Typing(Field::Budget, platform::event_value(&e)));
        let (value, invalid, described, error) = self.field(
            &Field::Budget,
            "budget-error",
            "budget-error",
            self.state.budget.map(exact_bytes).unwrap_or_default(),
        );
        html! {
            <p class="budget">
                <span class="field">
                    <label title="device memory you have: each pane says whether its plan fits; the timeline draws the line">
                        { "Memory budget " }
                        <input type="text" placeholder="e.g. 200MiB" data-testid="budget" {value} aria-invalid={invalid} aria-describedby={described} onchange={on_budget} {oninput} />
                    </label>
                    { error }
                </span>
                if let Some(b) = self.state.budget { <span class="muted small">{ format!(" = {}", format::binary(b)) }</span> }
                { " " }{ for below }
            </p>
        }
    }

    fn view_panes(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let baseline = self
            .results
            .first()
            .and_then(|r| r.done())
            .map(|r| r.plan.device_bytes());
        let on_change = link.callback(|(i, s)| Msg::SetPane(i, s));
        let on_remove = link.callback(Msg::RemovePane);
        let on_focus = link.callback(Msg::Focus);
        let on_cancel = link.callback(Msg::Cancel);
        let on_retry = link.callback(Msg::Retry);
        let now = crate::platform::now_ms();
        let gears = self
            .built
            .as_ref()
            .and_then(|b| b.gears.as_ref())
            .is_some_and(|(_, g)| g.len() >= 2);
        let graph = self.built.as_ref().is_some_and(|b| b.is_graph);
        let unknown = self.built.as_ref().map_or(0, |b| b.unknown.len());
        let defaulted = self.defaulted_dims();
        let planning_ms = |s: &crate::settings::PaneSettings| {
            let key = crate::analysis::PlanKey::new(s, self.state.budget);
            self.running
                .as_ref()
                .filter(|r| r.key == key)
                .map(|r| (now - r.since_ms).max(0.0))
        };
        html! {
            <section class="panes" aria-label="compare strategies">
                { for self.state.panes.iter().enumerate().map(|(i, s)| html! {
                    <Pane index={i} settings={s.clone()} result={self.results.get(i).cloned().map(crate::pane::ResultRef)} {baseline} budget={self.state.budget}
                        focused={i == self.state.focus} removable={self.state.panes.len() > 1} readonly={self.embed} {gears} {graph}
                        on_change={on_change.clone()} on_remove={on_remove.clone()} on_focus={on_focus.clone()}
                        planning_ms={planning_ms(s)} on_cancel={on_cancel.clone()} on_retry={on_retry.clone()}
                        {unknown} defaulted={defaulted.clone()}
                        why={self.state.rules().why(i, &s.strategy)}
                        tflm={self.built.as_ref().and_then(|b| b.tflm.clone())}
                        tflm_error={self.tflm_error.as_ref().filter(|(j, _)| *j == i).map(|(_, e)| e.clone())}
                        on_tflm={link.callback(|(i, f)| Msg::Tflm(i, f))} sections={crate::sections::Model::of(self)} />
                }) }
                if !self.embed && self.state.panes.len() < crate::settings::MAX_PANES {
                    <button type="button" class="add-pane" data-testid="add-pane" onclick={link.callback(|_| Msg::AddPane)}>{ "+ Add pane" }</button>
                }
            </section>
        }
    }

    pub(crate) fn view_plots(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let (Some(b), Some(r), Some(vp)) = (&self.built, self.focused(), self.view()) else {
            return html! {};
        };
        let dark = self.dark();
        // The boxes are painted on the canvas after rendering (`App::rendered`), only when the
        // picture changes; what follows the pointer is this small overlay.
        let search = self.state.search.to_lowercase();
        let overlay = timeline::overlay_svg(
            &b.problem,
            r,
            &vp,
            &timeline::Marks {
                hover: self.state.hover.map(|h| h.buffer),
                selected: self.state.selected,
                search: &search,
                step: Some(self.table_step()),
                dark,
            },
        );
        // the curve changes with the plan, view, theme and budget, not with the step: its
        // cursor is an overlay, and the curve is drawn once per change (App::curve)
        let curve = self.curve(r, &vp, dark);
        let cursor = timeline::curve_cursor_svg(&vp, Some(self.table_step()), dark);
        let onmousemove = link.batch_callback(|e: MouseEvent| {
            crate::platform::svg_point(&e, W, H).map(|(x, y, lx, ly)| Msg::Pointer(x, y, lx, ly))
        });
        let onmousedown = link.batch_callback(|e: MouseEvent| {
            crate::platform::svg_point(&e, W, H).map(|(x, y, _, _)| Msg::Down(x, y))
        });
        let onclick = {
            let dragged = self.state.drag.is_some_and(|d| d.moved);
            link.batch_callback(move |e: MouseEvent| {
                if dragged {
                    return None;
                }
                crate::platform::svg_point(&e, W, H).map(|(x, _, _, _)| Msg::Click(x))
            })
        };
        // In an embed the page scrolls past the timeline: it zooms only with Ctrl/⌘ held or
        // after a click on it.
        let wheel_free = !self.embed || self.embed_active;
        // focused, the timeline also takes ↑ ↓ (elsewhere they scroll the page); ← → and the
        // rest are the page's keys (platform::on_key)
        let onkeydown = link.batch_callback(|e: KeyboardEvent| {
            let up = match e.key().as_str() {
                "ArrowUp" => true,
                "ArrowDown" => false,
                _ => return None,
            };
            e.prevent_default();
            Some(Msg::SelectLive(up))
        });
        let onwheel = link.batch_callback(move |e: WheelEvent| {
            if !(wheel_free || e.ctrl_key() || e.meta_key()) {
                return None;
            }
            let m: &MouseEvent = e.as_ref();
            let (x, y, _, _) = crate::platform::svg_point(m, W, H)?;
            e.prevent_default();
            let pw = W - MARGIN.0 - MARGIN.1;
            let ph = H - MARGIN.2 - MARGIN.3;
            let fx = (x - MARGIN.0) / pw;
            let fy = 1.0 - (y - MARGIN.2) / ph;
            let f = if e.delta_y() > 0.0 { 1.25 } else { 0.8 };
            Some(Msg::Zoom(f, fx, fy))
        });
        let tooltip = self.state.hover.and_then(|crate::state::Hover { buffer: i, x: lx, y: ly }| {
            let buf = b.problem.buffers.get(i)?;
            let inf = b.info.get(i).cloned().unwrap_or_default();
            let planned = r.plan.sizes.get(i).copied().unwrap_or(0);
            // the innermost GE block holding the tensor, and its slack at the shown step
            let step = self.table_step();
            let block = r
                .plan
                .blocks
                .iter()
                .filter(|blk| blk.members.contains(&memplan_core::BufferId::new(i)))
                .min_by_key(|blk| blk.size);
            let slack = block.map_or(0, |blk| {
                let live: u64 = blk
                    .members
                    .iter()
                    .filter(|&&m| {
                        b.problem
                            .buffers
                            .get(m.index())
                            .is_some_and(|x| x.start <= step && step <= x.end)
                    })
                    .map(|&m| r.plan.sizes.get(m.index()).copied().unwrap_or(0))
                    .sum();
                blk.size.saturating_sub(live)
            });
            Some(html! {
                <div class="tooltip" role="tooltip" data-testid="tooltip" style={format!("left:{:.0}px;top:{:.0}px", lx + 14.0, ly + 14.0)}>
                    <strong>{ &buf.name }</strong>
                    <table>
                        <tr><th>{ "op" }</th><td>{ if inf.op.is_empty() { "—".to_string() } else { inf.op } }</td></tr>
                        <tr><th>{ "shape" }</th><td>{ if inf.shape.is_empty() { "—".to_string() } else { inf.shape } }</td></tr>
                        <tr><th>{ "dtype" }</th><td>{ if inf.dtype.is_empty() { "—".to_string() } else { inf.dtype } }</td></tr>
                        <tr><th>{ "bytes" }</th><td>{ format::bytes(buf.size) }</td></tr>
                        <tr><th>{ "planned" }</th><td>{ format::bytes(planned) }</td></tr>
                        <tr><th>{ "live" }</th><td>{ format!("steps {}–{} (inclusive)", buf.start, buf.end) }</td></tr>
                        <tr><th>{ "offset" }</th><td>{ format::bytes(r.plan.offsets.get(i).copied().unwrap_or(0)) }</td></tr>
                        if let Some(blk) = block {
                            <tr data-testid="tooltip-block"><th>{ "GE block" }</th><td>{ format!(
                                "{} · {} members · {} · slack at step {}: {}",
                                format::binary(blk.size),
                                blk.members.len(),
                                if blk.level == memplan_core::BlockLevel::Top { "level 1 (top)" } else { "level 2 (nested)" },
                                step,
                                format::binary(slack),
                            ) }</td></tr>
                        }
                    </table>
                </div>
            })
        });
        let zoomed = self.state.vp.is_some();
        let step = self.table_step();
        let live = crate::analysis::live_at_step(&r.curve, step);
        let compare = self.view_compare(ctx, b, r, &vp);
        html! {
            <section class="plots card" aria-label="memory timeline">
                <div class="toolbar">
                    <h2>{ format!("Timeline — pane {}: {}", self.state.focus + 1, self.state.panes[self.state.focus].label()) }</h2>
                    { self.view_compare_pick(ctx) }
                    if let (Some((_, gears)), Some(shown)) = (b.gears.as_ref(), self.gear_shown()) {
                        <label class="gear-pick">{ "gear " }
                            <select data-testid="gear" ~value={shown.to_string()} onchange={link.batch_callback(|e: Event| {
                                platform::event_value(&e).parse::<u64>().ok().map(Msg::ShowGear)
                            })}>
                                { for gears.iter().map(|g| html! { <option value={g.to_string()} selected={*g == shown}>{ format!("batch {g}") }</option> }) }
                            </select>
                        </label>
                    }
                    if self.embed {
                        <span class="tools">
                            <button type="button" data-testid="reset-view" onclick={link.callback(|_| Msg::ResetView)} disabled={!zoomed}>{ "Reset" }</button>
                        </span>
                    } else {
                        <span class="tools">
                            <button type="button" class="icon" aria-label="zoom in" title="zoom in (+)" onclick={link.callback(|_| Msg::Zoom(0.5, 0.5, 0.5))}>{ "+" }</button>
                            <button type="button" class="icon" aria-label="zoom out" title="zoom out (−)" onclick={link.callback(|_| Msg::Zoom(2.0, 0.5, 0.5))}>{ "−" }</button>
                            <button type="button" onclick={link.callback(|_| Msg::ResetView)} disabled={!zoomed}>{ "Reset view" }</button>
                            <button type="button" class="icon" aria-label="previous step" title="previous step (←)" onclick={link.callback(|_| Msg::StepBy(-1))}>{ "◀" }</button>
                            <span class="step" data-testid="step">{ format!("step {} / {}", step, b.problem.steps.saturating_sub(1)) }</span>
                            <button type="button" class="icon" aria-label="next step" title="next step (→)" onclick={link.callback(|_| Msg::StepBy(1))}>{ "▶" }</button>
                            <button type="button" onclick={link.callback(|_| Msg::Step(None))}>{ "Peak step" }</button>
                        </span>
                    }
                </div>
                <p class="muted small">
                    { format!("Live at step {step}: {}. ", format::bytes(live)) }
                    if !self.embed { { "Scroll to zoom, drag to pan, click to pick a step. " } }
                    else if !self.embed_active { { "Ctrl/⌘ + scroll to zoom (or click the timeline first), drag to pan. " } }
                    if !r.plan.blocks.is_empty() { { "Dashed outlines: GE blocks." } }
                </p>
                <div class="svgbox" data-testid="timeline" data-live-peak={live_peak(r).to_string()} {onmousemove} {onmousedown} {onclick} {onwheel}
                    tabindex="0" onkeydown={onkeydown} aria-keyshortcuts="ArrowLeft ArrowRight ArrowUp ArrowDown Home End + - 0"
                    aria-label="memory timeline: ← → step through time, ↑ ↓ select the tensor above or below, Home and End the first and last step, + and − zoom, 0 resets"
                    onmouseup={link.callback(|_| Msg::Up)} onmouseleave={link.callback(|_| Msg::Leave)}>
                    <canvas id="timeline-canvas" class="timeline-canvas" role="img"
                        aria-label="memory timeline: x is the op step, y the offset in the arena; the table below lists the tensors live at the selected step" />
                    { Html::from_html_unchecked(AttrValue::from(overlay)) }
                    { tooltip.unwrap_or_default() }
                </div>
                { compare }
                <div class="svgbox curve" data-testid="curve">
                    { Html::from_html_unchecked(curve) }
                    { Html::from_html_unchecked(AttrValue::from(cursor)) }
                </div>
            </section>
        }
    }

    /// The compare view's menus: what is drawn, and in a diff, against which pane (none in
    /// an embed, which shows what its link says).
    fn view_compare_pick(&self, ctx: &Context<Self>) -> Html {
        use crate::settings::{Compare, CompareMode};
        if self.embed || self.state.panes.len() < 2 {
            return html! {};
        }
        let link = ctx.link();
        let c = self.state.compare;
        let with = c
            .other(self.state.focus, self.state.panes.len())
            .unwrap_or(0);
        let on_mode = link.batch_callback(move |e: Event| {
            let mode = match platform::event_value(&e).as_str() {
                "side" => CompareMode::Side,
                "diff" => CompareMode::Diff,
                _ => CompareMode::Off,
            };
            Some(Msg::SetCompare(Compare { mode, with }))
        });
        let on_with = link.batch_callback(move |e: Event| {
            platform::event_value(&e).parse::<usize>().ok().map(|w| {
                Msg::SetCompare(Compare {
                    mode: CompareMode::Diff,
                    with: w,
                })
            })
        });
        html! {
            <span class="compare-pick">
                <label>{ "compare " }
                    <select data-testid="compare-mode" ~value={match c.mode { CompareMode::Off => "off", CompareMode::Side => "side", CompareMode::Diff => "diff" }} onchange={on_mode} title="other panes' timelines on the same step and byte axes, or the tensors this pane places elsewhere than another">
                        <option value="off" selected={c.mode == CompareMode::Off}>{ "this pane only" }</option>
                        <option value="side" selected={c.mode == CompareMode::Side}>{ "all panes, shared axes" }</option>
                        <option value="diff" selected={c.mode == CompareMode::Diff}>{ "diff: what moved" }</option>
                    </select>
                </label>
                if c.mode == CompareMode::Diff {
                    <label>{ " against " }
                        <select data-testid="compare-with" ~value={with.to_string()} onchange={on_with}>
                            { for (0..self.state.panes.len()).filter(|&j| j != self.state.focus).map(|j| html! {
                                <option value={j.to_string()} selected={j == with}>{ format!("pane {}: {}", j + 1, self.state.panes[j].label()) }</option>
                            }) }
                        </select>
                    </label>
                }
            </span>
        }
    }

    /// Under the focused pane's timeline: side by side, the other panes' timelines on the same
    /// axes (painted in `App::paint`); in a diff, how many tensors moved.
    fn view_compare(
        &self,
        ctx: &Context<Self>,
        b: &crate::model::Built,
        r: &crate::analysis::PaneResult,
        vp: &timeline::Viewport,
    ) -> Html {
        use crate::settings::CompareMode;
        let others = self.compared();
        // byte offsets of a view: non-negative and far below 2^53; `as` saturates anyway
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let axes = format!(
            "Shared axes: steps {:.0}–{:.0}, bytes {}–{}.",
            vp.x0,
            vp.x1,
            format::binary(vp.y0 as u64),
            format::binary(vp.y1 as u64)
        );
        match self.state.compare.mode {
            CompareMode::Off => html! {},
            CompareMode::Side => html! {
                <div class="compare" data-testid="compare-side" data-y-max={format!("{:.0}", vp.y1)}>
                    <p class="muted small" data-testid="compare-note">
                        { format!("{axes} Pane {} (above): peak {}. ", self.state.focus + 1, format::binary(r.plan.peak)) }
                        { for others.iter().map(|(j, o)| format!("Pane {}: peak {}. ", j + 1, format::binary(o.plan.peak))) }
                        if others.is_empty() { { "No other pane has a plan yet." } }
                    </p>
                    { for others.iter().map(|(j, o)| {
                        let j = *j;
                        let onclick = ctx.link().callback(move |_| Msg::Focus(j));
                        html! {
                            <figure class="compare-item" data-testid={format!("compare-pane{j}")} data-peak={o.plan.peak.to_string()} data-live-peak={live_peak(o).to_string()}>
                                <figcaption>
                                    <button type="button" class="linkish" title="show this pane's timeline above" {onclick}>
                                        { format!("Pane {}: {}", j + 1, self.state.panes[j].label()) }
                                    </button>
                                    { format!(" · peak {}", format::bytes(o.plan.peak)) }
                                </figcaption>
                                <div class="svgbox">
                                    <canvas id={format!("compare-canvas-{j}")} class="timeline-canvas" role="img"
                                        aria-label={format!("memory timeline of pane {} on the same axes as the one above", j + 1)} />
                                </div>
                            </figure>
                        }
                    }) }
                </div>
            },
            CompareMode::Diff => {
                let Some((j, o)) = others.first() else {
                    return html! { <p class="muted small" data-testid="diff-moved">{ "Nothing to compare against: the other pane has no plan yet." }</p> };
                };
                let moved = crate::analysis::moved(&r.plan, &o.plan);
                let placed = r.plan.sizes.iter().filter(|&&s| s > 0).count();
                let names: Vec<&str> = moved
                    .iter()
                    .take(5)
                    .filter_map(|&i| b.problem.buffers.get(i).map(|x| x.name.as_str()))
                    .collect();
                let more = match moved.len() - names.len() {
                    0 => String::new(),
                    n => format!(" and {n} more"),
                };
                html! {
                    <p class="small diff-note" data-testid="diff-moved" data-moved={moved.len().to_string()}>
                        <span class="swatch-moved" aria-hidden="true" />
                        { format!(
                            "{} of {} tensors are at another offset than in pane {} ({}){}. Outlined: where pane {} puts them; dashed: where pane {} does. Peaks {} vs {}. {axes}",
                            moved.len(), placed, j + 1, self.state.panes[*j].label(),
                            if names.is_empty() { String::new() } else { format!(": {}{more}", names.join(", ")) },
                            self.state.focus + 1, j + 1,
                            format::binary(r.plan.peak), format::binary(o.plan.peak),
                        ) }
                    </p>
                }
            }
        }
    }

    /// The tensor table's rows in order: the buffers live at the shown step (of the shown
    /// gear) that match the search, sorted as the user asked.
    pub(crate) fn table_rows(
        &self,
        b: &crate::model::Built,
        r: &crate::analysis::PaneResult,
    ) -> Vec<usize> {
        let step = self.rows_step();
        let q = self.state.search.to_lowercase();
        let gear = self.gear_shown();
        let mut rows: Vec<usize> = crate::analysis::live_buffers(&b.problem, step)
            .into_iter()
            .filter(|&i| b.problem.buffers[i].gear.is_none_or(|g| Some(g) == gear))
            .filter(|&i| {
                q.is_empty()
                    || b.problem.buffers[i].name.to_lowercase().contains(&q)
                    || b.info
                        .get(i)
                        .is_some_and(|f| f.op.to_lowercase().contains(&q))
            })
            .collect();
        let (col, desc) = self.state.sort;
        let key_u = |i: usize| -> u64 {
            let bf = &b.problem.buffers[i];
            match col {
                Col::Bytes => bf.size,
                Col::Planned => r.plan.sizes[i],
                Col::Start => bf.start,
                Col::End => bf.end,
                Col::Offset => r.plan.offsets[i],
                Col::Name | Col::Op => 0,
            }
        };
        match col {
            Col::Name => {
                rows.sort_by(|&x, &y| b.problem.buffers[x].name.cmp(&b.problem.buffers[y].name))
            }
            Col::Op => rows.sort_by(|&x, &y| b.info[x].op.cmp(&b.info[y].op)),
            _ => rows.sort_by_key(|&i| key_u(i)),
        }
        if desc {
            rows.reverse();
        }
        rows
    }

    fn view_table(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let (Some(b), Some(r)) = (&self.built, self.focused()) else {
            return html! {};
        };
        let step = self.rows_step();
        let rows = self.table_rows(b, r);
        let (col, desc) = self.state.sort;
        let total: u64 = rows.iter().map(|&i| r.plan.sizes[i]).sum();
        // only the rows near the scroll position are in the page, spacers stand for the rest
        let start = table_window(self.table_top).min(rows.len().saturating_sub(TABLE_WINDOW));
        let end = (start + TABLE_WINDOW).min(rows.len());
        // GE's stream and memory-type columns, when the model uses more than the defaults
        let streams = b.problem.buffers.iter().any(|x| x.stream != 0);
        let types = b.problem.buffers.iter().any(|x| x.memory_type != 0);
        let head = |c: Col, label: &'static str| {
            let arrow = if col == c {
                if desc {
                    " ▼"
                } else {
                    " ▲"
                }
            } else {
                ""
            };
            let aria = if col == c {
                if desc {
                    "descending"
                } else {
                    "ascending"
                }
            } else {
                "none"
            };
            html! { <th aria-sort={aria}><button type="button" class="th" onclick={link.callback(move |_| Msg::Sort(c))}>{ label }{ arrow }</button></th> }
        };
        let oninput = link.callback(|e: InputEvent| Msg::Search(platform::event_value(&e)));
        let hover = self.state.hover.map(|h| h.buffer);
        let cols = 9 + usize::from(streams) + usize::from(types);
        let spacer = |n: usize| {
            (n > 0).then(|| html! {
                <tr class="spacer" aria-hidden="true" style={format!("height:{}px", n as f64 * TABLE_ROW_PX)}><td colspan={cols.to_string()} /></tr>
            })
        };
        let onscroll =
            link.batch_callback(|e: Event| platform::event_scroll_top(&e).map(Msg::TableScroll));
        html! {
            <section class="table card" aria-label="tensors live at the step">
                <div class="toolbar">
                    <h2 data-testid="table-title">{ format!("Tensors live at step {step}{}", if Some(step) == self.focused().map(|r| r.peak_step) { " (peak)" } else { "" }) }</h2>
                    <input id="tensor-search" type="search" placeholder="search tensors (/)" aria-label="search tensors" value={self.state.search.clone()} {oninput} />
                </div>
                <p class="muted small">{ format!("{} tensors, {} planned", rows.len(), format::bytes(total)) }<span class="swipe-hint">{ " · swipe the table sideways for sizes, steps and offsets →" }</span></p>
                <div class="scroll" id="tensor-scroll" {onscroll}>
                    <table class="tensors" data-testid="tensor-table">
                        <thead><tr>
                            { head(Col::Name, "name") }{ head(Col::Op, "op") }<th>{ "shape" }</th><th>{ "dtype" }</th>
                            { head(Col::Bytes, "bytes") }{ head(Col::Planned, "planned") }{ head(Col::Start, "start") }{ head(Col::End, "end") }{ head(Col::Offset, "offset") }
                            if streams { <th title="the stream the producing op runs on (GE: no cross-stream reuse before a sync edge)">{ "stream" }</th> }
                            if types { <th title="memory type: each has its own arena from offset 0">{ "memory" }</th> }
                        </tr></thead>
                        <tbody>
                            { for spacer(start) }
                            { for rows[start..end].iter().map(|&i| {
                                let bf = &b.problem.buffers[i];
                                let inf = b.info.get(i).cloned().unwrap_or_default();
                                let selected = self.state.selected == Some(i);
                                let onclick = link.callback(move |_| Msg::Select((!selected).then_some(i)));
                                html! {
                                    <tr class={classes!((hover == Some(i)).then_some("hl"), selected.then_some("sel"))}
                                        aria-selected={selected.to_string()} data-testid={selected.then_some("selected-row")} {onclick}>
                                        <td class="name">{ &bf.name }</td><td>{ inf.op }</td><td>{ inf.shape }</td><td>{ inf.dtype }</td>
                                        <td class="n" title={format!("{} B", bf.size)}>{ format::binary(bf.size) }</td>
                                        <td class="n" title={format!("{} B", r.plan.sizes[i])}>{ format::binary(r.plan.sizes[i]) }</td>
                                        <td class="n">{ bf.start }</td><td class="n">{ bf.end }</td>
                                        <td class="n" title={format!("{} B", r.plan.offsets[i])}>{ format::binary(r.plan.offsets[i]) }</td>
                                        if streams { <td class="n" data-col="stream">{ bf.stream }</td> }
                                        if types { <td data-col="memory">{ memplan_core::memory_type_name(bf.memory_type).into_owned() }</td> }
                                    </tr>
                                }
                            }) }
                            { for spacer(rows.len() - end) }
                        </tbody>
                    </table>
                </div>
            </section>
        }
    }

    /// The symbolic dims bound by default, not by the user or the link (`batch = 1`).
    fn defaulted_dims(&self) -> Vec<String> {
        self.built.as_ref().map_or_else(Vec::new, |b| {
            b.symbols
                .iter()
                .filter(|d| !self.state.user_dims.contains(*d))
                .filter_map(|d| self.state.bindings.get(d).map(|v| format!("{d} = {v}")))
                .collect()
        })
    }

    pub(crate) fn view_embed(&self, ctx: &Context<Self>) -> Html {
        let (open, _) = {
            let (h, w) = crate::share::encode(&self.shared());
            (format!("{}#{h}", crate::platform::page_url(false)), w)
        };
        let name = self
            .source
            .as_ref()
            .map_or(String::new(), |s| s.name.clone());
        let defaulted = self.defaulted_dims();
        html! {
            <div class="app embed">
                <header class="top">
                    <h1><span class="logo" aria-hidden="true">{ "▦" }</span>{ " memplan " }<span class="muted">{ name }</span>
                        if !defaulted.is_empty() {
                            // once for every pane: an embed has no room for a banner in each
                            <span class="muted small" data-testid="embed-defaulted">{ format!(" · assumed {}", defaulted.join(", ")) }</span>
                        }
                    </h1>
                    <a href={open} target="_blank" rel="noopener" data-testid="open-in-playground">{ "Open in playground ↗" }</a>
                </header>
                if let Some(e) = self.error.as_ref().or(self.state.link_error.as_ref()) {
                    <div class="banner error" role="alert" data-testid="load-error">{ e }</div>
                }
                { self.view_missing_model() }
                { self.view_panes(ctx) }
                { self.view_plots(ctx) }
            </div>
        }
    }
}

/// Height of a tensor-table row, CSS pixels (`style.css` fixes it: the spacers that stand for
/// the rows not rendered are this tall per row).
pub(crate) const TABLE_ROW_PX: f64 = 22.0;
/// Rows rendered at a time: the scroll box shows about 18.
pub(crate) const TABLE_WINDOW: usize = 60;
/// The window moves in steps of this many rows, so most scroll events change nothing.
const TABLE_STRIDE: usize = 20;

/// The first table row rendered when the table is scrolled `top` CSS pixels: a multiple of
/// [`TABLE_STRIDE`] at least one stride above the first row in view.
pub(crate) fn table_window(top: f64) -> usize {
    // scroll offsets are small non-negative pixel counts
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let first = (top.max(0.0) / TABLE_ROW_PX) as usize;
    first.saturating_sub(TABLE_STRIDE) / TABLE_STRIDE * TABLE_STRIDE
}

/// A model's title: its file name without the extension (graph names are often generic, such
/// as ONNX exporters' `main_graph`); the graph's name when there is no file name.
pub(crate) fn model_title(file: &str, graph: &str) -> String {
    let stem = file.rsplit_once('.').map_or(file, |(s, _)| s);
    if stem.is_empty() {
        graph.to_string()
    } else {
        stem.to_string()
    }
}

/// `bytes` in the largest binary unit that states it exactly with at most three decimals
/// (`150 MiB`, `9.5 MiB`, `1536 B`): what the budget field shows, and reads back
/// ([`memplan_core::units::parse_bytes`]) to the same number.
fn exact_bytes(bytes: u64) -> String {
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        let scale = 1u128 << shift;
        let milli = u128::from(bytes) * 1000;
        if u128::from(bytes) >= scale && milli % scale == 0 {
            let m = milli / scale;
            let text = format!("{}.{:03}", m / 1000, m % 1000);
            return format!(
                "{} {unit}",
                text.trim_end_matches('0').trim_end_matches('.')
            );
        }
    }
    format!("{bytes} B")
}

/// What to do about tensors of unknown size: the dims the file leaves unnamed and unbound.
fn unknown_dims_hint(symbols: &[String], bindings: &memplan_core::Bindings) -> String {
    let open: Vec<&str> = symbols
        .iter()
        .filter(|s| memplan_core::graph::is_unknown_dim(s) && !bindings.contains_key(*s))
        .map(String::as_str)
        .collect();
    if open.is_empty() {
        "Their shapes are not inferred (the warnings say why): give their sizes under Tensor sizes above.".into()
    } else {
        format!(
            "Give the dims the file leaves unnamed above: {}.",
            open.join(", ")
        )
    }
}

/// The most bytes live at any step of what `r` draws (with gears: of the shown gear).
fn live_peak(r: &crate::analysis::PaneResult) -> u64 {
    r.curve.iter().map(|&(_, b)| b).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_budget_reads_back_to_its_bytes() {
        for (b, text) in [
            (157_286_400, "150 MiB"),
            (9_961_472, "9.5 MiB"),
            (1536, "1.5 KiB"),
            (1000, "1000 B"),
            (3 << 30, "3 GiB"),
        ] {
            assert_eq!(super::exact_bytes(b), text);
            assert_eq!(memplan_core::units::parse_bytes(text), Ok(b));
        }
    }

    #[test]
    fn the_table_window_covers_the_rows_in_view() {
        use super::{table_window, TABLE_ROW_PX, TABLE_STRIDE, TABLE_WINDOW};
        assert_eq!(table_window(0.0), 0);
        assert_eq!(table_window(-5.0), 0);
        // row 45 at the top: the window starts at row 20 and ends at 80, past the ~18 in view
        let w = table_window(45.0 * TABLE_ROW_PX);
        assert_eq!(w, 20);
        assert!(w + TABLE_WINDOW >= 45 + 20);
        // every position: the rows in view (18 of them) are inside the window
        for first in 0..1000usize {
            let w = table_window(first as f64 * TABLE_ROW_PX);
            assert!(w <= first && first + 18 <= w + TABLE_WINDOW, "{first}: {w}");
            assert_eq!(w % TABLE_STRIDE, 0);
        }
    }

    #[test]
    fn a_model_is_titled_by_its_file_name() {
        assert_eq!(
            super::model_title("resnet50.onnx", "main_graph"),
            "resnet50"
        );
        assert_eq!(super::model_title("tetris.csv", ""), "tetris");
        assert_eq!(super::model_title("", "torch_jit"), "torch_jit");
    }
}
