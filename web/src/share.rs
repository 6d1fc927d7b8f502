//! The page state in the URL fragment: `#v=1&z=<base64url(deflate(JSON))>`, then the planner
//! version that made the link (`&pv=0.1.0`, last, so older readers ignore it).
//!
//! The fragment is untrusted: [`decode`] caps every size before allocating, validates every
//! field, and returns a sentence for the first problem found. It never panics or loops.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use std::collections::BTreeMap;

use memplan_core::graph::ScheduleOrder;
use memplan_core::{Bindings, Problem};
use serde::{Deserialize, Serialize};

use crate::model::{MAX_BUFFERS, MAX_DIM, MAX_SYMBOLS};
use crate::settings::{Compare, PaneSettings, MAX_PANES};

/// The link format version this build writes.
pub const VERSION: u32 = 1;
/// The planner version this build records in its links (`pv=`): the workspace's version.
/// A plan's figures depend on the planner that made them, so a link from another version is
/// opened with a note saying its figures may differ ([`version_note`]).
pub const PLANNER_VERSION: &str = env!("CARGO_PKG_VERSION");
/// Longest planner version a link may carry, characters.
pub const MAX_PLANNER_VERSION: usize = 32;
/// Longest lowered model part (`m=`) a link is made with, characters: with the state it
/// stays under Chromium's 2 MiB limit on a URL (`url_constants.cc` `kMaxURLChars`).
pub const MAX_LINK: usize = 1_500_000;
/// Longest fragment accepted, characters ([`MAX_LINK`] and room for the state).
pub const MAX_FRAGMENT: usize = MAX_LINK + 512 * 1024;
/// Largest inflated payload accepted, bytes.
pub const MAX_PAYLOAD: usize = 8 * 1024 * 1024;
/// Largest inflated lowered model accepted, bytes (a 250k-buffer trace is about 20 MiB).
pub const MAX_MODEL_PAYLOAD: usize = 64 * 1024 * 1024;
/// A model file's text goes inline only if its deflated form is at most this many bytes;
/// a larger file (and every ONNX file) travels as its lowered problem ([`lowered_part`]).
pub const MAX_INLINE: usize = 8 * 1024;
/// Longest `?model=` URL accepted in a link.
pub const MAX_URL: usize = 2048;

/// Which model a link refers to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelRef {
    /// A built-in sample, by id.
    Sample(String),
    /// A URL to fetch.
    Url(String),
    /// The file's own text (JSON or CSV), when small.
    Text {
        /// File name.
        name: String,
        /// Contents.
        text: String,
    },
    /// The lowered problem, when small (links made before [`ModelRef::Lowered`]).
    Problem(Box<Problem>),
    /// A lowered model ([`crate::model::lowered_json`]) carried in the fragment's own part
    /// (`m=`, [`encode_lowered`]), never in the state's JSON.
    #[serde(skip)]
    Lowered {
        /// The model's file name (the state's `n`).
        name: String,
        /// The inflated JSON.
        json: Vec<u8>,
        /// The `m=` part as the link gave it, to make links of this view with.
        part: std::rc::Rc<str>,
    },
}

