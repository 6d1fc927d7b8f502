//! The Advisor panel: "what would it take to need less" for the open model. It runs the core's
//! advisor ([`memplan_core::report::advise::advise`], the same rows as `memplan advise MODEL`)
//! in a web worker of its own ([`crate::advise_job`]) when the user opens the panel, never
//! before first paint and never on the page's thread, and shows every lever sorted by saving: its peak, the saving in bytes and per cent, what the runtime must do. A row whose
//! flags the page can show opens a pane with them; fusion and in-place have no control on the
//! page, so their rows name the CLI command instead.

use std::rc::Rc;

use memplan_core::graph::ScheduleOrder;
use memplan_core::import::load::Format as CoreFormat;
use memplan_core::plan::{Padding, PlanOptions};
use memplan_core::report::advise::Advice;
use yew::prelude::*;

use crate::advise_job::{self, AdviseJob};
use crate::app::{App, Msg};
use crate::format;
use crate::platform;
use crate::settings::{PaneSettings, MAX_PANES};

/// What a row asks of the page: the model-wide lowering switches and one pane's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Apply {
    /// `--schedule memory`: the page's op order becomes "least memory"; else the file's.
    pub schedule: Option<ScheduleOrder>,
    /// `--alias-views`.
    pub alias_views: bool,
    /// The pane: strategy, alignment, padding, graph I/O as the flags say.
    pub pane: PaneSettings,
    /// Flags the page has no control for (`--fuse pad,quantize`, `--in-place depthwise`).
    pub cli_only: Vec<String>,
}

/// The default plan options of the file `name` as the CLI plans it (TFLite: TFLM's 16-byte
/// alignment, exact sizes; a CSV buffer list: exact sizes; else GE's rules).
fn default_options(name: &str) -> PlanOptions {
    match CoreFormat::by_extension(name) {
        Some(CoreFormat::Csv) => PlanOptions::exact(),
        Some(f) => f.default_plan_options(),
        None => PlanOptions::default(),
    }
}

/// Reads a row's `memplan plan` flags (as [`memplan_core::report::advise::Lever::flags`]
/// words them) into page settings, starting from the CLI's defaults for `name`; `base` gives
/// the settings the flags do not touch (reuse, atomic cleaning...).
pub fn apply(name: &str, flags: &[String], base: &PaneSettings) -> Apply {
    let o = default_options(name);
    let mut pane = PaneSettings {
        alignment: o.alignment,
        ge_padding: o.padding == Padding::Ge,
        zero_copy_io: o.zero_copy_io,
        zero_copy_reuse: o.zero_copy_reuse,
        ..base.clone()
    };
    let mut a = Apply {
        schedule: None,
        alias_views: false,
        pane: pane.clone(),
        cli_only: Vec::new(),
    };
    let mut it = flags.iter();
    while let Some(f) = it.next() {
        match f.as_str() {
            "--strategy" => pane.strategy = it.next().cloned().unwrap_or_default(),
            "--schedule" => a.schedule = ScheduleOrder::from_name(it.next().map_or("", |s| s)).ok(),
            "--alias-views" => a.alias_views = true,
            "--align" => {
                if let Some(n) = it.next().and_then(|s| s.parse().ok()) {
                    pane.alignment = n;
                }
            }
            "--padding" => pane.ge_padding = it.next().is_some_and(|s| s == "ge"),
            "--io-reuse" => pane.zero_copy_io = false,
            other => {
                let mut w = other.to_string();
                if let Some(v) = it.next() {
                    w = format!("{w} {v}");
                }
                a.cli_only.push(w);
            }
        }
    }
    a.pane = pane;
    a
}

/// The messages that open a row's settings: the lowering switches, then a new pane (or the
/// focused one when the page has [`MAX_PANES`]) with the row's settings, focused.
fn messages(a: Apply, panes: usize, focus: usize) -> Vec<Msg> {
    let mut v = vec![Msg::Schedule(a.schedule), Msg::AliasViews(a.alias_views)];
    let at = if panes < MAX_PANES {
        v.push(Msg::AddPane);
        panes
    } else {
        focus
    };
    v.push(Msg::SetPane(at, a.pane));
    v.push(Msg::Focus(at));
    v
}

/// What the advisor runs on: the file and the page's shape settings (dims, gears, sizes),
/// which are not levers. Equal when the same file bytes (by pointer) and settings.
#[derive(Clone)]
pub struct Input {
    /// The file's name and the page's dims, gears and sizes.
    pub job: AdviseJob,
    /// The file's bytes.
    pub bytes: Rc<[u8]>,
}

