//! The advisor off the main thread: the messages between the Advisor panel
//! (`src/advisor.rs`) and the planning web worker (`src/bin/plan_worker.rs`). The advisor
//! plans the model a dozen times or more (every lever, every heuristic), seconds on a large
//! model, so the panel runs it in a worker of its own. The file travels as `[header, bytes]`,
//! as a parse job's does, the header starting with [`ADVISE`]; the answer is [`ADVICE`]
//! followed by the JSON of a `Result<Advice, String>` (sizes are `u64`: JSON keeps them exact).

use memplan_core::import::load::Format;
use memplan_core::import::load::LoadOptions;
use memplan_core::report::advise::{advise, default_strategy, Advice};
use serde::{Deserialize, Serialize};

/// How an advise job's header starts (then the JSON of an [`AdviseJob`]).
pub const ADVISE: &str = "memplan:advise:";

/// How the worker's answer starts (then the JSON of a `Result<Advice, String>`).
pub const ADVICE: &str = "memplan:advice:";

/// The file's name and the page's shape settings (dims, gears, sizes; not levers).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdviseJob {
    /// The file's name (its extension selects the format, as on the CLI).
    pub name: String,
    /// Symbolic dims bound.
    pub dims: memplan_core::Bindings,
    /// Dynamic-batch gears (empty: none).
    pub gears: Vec<u64>,
    /// Tensor sizes given by the user, bytes.
    pub sizes: std::collections::BTreeMap<String, u64>,
}

impl AdviseJob {
    /// The load options the advisor starts from (no op order, views or rewrites: those are
    /// its levers).
    pub fn load_options(&self) -> LoadOptions {
        LoadOptions {
            dims: self.dims.clone(),
            gears: self.gears.clone(),
            sizes: self.sizes.clone(),
            ..LoadOptions::default()
        }
    }

    /// The advisor's rows for `bytes`, or the error naming the file.
    pub fn run(&self, bytes: &[u8]) -> Result<Advice, String> {
        // the CLI's `memplan advise` default (TFLM's planner for a .tflite), so that the
        // page's figures are the ones `memplan advise MODEL` prints
        let strategy = default_strategy(Format::detect(&self.name, bytes));
        advise(&self.name, bytes, &self.load_options(), strategy)
            .map_err(|e| format!("{}: {e}", self.name))
    }

    /// The header of this job's message.
    pub fn header(&self) -> String {
        // our own type always serializes
        format!(
            "{ADVISE}{}",
            serde_json::to_string(self).unwrap_or_default()
        )
    }
}

/// The worker's side: the answer message to a header and bytes, `None` when the header is
/// not an advise job's.
#[allow(dead_code)] // the worker's side; the page only reads answers
pub fn answer(header: &str, bytes: &[u8]) -> Option<String> {
    let json = header.strip_prefix(ADVISE)?;
    let result = serde_json::from_str::<AdviseJob>(json)
        .map_err(|e| format!("advisor: bad job: {e}"))
        .and_then(|job| job.run(bytes));
    Some(format!(
        "{ADVICE}{}",
        serde_json::to_string(&result).unwrap_or_default()
    ))
}

/// The page's side: the advisor's answer in a worker message, `None` for other messages.
pub fn read_answer(text: &str) -> Option<Result<Advice, String>> {
    let json = text.strip_prefix(ADVICE)?;
    Some(serde_json::from_str(json).unwrap_or_else(|e| Err(format!("advisor: bad answer: {e}"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_round_trips_through_the_worker_messages() {
        let job = AdviseJob {
            name: "mobilenet-v2-blocks.json".into(),
            dims: Default::default(),
            gears: vec![],
            sizes: Default::default(),
        };
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../static/samples/mobilenet-v2-blocks.json"
        );
        let bytes =
            std::fs::read(path).expect("sample file static/samples/mobilenet-v2-blocks.json");
        let text = answer(&job.header(), &bytes).expect("an advise header");
        let advice = read_answer(&text)
            .expect("an advice answer")
            .expect("advice");
        // as `memplan advise static/samples/mobilenet-v2-blocks.json` prints it
        assert_eq!(advice.baseline.peak, 10_241_536);
        // every row's figures travel exactly (the per cent may lose its last digit in JSON)
        let figures = |a: &Advice| -> Vec<(String, u64, i64)> {
            a.levers
                .iter()
                .map(|l| (l.name.clone(), l.peak, l.saving_bytes))
                .collect()
        };
        assert_eq!(figures(&advice), figures(&job.run(&bytes).unwrap()));
        assert_eq!(
            figures(&advice)[0],
            ("all combined".into(), 6_021_120, 4_220_416)
        );
        assert!(answer("{}", &bytes).is_none());
        assert!(read_answer("memplan:parsed:{}").is_none());
    }
}