/// Everything a link reproduces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shared {
    /// The model, if the link carries one.
    #[serde(rename = "m", default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelRef>,
    /// Symbolic dim bindings.
    #[serde(rename = "b", default)]
    pub bindings: Bindings,
    /// Pane settings, in order.
    #[serde(rename = "p")]
    pub panes: Vec<PaneSettings>,
    /// Index of the pane the views show.
    #[serde(rename = "f", default)]
    pub focus: usize,
    /// Selected op step, if any.
    #[serde(rename = "t", default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u64>,
    /// Dynamic-batch gears (batch sizes), empty when off.
    #[serde(rename = "g", default, skip_serializing_if = "Vec::is_empty")]
    pub gears: Vec<u64>,
    /// The gear the timeline and table show.
    #[serde(rename = "sg", default, skip_serializing_if = "Option::is_none")]
    pub shown_gear: Option<u64>,
    /// Memory budget in bytes.
    #[serde(rename = "c", default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<u64>,
    /// Without a model: the name of the one the link leaves out (too large to carry), so that
    /// whoever opens it is told which model the settings are for.
    #[serde(rename = "n", default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
    /// The zoomed timeline window `[first step, one past the last, lowest offset, highest
    /// offset]` (steps and bytes); absent: the whole plan.
    #[serde(rename = "vw", default, skip_serializing_if = "Option::is_none")]
    pub view: Option<[f64; 4]>,
    /// View outputs (Reshape, Flatten, Squeeze, Unsqueeze, Identity) share their dying
    /// input's buffer, as runtimes do (the CLI's `--alias-views`); absent: off.
    #[serde(rename = "av", default, skip_serializing_if = "std::ops::Not::not")]
    pub alias_views: bool,
    /// The op order the model is lowered in (the CLI's `--schedule`: `file`, `ge-dfs` or `memory`);
    /// absent: the graph's own.
    #[serde(
        rename = "so",
        default,
        skip_serializing_if = "Option::is_none",
        with = "schedule_name"
    )]
    pub schedule: Option<ScheduleOrder>,
    /// Tensor sizes the user gave, bytes, by tensor name (the CLI's `--size`).
    #[serde(rename = "sz", default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sizes: BTreeMap<String, u64>,
    /// The tensor search text.
    #[serde(rename = "q", default, skip_serializing_if = "String::is_empty")]
    pub search: String,
    /// The table's sort: column name (`name`, `op`, `bytes`, `planned`, `start`, `end`,
    /// `offset`) and whether descending.
    #[serde(rename = "o", default, skip_serializing_if = "Option::is_none")]
    pub sort: Option<(String, bool)>,
    /// The selected tensor, by name.
    #[serde(rename = "sel", default, skip_serializing_if = "Option::is_none")]
    pub selected: Option<String>,
    /// The compare view (side by side on shared axes, or a diff against another pane);
    /// absent: one timeline.
    #[serde(rename = "cmp", default, skip_serializing_if = "Option::is_none")]
    pub compare: Option<Compare>,
}

/// The table columns a link may sort by.
pub const SORT_COLUMNS: [&str; 7] = ["name", "op", "bytes", "planned", "start", "end", "offset"];
/// Longest search text or tensor name a link may carry, bytes.
pub const MAX_SEARCH: usize = 256;

/// Longest name of a left-out model a link may carry, bytes.
pub const MAX_NAME: usize = 256;

/// The name of an inline model, for a link that has to leave it out.
fn model_name(m: &ModelRef) -> Option<String> {
    match m {
        ModelRef::Text { name, .. } => Some(name.clone()),
        ModelRef::Problem(p) => Some(p.name.clone()),
        ModelRef::Lowered { name, .. } => Some(name.clone()),
        ModelRef::Sample(_) | ModelRef::Url(_) => None,
    }
}

/// `name` cut to at most [`MAX_NAME`] bytes, on a character boundary.
pub fn short_name(name: &str) -> String {
    let mut end = name.len().min(MAX_NAME);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name[..end].to_string()
}

fn deflate(bytes: &[u8]) -> Vec<u8> {
    miniz_oxide::deflate::compress_to_vec(bytes, 9)
}

/// Encodes `state` (a lowered model in its own part, [`encode_lowered`]); if its model does not deflate to [`MAX_INLINE`] bytes the model is left
/// out (its name kept in [`Shared::missing`]), and the second value is `false`.
pub fn encode(state: &Shared) -> (String, bool) {
    if let Some(ModelRef::Lowered { name, part, .. }) = &state.model {
        return (encode_lowered(state, name, part), true);
    }
    let json = serde_json::to_vec(state).unwrap_or_default();
    let z = deflate(&json);
    let inline_model = matches!(
        state.model,
        Some(ModelRef::Text { .. } | ModelRef::Problem(_))
    );
    if inline_model && z.len() > MAX_INLINE {
        let mut lean = state.clone();
        lean.missing = lean
            .missing
            .take()
            .or_else(|| lean.model.as_ref().and_then(model_name))
            .map(|n| short_name(&n));
        lean.model = None;
        let json = serde_json::to_vec(&lean).unwrap_or_default();
        return (with_planner_version(&pack(&deflate(&json))), false);
    }
    (with_planner_version(&pack(&z)), true)
}

/// The `m=` part of a link carrying `built` (of file `name`'s model) lowered: base64url of
/// its deflated [`crate::model::lowered_json`]; `Err` with the part's length in characters
/// when over [`MAX_LINK`].
pub fn lowered_part(built: &crate::model::Built) -> Result<String, usize> {
    // level 3: 62k buffers deflate in 70 ms (level 9: 380 ms) to 8% more bytes
    let z = miniz_oxide::deflate::compress_to_vec(&crate::model::lowered_json(built), 3);
    let part = URL_SAFE_NO_PAD.encode(z);
    if part.len() > MAX_LINK {
        return Err(part.len());
    }
    Ok(part)
}