impl PartialEq for Input {
    fn eq(&self, o: &Self) -> bool {
        self.job == o.job && Rc::ptr_eq(&self.bytes, &o.bytes)
    }
}

/// The panel's properties.
#[derive(Properties, Clone, PartialEq)]
pub struct Props {
    /// The open model.
    pub input: Input,
    /// Opens a row's flags in a pane.
    pub on_open: Callback<Vec<String>>,
}

/// Where the panel stands.
#[derive(Clone, PartialEq)]
enum Stage {
    Closed,
    Computing,
    Done(Rc<Result<Advice, String>>),
}

/// The Advisor panel (a `<details>`: the advisor runs when it is first opened, and again for
/// another model).
#[function_component(Advisor)]
pub fn advisor(props: &Props) -> Html {
    let stage = use_state(|| Stage::Closed);
    // the advisor's worker, kept while it computes; another model drops (terminates) it
    let worker = use_mut_ref(|| None::<platform::PlanWorker>);
    {
        let (stage, worker) = (stage.clone(), worker.clone());
        use_effect_with(props.input.clone(), move |_| {
            worker.borrow_mut().take();
            stage.set(Stage::Closed);
        });
    }
    let ontoggle = {
        let (stage, worker) = (stage.clone(), worker.clone());
        let input = props.input.clone();
        Callback::from(move |e: Event| {
            let open = platform::event_target_has(&e, "open");
            if open && *stage == Stage::Closed {
                stage.set(Stage::Computing);
                start(&input, &stage, &worker);
            }
        })
    };
    let body = match &*stage {
        Stage::Closed => html! {},
        Stage::Computing => html! {
            <p class="muted" role="status" data-testid="advisor-computing">{ "computing every lever (in a worker)…" }</p>
        },
        Stage::Done(r) => match &**r {
            Err(e) => {
                html! { <p class="banner error" role="alert" data-testid="advisor-error">{ e }</p> }
            }
            Ok(a) => view_advice(a, &props.input.job.name, &props.on_open),
        },
    };
    html! {
        <section class="card advisor" aria-label="advisor">
            <details data-testid="advisor" {ontoggle}>
                <summary><h2>{ "Advisor: what would it take to need less?" }</h2></summary>
                { body }
            </details>
        </section>
    }
}

/// Runs the advisor in a new worker (the job is sent once the worker listens); where the
/// browser refuses a worker, on the page's thread a task later, after "computing" is painted.
fn start(
    input: &Input,
    stage: &UseStateHandle<Stage>,
    worker: &Rc<std::cell::RefCell<Option<platform::PlanWorker>>>,
) {
    let done = {
        let stage = stage.clone();
        move |r: Result<Advice, String>| stage.set(Stage::Done(Rc::new(r)))
    };
    let on_message = {
        let (slot, done) = (worker.clone(), done.clone());
        let (header, bytes) = (input.job.header(), input.bytes.clone());
        move |t: String| {
            if t == crate::worker::READY {
                if let Some(w) = slot.borrow().as_ref() {
                    w.post_with_bytes(&header, &bytes);
                }
            } else if let Some(r) = advise_job::read_answer(&t) {
                done(r);
            }
        }
    };
    let on_error = {
        let done = done.clone();
        move |e: String| done(Err(format!("the advisor's worker failed: {e}")))
    };
    match platform::PlanWorker::spawn(crate::worker::SCRIPT, on_message, on_error) {
        Ok(w) => *worker.borrow_mut() = Some(w),
        Err(_) => {
            let input = input.clone();
            platform::after(30, move || done(input.job.run(&input.bytes))).forget();
        }
    }
}