/// Encodes `state` (whose model is `None`) with the lowered model `part` of
/// [`lowered_part`] (`name` its file name, kept in [`Shared::missing`]).
pub fn encode_lowered(state: &Shared, name: &str, part: &str) -> String {
    let mut s = state.clone();
    s.model = None;
    s.missing = Some(short_name(name));
    let json = serde_json::to_vec(&s).unwrap_or_default();
    with_planner_version(&format!("{}&m={part}", pack(&deflate(&json))))
}

/// A fragment carrying `json` as the page packs its state (deflated, base64url): for tests
/// and fuzzing, which craft states [`Shared`] would not serialise.
pub fn pack_json(json: &[u8]) -> String {
    pack(&deflate(json))
}

fn pack(z: &[u8]) -> String {
    format!("v={VERSION}&z={}", URL_SAFE_NO_PAD.encode(z))
}

/// `fragment` with this build's planner version appended (`&pv=`).
pub fn with_planner_version(fragment: &str) -> String {
    format!("{fragment}&pv={PLANNER_VERSION}")
}

/// The planner version a fragment records (`pv=`), if any and well formed (at most
/// [`MAX_PLANNER_VERSION`] characters of `0-9 A-Z a-z . + -`).
pub fn planner_version(fragment: &str) -> Option<&str> {
    let f = fragment.strip_prefix('#').unwrap_or(fragment);
    f.split('&')
        .filter_map(|p| p.strip_prefix("pv="))
        .find(|v| {
            !v.is_empty()
                && v.len() <= MAX_PLANNER_VERSION
                && v.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-'))
        })
}

/// For a link made by another planner version (or before links recorded one), a sentence
/// saying so: its figures may differ from those it showed. `None` when the versions agree.
pub fn version_note(fragment: &str) -> Option<String> {
    match planner_version(fragment) {
        Some(PLANNER_VERSION) => None,
        Some(v) => Some(format!(
            "This link was made by planner version {v}; this is {PLANNER_VERSION}, so its \
             figures may differ from those it showed."
        )),
        None => Some(format!(
            "This link does not record its planner version (made before links did); this is \
             {PLANNER_VERSION}, so its figures may differ from those it showed."
        )),
    }
}

/// Decodes a fragment (with or without the leading `#`).
///
/// # Errors
/// A sentence saying what is wrong with the link.
pub fn decode(fragment: &str) -> Result<Shared, String> {
    let f = fragment.strip_prefix('#').unwrap_or(fragment);
    if f.len() > MAX_FRAGMENT {
        return Err(format!(
            "the link's state is {} characters long; at most {MAX_FRAGMENT} are read",
            f.len()
        ));
    }
    let mut version = None;
    let mut z = None;
    let mut m = None;
    for part in f.split('&') {
        match part.split_once('=') {
            Some(("v", v)) => version = Some(v),
            Some(("z", v)) => z = Some(v),
            Some(("m", v)) => m = Some(v),
            _ => {}
        }
    }
    let version = version.ok_or("the link's state has no version (v=)")?;
    match version.parse::<u32>() {
        Ok(VERSION) => {}
        Ok(n) if n > VERSION => {
            return Err(format!(
            "the link was made by a newer playground (state version {n}; this one reads {VERSION})"
        ))
        }
        _ => {
            return Err(format!(
                "unknown link state version '{}'",
                version.chars().take(16).collect::<String>()
            ))
        }
    }
    let z = z.ok_or("the link's state has no data (z=)")?;
    let bytes = URL_SAFE_NO_PAD
        .decode(z.trim_end_matches('='))
        .map_err(|e| format!("the link's state is not valid base64url ({e})"))?;
    let json = miniz_oxide::inflate::decompress_to_vec_with_limit(&bytes, MAX_PAYLOAD).map_err(
        |e| match e.status {
            miniz_oxide::inflate::TINFLStatus::HasMoreOutput => format!(
                "the link's state inflates to more than {} MiB, the most a link may carry",
                MAX_PAYLOAD >> 20
            ),
            _ => "the link's state does not inflate (not deflate data: the link is damaged)"
                .to_string(),
        },
    )?;
    let mut state: Shared =
        serde_json::from_slice(&json).map_err(|e| format!("the link's state is not valid: {e}"))?;
    check(&state)?;
    if let Some(part) = m {
        if state.model.is_some() {
            return Err("the link carries two models (m= and one in its state)".into());
        }
        let bytes = URL_SAFE_NO_PAD
            .decode(part.trim_end_matches('='))
            .map_err(|e| format!("the link's model is not valid base64url ({e})"))?;
        let json = miniz_oxide::inflate::decompress_to_vec_with_limit(&bytes, MAX_MODEL_PAYLOAD)
            .map_err(|e| match e.status {
                miniz_oxide::inflate::TINFLStatus::HasMoreOutput => format!(
                    "the link's model inflates to more than {} MiB, the most a link may carry",
                    MAX_MODEL_PAYLOAD >> 20
                ),
                _ => "the link's model does not inflate (not deflate data: the link is damaged)"
                    .to_string(),
            })?;
        state.model = Some(ModelRef::Lowered {
            name: state.missing.take().unwrap_or_else(|| "model".into()),
            json,
            part: part.into(),
        });
    }
    Ok(state)
}