fn view_advice(a: &Advice, name: &str, on_open: &Callback<Vec<String>>) -> Html {
    let b = &a.baseline;
    let file = name.rsplit('/').next().unwrap_or(name);
    let rows = a.levers.iter().map(|l| {
        let page = apply(name, &l.flags, &PaneSettings::default_for(0, true, &[]));
        let open = if page.cli_only.is_empty() {
            let flags = l.flags.clone();
            let cb = on_open.reform(move |_: MouseEvent| flags.clone());
            html! { <button type="button" data-testid="advisor-open" onclick={cb}>{ "Open in a pane" }</button> }
        } else {
            html! { <span class="small">{ "CLI only (no page control for " }<code>{ page.cli_only.join(" ") }</code>{ "): " }<code>{ format!("memplan plan {file} {}", l.flags.join(" ")) }</code></span> }
        };
        html! {
            <tr data-testid="advisor-row" data-lever={l.name.clone()} data-peak={l.peak.to_string()} data-saving={l.saving_bytes.to_string()}>
                <td>{ &l.name }<br /><code class="small">{ l.flags.join(" ") }</code></td>
                <td class="num" title={format!("{} B", l.peak)}>{ format::bytes(l.peak) }</td>
                <td class="num" title={format!("{} B", l.saving_bytes)}>{ saving(l.saving_bytes) }</td>
                <td class="num">{ format!("{:.1} %", l.saving_percent) }</td>
                <td class="small">{ &l.requires }</td>
                <td>{ open }</td>
            </tr>
        }
    });
    html! {
        <>
            <p data-testid="advisor-baseline" data-peak={b.peak.to_string()}>
                { format!("Baseline: peak {} (lower bound {}), {}. Each row is the plan of ", format::bytes(b.peak), format::bytes(b.lower_bound), b.flags.join(" ")) }
                <code>{ format!("memplan plan {file} FLAGS") }</code>{ " with its flags; the same table: " }<code>{ format!("memplan advise {file}") }</code>
            </p>
            <table class="advisor-table">
                <thead><tr><th>{ "lever" }</th><th>{ "peak" }</th><th>{ "saving" }</th><th>{ "%" }</th><th>{ "the runtime must" }</th><th></th></tr></thead>
                <tbody>{ for rows }</tbody>
            </table>
            { for a.skipped.iter().map(|s| html! { <p class="muted small" data-testid="advisor-skipped">{ format!("skipped: {s}") }</p> }) }
        </>
    }
}

/// A saving in bytes, signed (a lever may cost memory).
fn saving(b: i64) -> String {
    if b < 0 {
        format!("−{}", format::bytes(b.unsigned_abs()))
    } else {
        format::bytes(b.unsigned_abs())
    }
}

impl App {
    /// The Advisor panel for the open model (nothing before one is open).
    pub(crate) fn view_advisor(&self, ctx: &Context<Self>) -> Html {
        let Some(source) = &self.source else {
            return html! {};
        };
        let input = Input {
            job: AdviseJob {
                name: source.name.clone(),
                dims: self.bindings.clone(),
                gears: self.gears.clone(),
                sizes: self.sizes.clone(),
            },
            bytes: source.bytes.clone(),
        };
        let name = source.name.clone();
        let base = self
            .panes
            .get(self.focus)
            .cloned()
            .unwrap_or_else(|| PaneSettings::default_for(0, true, &[]));
        let (panes, focus) = (self.panes.len(), self.focus);
        let on_open = ctx.link().batch_callback(move |flags: Vec<String>| {
            messages(apply(&name, &flags, &base), panes, focus)
        });
        html! { <Advisor {input} {on_open} /> }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    #[test]
    fn flags_become_page_settings() {
        let base = PaneSettings::default_for(0, true, &[]);
        let a = apply(
            "m.onnx",
            &words("--strategy greedy-size-best-fit --schedule memory --alias-views --align 1 --padding none --io-reuse"),
            &base,
        );
        assert_eq!(a.schedule, Some(ScheduleOrder::Memory));
        assert!(a.alias_views);
        assert_eq!(a.pane.strategy, "greedy-size-best-fit");
        assert_eq!(a.pane.alignment, 1);
        assert!(!a.pane.ge_padding);
        assert!(!a.pane.zero_copy_io);
        assert!(a.cli_only.is_empty());
    }

    #[test]
    fn fusion_and_in_place_are_cli_only_and_tflite_keeps_tflm_rules() {
        let base = PaneSettings::default_for(0, true, &[]);
        let a = apply(
            "m.tflite",
            &words("--strategy portfolio --fuse pad,quantize --in-place depthwise"),
            &base,
        );
        assert_eq!(
            a.cli_only,
            vec!["--fuse pad,quantize", "--in-place depthwise"]
        );
        assert_eq!(a.schedule, None);
        // TFLM: 16-byte alignment, exact sizes, graph I/O in the arena
        assert_eq!(a.pane.alignment, 16);
        assert!(!a.pane.ge_padding);
        assert!(!a.pane.zero_copy_io);
    }
}