fn check(s: &Shared) -> Result<(), String> {
    if s.panes.is_empty() || s.panes.len() > MAX_PANES {
        return Err(format!(
            "the link asks for {} panes (1 to {MAX_PANES})",
            s.panes.len()
        ));
    }
    for (i, p) in s.panes.iter().enumerate() {
        p.check().map_err(|e| format!("pane {}: {e}", i + 1))?;
    }
    if s.focus >= s.panes.len() {
        return Err(format!(
            "the link focuses pane {} of {}",
            s.focus + 1,
            s.panes.len()
        ));
    }
    if s.gears.len() > crate::model::MAX_GEARS || s.gears.iter().any(|&g| g == 0 || g > MAX_DIM) {
        return Err(format!(
            "the link's gears must be at most {} batch sizes from 1 to {MAX_DIM}",
            crate::model::MAX_GEARS
        ));
    }
    if s.sizes.len() > MAX_SYMBOLS || s.sizes.keys().any(|k| k.is_empty() || k.len() > MAX_SEARCH) {
        return Err(format!(
            "the link gives {} tensor sizes (at most {MAX_SYMBOLS}, names of 1 to {MAX_SEARCH} bytes)",
            s.sizes.len()
        ));
    }
    if s.bindings.len() > MAX_SYMBOLS {
        return Err(format!(
            "the link binds {} dims (at most {MAX_SYMBOLS})",
            s.bindings.len()
        ));
    }
    for (k, v) in &s.bindings {
        if k.is_empty() || k.len() > 128 {
            return Err("a dim name in the link is empty or longer than 128 bytes".into());
        }
        if *v == 0 || *v > MAX_DIM {
            return Err(format!("dim '{k}' = {v} is out of range (1 to {MAX_DIM})"));
        }
    }
    if let Some(v) = s.view {
        if v.iter().any(|x| !x.is_finite() || *x < 0.0) || v[0] >= v[1] || v[2] >= v[3] {
            return Err("the link's zoom window is not a valid range of steps and bytes".into());
        }
    }
    if s.search.len() > MAX_SEARCH || s.selected.as_ref().is_some_and(|n| n.len() > MAX_SEARCH) {
        return Err(format!(
            "the link's search text or tensor name is longer than {MAX_SEARCH} bytes"
        ));
    }
    if let Some((col, _)) = &s.sort {
        if !SORT_COLUMNS.contains(&col.as_str()) {
            return Err(format!(
                "the link sorts by an unknown column (one of: {})",
                SORT_COLUMNS.join(", ")
            ));
        }
    }
    if let Some(c) = s.compare {
        if c.with >= s.panes.len() {
            return Err(format!(
                "the link compares with pane {} of {}",
                c.with + 1,
                s.panes.len()
            ));
        }
    }
    if s.missing.as_ref().is_some_and(|n| n.len() > MAX_NAME) {
        return Err(format!(
            "the link's model name is longer than {MAX_NAME} bytes"
        ));
    }
    match &s.model {
        Some(ModelRef::Sample(id)) if crate::samples::find(id).is_none() => Err(format!(
            "the link names sample '{}', which this version does not have",
            id.chars().take(64).collect::<String>()
        )),
        Some(ModelRef::Url(u))
            if u.len() > MAX_URL || !(u.starts_with("https://") || u.starts_with("http://")) =>
        {
            Err("the link's model URL is not an http(s) URL of at most 2048 characters".into())
        }
        Some(ModelRef::Problem(p)) => {
            if p.buffers.len() > MAX_BUFFERS {
                return Err(format!(
                    "the link's problem has {} buffers",
                    p.buffers.len()
                ));
            }
            p.check()
                .map_err(|e| format!("the link's problem is invalid: {e}"))
        }
        _ => Ok(()),
    }
}

/// A schedule in a link by its `memplan.graph/1` name ([`ScheduleOrder::name`]); an unknown
/// name is an invalid link, not a silent file order.
mod schedule_name {
    use memplan_core::graph::ScheduleOrder;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(o: &Option<ScheduleOrder>, s: S) -> Result<S::Ok, S::Error> {
        match o {
            Some(o) => s.serialize_str(o.name()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ScheduleOrder>, D::Error> {
        let name = String::deserialize(d)?;
        ScheduleOrder::from_name(&name)
            .map(Some)
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memplan_core::Buffer;

    fn state() -> Shared {
        Shared {
            model: Some(ModelRef::Sample(crate::samples::DEFAULT_SAMPLE.into())),
            bindings: [("batch".to_string(), 4u64)].into_iter().collect(),
            panes: vec![
                PaneSettings::default_for(0, true, &[]),
                PaneSettings::default_for(1, true, &[]),
            ],
            focus: 1,
            step: Some(7),
            gears: vec![1, 2, 4, 8],
            shown_gear: Some(4),
            budget: Some(200 << 20),
            missing: None,
            view: Some([10.0, 42.5, 0.0, 1e6]),
            alias_views: true,
            schedule: Some(ScheduleOrder::GeDfs),
            sizes: [("x".to_string(), 4096u64)].into_iter().collect(),
            search: "conv".into(),
            sort: Some(("offset".into(), true)),
            selected: Some("conv1_out".into()),
            compare: None,
        }
    }

    #[test]
    fn an_optimal_panes_time_limit_travels_in_links() {
        let mut s = state();
        s.panes[1].strategy = "optimal".into();
        s.panes[1].time_limit_ms = Some(1500);
        let back = decode(&encode(&s).0).unwrap();
        assert_eq!(back.panes[1].time_limit_ms, Some(1500));
        assert_eq!(back.panes[1].options().time_limit_ms, 1500);
        // left out when not given: links from before read as core's default (2 s)
        assert_eq!(back.panes[0].time_limit_ms, None);
        assert_eq!(back.panes[0].options().time_limit_ms, 2000);
        assert_eq!(back, s);
        // a limit out of range is refused like any bad pane setting
        let mut bad = s.panes[1].clone();
        bad.time_limit_ms = Some(0);
        assert!(bad.check().unwrap_err().contains("time limit"));
    }

    #[test]
    fn the_compare_view_travels_in_links_and_a_missing_pane_is_refused() {
        use crate::settings::CompareMode;
        for mode in [CompareMode::Side, CompareMode::Diff] {
            let s = Shared {
                compare: Some(Compare { mode, with: 0 }),
                ..state()
            };
            let back = decode(&encode(&s).0).unwrap();
            assert_eq!(back.compare, Some(Compare { mode, with: 0 }));
            assert_eq!(back, s);
        }
        // the JSON a link carries: short keys, the mode by name
        let json = serde_json::to_string(&Compare {
            mode: CompareMode::Diff,
            with: 1,
        })
        .unwrap();
        assert_eq!(json, r#"{"m":"diff","w":1}"#);
        // links from before the compare view open with one timeline
        assert_eq!(decode(&encode(&state()).0).unwrap().compare, None);
        // state() has two panes: pane 3 does not exist
        let bad = Shared {
            compare: Some(Compare {
                mode: CompareMode::Diff,
                with: 2,
            }),
            ..state()
        };
        assert!(decode(&encode(&bad).0)
            .unwrap_err()
            .contains("compares with pane 3"));
        let e = decode(&pack_json(
            br#"{"cmp":{"m":"sideways"},"p":[{"s":"no-reuse","a":1,"g":false,"r":true,"z":true,"c":true}]}"#,
        ))
        .unwrap_err();
        assert!(e.contains("not valid"), "{e}");
    }

    #[test]
    fn a_diff_falls_back_to_another_pane() {
        use crate::settings::CompareMode;
        let c = Compare {
            mode: CompareMode::Diff,
            with: 1,
        };
        assert_eq!(c.other(0, 3), Some(1));
        // compared with itself, or with a pane since removed: the first other pane
        assert_eq!(c.other(1, 3), Some(0));
        assert_eq!(Compare { with: 5, ..c }.other(2, 3), Some(0));
        assert_eq!(c.other(0, 1), None);
    }

    #[test]
    fn zoom_search_sort_and_selection_travel_and_are_checked() {
        let s = state();
        assert_eq!(decode(&encode(&s).0).unwrap(), s);
        for (f, what) in [
            (
                Shared {
                    view: Some([5.0, 5.0, 0.0, 1.0]),
                    ..state()
                },
                "zoom window",
            ),
            (
                Shared {
                    view: Some([-1.0, 3.0, 0.0, 1.0]),
                    ..state()
                },
                "zoom window",
            ),
            (
                Shared {
                    sort: Some(("evil".into(), false)),
                    ..state()
                },
                "unknown column",
            ),
            (
                Shared {
                    search: "x".repeat(MAX_SEARCH + 1),
                    ..state()
                },
                "search text",
            ),
        ] {
            let e = decode(&encode(&f).0).unwrap_err();
            assert!(e.contains(what), "{e}");
        }
    }

    #[test]
    fn runtime_knobs_travel_in_links_and_bad_ones_are_refused() {
        let mut s = state();
        let mut pane = PaneSettings::default_for(0, true, &[]);
        pane.strategy = "runtime-acl-tiered".into();
        pane.knobs.set("levels", "L1=4096,DDR=inf").unwrap();
        pane.knobs.set("policy", "fastest").unwrap();
        pane.knobs.set("no-stats", "true").unwrap();
        s.panes = vec![pane.clone()];
        s.focus = 0;
        let (f, _) = encode(&s);
        assert_eq!(decode(&f).unwrap().panes, vec![pane.clone()]);
        // a hostile link: a level list the parser refuses, an oversized mapping
        let mut bad = pane.clone();
        bad.knobs.levels = "L1=lots".into();
        s.panes = vec![bad];
        let e = decode(&encode(&s).0).unwrap_err();
        assert!(e.contains("pane 1") && e.contains("levels"), "{e}");
        let mut bad = pane;
        bad.knobs.map = "x=L1,".repeat(1000);
        s.panes = vec![bad];
        assert!(decode(&encode(&s).0).unwrap_err().contains("map"));
    }

    #[test]
    fn links_record_the_planner_version_and_another_one_is_noted() {
        let (f, _) = encode(&state());
        // appended last: `v=1&z=…` stays the link's head, older readers skip the part
        assert!(f.starts_with("v=1&z="), "{f}");
        assert!(f.ends_with(&format!("&pv={PLANNER_VERSION}")), "{f}");
        assert_eq!(planner_version(&f), Some(PLANNER_VERSION));
        assert_eq!(version_note(&f), None);
        assert_eq!(decode(&f).unwrap(), decode(&f).unwrap());
        // another version, and a link made before links recorded one
        let other = f.replace(&format!("pv={PLANNER_VERSION}"), "pv=0.0.9");
        assert!(decode(&other).is_ok());
        let note = version_note(&other).unwrap();
        assert!(
            note.contains("planner version 0.0.9") && note.contains("may differ"),
            "{note}"
        );
        let old = f.split("&pv=").next().unwrap().to_string();
        assert!(version_note(&old).unwrap().contains("does not record"));
        // a hostile version is not echoed
        let bad = format!("{old}&pv=<script>");
        assert_eq!(planner_version(&bad), None);
        let long = format!("{old}&pv={}", "9".repeat(MAX_PLANNER_VERSION + 1));
        assert_eq!(planner_version(&long), None);
        // a lowered model's part keeps its place right after the state
        let l = encode_lowered(&state(), "m.onnx", "AAAA");
        assert!(l.contains("&m=AAAA&pv="), "{l}");
    }

    #[test]
    fn the_op_order_travels_and_an_unknown_one_is_refused() {
        let s = state();
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains(r#""so":"ge-dfs""#), "{json}");
        assert_eq!(
            decode(&encode(&s).0).unwrap().schedule,
            Some(ScheduleOrder::GeDfs)
        );
        let none = Shared {
            schedule: None,
            ..state()
        };
        assert!(!serde_json::to_string(&none).unwrap().contains(r#""so""#));
        let memory = Shared {
            schedule: Some(ScheduleOrder::Memory),
            ..state()
        };
        assert!(serde_json::to_string(&memory)
            .unwrap()
            .contains(r#""so":"memory""#));
        assert_eq!(
            decode(&encode(&memory).0).unwrap().schedule,
            Some(ScheduleOrder::Memory)
        );
        let bad = json.replace(r#""so":"ge-dfs""#, r#""so":"bfs""#);
        let e = decode(&pack_json(bad.as_bytes())).unwrap_err();
        assert!(e.contains("unknown schedule 'bfs'"), "{e}");
    }

    #[test]
    fn bad_gears_are_refused() {
        for gears in [vec![0], vec![1; 17], vec![MAX_DIM + 1]] {
            let mut s = state();
            s.gears = gears;
            let (f, _) = encode(&s);
            let e = decode(&f).unwrap_err();
            assert!(e.contains("gears"), "{e}");
        }
    }

    #[test]
    fn round_trips() {
        let s = state();
        let (f, whole) = encode(&s);
        assert!(whole);
        assert!(f.starts_with("v=1&z="));
        assert_eq!(decode(&format!("#{f}")).unwrap(), s);
    }

    #[test]
    fn small_problems_go_inline_large_ones_do_not() {
        let mut s = state();
        s.model = Some(ModelRef::Problem(Box::new(Problem::from_buffers(
            "p",
            vec![Buffer::new("a", 4, 0, 1), Buffer::new("b", 8, 1, 2)],
        ))));
        let (f, whole) = encode(&s);
        assert!(whole);
        assert_eq!(decode(&f).unwrap(), s);
        // 20k pseudo-random buffers cannot deflate into 8 KB
        let mut x = 12345u64;
        let bufs = (0..20_000)
            .map(|i| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                Buffer::new(format!("t{i}_{x:x}"), x >> 40, 0, 1)
            })
            .collect();
        s.model = Some(ModelRef::Problem(Box::new(Problem::from_buffers(
            "big", bufs,
        ))));
        let (f, whole) = encode(&s);
        assert!(!whole);
        let back = decode(&f).unwrap();
        assert_eq!(back.model, None);
        // the link says which model it leaves out
        assert_eq!(back.missing.as_deref(), Some("big"));
        assert_eq!(back.panes, s.panes);
    }

    #[test]
    fn a_link_without_its_model_names_it() {
        let mut s = state();
        s.model = None;
        s.missing = Some("bert_base_randinit.stripped.onnx".into());
        let (f, whole) = encode(&s);
        assert!(whole);
        assert_eq!(decode(&f).unwrap(), s);
        // links from before the name was carried still open
        s.missing = None;
        let (f, _) = encode(&s);
        assert_eq!(decode(&f).unwrap().missing, None);
        s.missing = Some("x".repeat(MAX_NAME + 1));
        let (f, _) = encode(&s);
        assert!(decode(&f).unwrap_err().contains("name"));
        assert_eq!(short_name(&format!("a{}", "é".repeat(200))).len(), 255);
    }

    #[test]
    fn bad_fragments_are_sentences() {
        let cases: Vec<(String, &str)> = vec![
            ("".into(), "no version"),
            ("v=2&z=AAAA".into(), "newer playground"),
            ("v=x".into(), "unknown link state version"),
            ("v=1".into(), "no data"),
            ("v=1&z=!!!".into(), "base64url"),
            ("v=1&z=AAAA".into(), "inflate"),
            (pack(&deflate(b"{\"p\":[]}")), "panes"),
            (pack(&deflate(b"[1,2")), "not valid"),
            (
                pack(&deflate(br#"{"p":[{"s":"nope","a":1,"g":false,"r":true,"z":true,"c":true}]}"#)),
                "unknown strategy",
            ),
            (
                pack(&deflate(
                    br#"{"p":[{"s":"no-reuse","a":0,"g":false,"r":true,"z":true,"c":true}]}"#,
                )),
                "alignment 0",
            ),
            (
                pack(&deflate(br#"{"m":{"sample":"zzz"},"p":[{"s":"no-reuse","a":1,"g":false,"r":true,"z":true,"c":true}]}"#)),
                "sample 'zzz'",
            ),
            (
                pack(&deflate(br#"{"m":{"url":"javascript:alert(1)"},"p":[{"s":"no-reuse","a":1,"g":false,"r":true,"z":true,"c":true}]}"#)),
                "http(s)",
            ),
            (
                pack(&deflate(br#"{"b":{"batch":0},"p":[{"s":"no-reuse","a":1,"g":false,"r":true,"z":true,"c":true}]}"#)),
                "out of range",
            ),
            (
                pack(&deflate(br#"{"m":{"problem":{"buffers":[{"name":"a","size":1,"start":3,"end":1}],"steps":4}},"p":[{"s":"no-reuse","a":1,"g":false,"r":true,"z":true,"c":true}]}"#)),
                "problem is invalid",
            ),
        ];
        for (f, want) in cases {
            let e = decode(&f).unwrap_err();
            assert!(e.contains(want), "{f}: {e}");
        }
    }

    #[test]
    fn a_model_too_large_to_inline_travels_lowered_and_builds_back_the_same() {
        use crate::model::{self, Origin, Source};
        // resnet50 with gears: graph, ops, shapes, gear copies (model.rs tests give its figures)
        let src = Source::new(
            "resnet50.onnx",
            Origin::File,
            model::tests::sample_bytes("resnet50_randinit.stripped.onnx"),
        )
        .unwrap();
        let bindings: Bindings = [("batch".to_string(), 1u64)].into_iter().collect();
        let b = model::build(&src, &bindings, &[1, 2]).unwrap();
        let part = lowered_part(&b).unwrap();
        let mut s = state();
        s.model = None;
        s.gears = vec![1, 2];
        let f = encode_lowered(&s, "resnet50.onnx", &part);
        let back = decode(&f).unwrap();
        let Some(ModelRef::Lowered {
            name,
            json,
            part: p,
        }) = back.model.clone()
        else {
            panic!("no lowered model: {:?}", back.model);
        };
        assert_eq!(name, "resnet50.onnx");
        assert_eq!(&*p, part.as_str());
        // links made from the reopened view are the same link
        assert_eq!(encode(&back).0, f);
        let lowered = Source {
            format: model::Format::Lowered,
            ..Source::new(&name, Origin::Link, json).unwrap()
        };
        let mut again = model::build(&lowered, &bindings, &[1, 2]).unwrap();
        assert!(again.lowered);
        again.lowered = false;
        assert_eq!(again, b);
        // a damaged or lying model part is a sentence, not a panic
        let cut = &f[..f.len() - 40];
        assert!(
            decode(cut).is_err() || {
                let Some(ModelRef::Lowered { json, .. }) = decode(cut).unwrap().model else {
                    unreachable!()
                };
                model::from_lowered_json(&json).is_err()
            }
        );
        let mut lie = b.clone();
        lie.info.pop();
        let json = model::lowered_json(&lie);
        let e = model::from_lowered_json(&json).unwrap_err();
        assert!(e.contains("table entries"), "{e}");
        // gears it does not have, more steps than it spans (found by a new user's try)
        let mut lie = b.clone();
        lie.problem.buffers[0].gear = Some(7);
        let e = model::from_lowered_json(&model::lowered_json(&lie)).unwrap_err();
        assert!(e.contains("gear 7"), "{e}");
        let mut lie = b.clone();
        lie.problem.steps = u64::MAX;
        let e = model::from_lowered_json(&model::lowered_json(&lie)).unwrap_err();
        assert!(e.contains("steps"), "{e}");
    }

    /// A trace of the size of issue 15's largest (62,185 buffers, as e2e/traces.mjs shapes
    /// them): its lowered part fits a link.
    #[test]
    // the trace's steps and sizes are small non-negative floats floored, as traces.mjs does
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    fn a_large_trace_fits_a_link_lowered() {
        use crate::model::{self, Origin, Source};
        let mut x = 1u32;
        let mut rand = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            f64::from(x) / 4_294_967_296.0
        };
        let n = 62_185u64;
        let steps = n / 2;
        let mut csv = String::from("id,lower,upper,size\n");
        for i in 0..n {
            let start = (i / 2 + (rand() * 4.0) as u64).min(steps - 1);
            let long = rand() < 0.02;
            let len = if long {
                (rand() * steps as f64 / 4.0) as u64
            } else {
                (-(1.0 - rand()).ln() * 4.0) as u64
            };
            let end = steps.min(start + 1 + len);
            let size = (64.0f64.ln() + rand() * (f64::from(16u32 << 20).ln() - 64.0f64.ln()))
                .exp()
                .max(64.0) as u64;
            csv.push_str(&format!("t{i},{start},{end},{size}\n"));
        }
        let src = Source::new("trace.csv", Origin::File, csv.into_bytes()).unwrap();
        let b = model::build(&src, &Bindings::new(), &[]).unwrap();
        let part = lowered_part(&b).unwrap();
        // 865,619 characters when written (native: 0.1 s)
        assert!(part.len() <= MAX_LINK, "{}", part.len());
    }

    #[test]
    fn a_zip_bomb_is_capped() {
        let big = vec![b' '; MAX_PAYLOAD + 10];
        let e = decode(&pack(&deflate(&big))).unwrap_err();
        assert!(e.contains("inflate"), "{e}");
    }

    /// The share-fragment fuzz target's seeds (`fuzz/seeds/share_fragment`, first byte 0: the
    /// rest is a JSON state) are accepted states, so the fuzzer starts past the field checks.
    #[test]
    fn the_fuzz_seeds_are_accepted_states() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/seeds/share_fragment");
        let mut accepted = 0;
        for entry in std::fs::read_dir(dir).expect("the fuzz seeds are in the repository") {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
            if let Some((0, json)) = bytes.split_first() {
                let state = decode(&pack_json(json)).unwrap();
                assert_eq!(decode(&encode(&state).0).unwrap(), state);
                accepted += 1;
            }
        }
        assert!(accepted >= 4, "{accepted} seeds");
    }
}
