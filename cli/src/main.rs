//! `memplan`: plan, compare, validate and inspect static memory plans from the command line.

#[macro_use]
mod term;
mod load;
mod simulate;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand, ValueEnum};
use memplan_core::report::analysis::{self, Analysis};
use memplan_core::report::plan_file::{self as report, Extras, PlanEntry, PlanFile, Run};
use memplan_core::strategy::Ctx;
use memplan_core::{units, Error, ErrorKind, Padding, Plan, PlanOptions, Problem};

use memplan_core::import::load::{LoadOptions, Loaded};

#[derive(Parser)]
#[command(
    name = "memplan",
    version,
    about = "Static memory planner for neural-network graphs",
    after_help = "Examples:
  memplan plan model.onnx --dim batch=1
  memplan plan model.onnx --strategy ge-block --strategy greedy-size-best-fit --align 64
  memplan plan static/samples/ge-diamond.json --format json --out plan.json
  memplan plan model.onnx --batch 1,2,4,8          # dynamic batch: gears overlaid
  memplan plan model.tflite -s tflm-greedy          # TFLite: TFLM's rules and head
  memplan plan buffers.csv                          # MiniMalloc CSV, exact sizes
  memplan validate plan.json
  memplan strategies"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Plan an input (ONNX, TFLite, memplan JSON graph, MiniMalloc CSV) with one or more
    /// strategies.
    Plan(PlanArgs),
    /// List the strategies.
    Strategies,
    /// Replay the tensor trace through a runtime allocator (allocate at the producer's step,
    /// free after the last use) and report peak, allocations, frees, fragmentation, leaks.
    /// Exit status 3 when an allocation failed (the memory given did not suffice).
    Simulate(SimArgs),
    /// What would it take to need less: every lever (op order, fusion, views, in-place,
    /// alignment, padding, graph I/O in the arena, strategy) alone and all combined, each
    /// planned as `memplan plan` with the flags shown, sorted by saving. A TFLite model: only
    /// the levers TFLM can take, against TFLM's own planner (tflm-greedy).
    Advise {
        /// Input file: .onnx, .tflite, .json (memplan.graph/1) or .csv (MiniMalloc).
        input: PathBuf,
        #[command(flatten)]
        shape: ShapeArgs,
        /// The strategy every row is planned with (a heuristic; the strategy row tries them
        /// all). Default: tflm-greedy for a TFLite model (what TFLM runs), else portfolio.
        #[arg(long = "strategy", short = 's')]
        strategy: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value = "table")]
        format: SimFormat,
    },
    /// Show what the ONNX importer read: opset, ops, inputs and outputs with symbolic and bound
    /// shapes, weights, unbound dims, tensors whose shape could not be inferred, warnings. For a
    /// TFLite model: subgraphs, operators, weights, TFLM's persistent tensors, the offline plan.
    Inspect {
        /// The ONNX or TFLite file.
        input: PathBuf,
        /// Bind a symbolic dim: NAME=VALUE (repeatable).
        #[arg(long = "dim", value_name = "NAME=VALUE")]
        dims: Vec<String>,
        /// Set a graph input's whole shape: NAME=1x3x224x224 (repeatable).
        #[arg(long = "input", value_name = "NAME=SHAPE")]
        inputs: Vec<String>,
        /// Also list every tensor: name, dtype, shape, weight or not.
        #[arg(long)]
        tensors: bool,
    },
    /// Check every plan of a `memplan.plan/1` JSON file with the independent validator.
    Validate {
        /// The plan file (`memplan plan ... --format json`).
        plan: PathBuf,
        /// Also check each plan against this model, loaded again with the flags below (the
        /// ones it was planned with): the same buffers, live ranges, gears and memory types,
        /// and planned bytes at least each tensor's.
        #[arg(long, value_name = "FILE")]
        model: Option<PathBuf>,
        #[command(flatten)]
        shape: ShapeArgs,
        /// With --model: the gears the plan was made with (`memplan plan --batch`).
        #[arg(long, value_delimiter = ',', requires = "model")]
        batch: Vec<u64>,
        /// With --model: the batch dim the plan was made with (`memplan plan --batch-dim`).
        #[arg(long, requires = "model")]
        batch_dim: Option<String>,
    },
}

/// `--allocator` values: the core's runtime allocator registry, plus `tiered` (whole-life
/// placement in levels, `memplan_core::simulate::tiered`).
fn allocator_names() -> Vec<&'static str> {
    memplan_core::simulate::registry::allocators()
        .iter()
        .map(|a| a.name)
        .chain(["tiered"])
        .collect()
}

#[derive(clap::Args)]
struct SimArgs {
    /// Input file: .onnx, .tflite, .json (memplan.graph/1) or .csv (MiniMalloc).
    input: PathBuf,
    /// Allocator to simulate (repeatable): pool, reuse, bfc, acl-pool, acl-tiered, ge-v1,
    /// ge-v2, ge-v2-streams (the runtime registry) or tiered; default: pool, reuse and bfc.
    #[arg(long = "allocator", short = 'a', value_parser = clap::builder::PossibleValuesParser::new(allocator_names()))]
    allocators: Vec<String>,
    /// pool: pool size in bytes (default: every tensor rounded up to whole blocks, summed, so
    /// the pool never runs out).
    #[arg(long)]
    pool_size: Option<u64>,
    /// pool, acl-pool: block size in bytes (pool default 2 MiB; acl-pool default the largest
    /// tensor rounded up to 64 B).
    #[arg(long)]
    block_size: Option<u64>,
    /// acl-pool: number of blocks (default one per tensor: never exhausted).
    #[arg(long)]
    num_blocks: Option<u64>,
    /// reuse: most buffers in its table.
    #[arg(long, default_value_t = 4096)]
    table_capacity: u64,
    /// Alignment / rounding of requests, bytes (reuse manager and BFC).
    #[arg(long, default_value_t = 512)]
    align: u64,
    /// Tensor padding before each request: none (raw sizes) or ge (ceil32(bytes) + 32, as
    /// the playground's runtime panes request by default for graphs).
    #[arg(long, value_enum, default_value = "none")]
    padding: PaddingArg,
    /// tiered, acl-tiered: levels, fastest first: NAME=BYTES,... (the last may be NAME=inf).
    #[arg(long, default_value = "L1=1048576,L2=8388608,L3=33554432,DDR=inf")]
    levels: String,
    /// acl-tiered: block size of every level, bytes.
    #[arg(long, default_value_t = 64)]
    tier_block_size: u64,
    /// acl-tiered: how the caller picks a level: frequency (uses per step) or fastest.
    #[arg(long, default_value = "frequency")]
    policy: String,
    /// acl-tiered: ask level LEVEL for tensor TENSOR (repeatable; overrides the policy).
    #[arg(long = "map", value_name = "TENSOR=LEVEL")]
    mapping: Vec<String>,
    /// ge-v1, ge-v2: page size in bytes (ge-v1 default 2 MiB, ge-v2 default 64 KiB).
    #[arg(long)]
    page_size: Option<u64>,
    /// ge-v2: total threshold in bytes (default 30 GiB).
    #[arg(long)]
    threshold: Option<u64>,
    /// Statistics off (only offsets and failures).
    #[arg(long)]
    no_stats: bool,
    /// Leak detector off (no per-allocation records, no leaks).
    #[arg(long)]
    no_leak_detector: bool,
    /// Leak detector: most records held at once (default unbounded). An allocation made with
    /// the table full is not recorded, so its leak is missed (the acl-adapter article's
    /// fixed record table).
    #[arg(long, value_name = "N")]
    leak_records: Option<u64>,
    /// Access cost per memory level, cost units per byte read or written (abstract, relative
    /// prices): `NAME=COST` pairs over the defaults, `*=COST` for levels not named, e.g.
    /// `L1=1,DDR=40,*=16`. Defaults (illustrative, not measured): L0A/L0B/L0C/UB/L1 1, L2 4,
    /// L3 8, HBM 16, DDR/P2P_DDR 32, HOST/HOST_SVM 128, others 16. Each buffer is written
    /// once and read once per reading op, in the level it was placed in (tiered) or its
    /// memory type.
    #[arg(long, value_name = "NAME=COST,...", default_value = "")]
    access_cost: String,
    /// JSON: also the per-allocation records and the occupancy after every step.
    #[arg(long)]
    details: bool,
    #[command(flatten)]
    shape: ShapeArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: SimFormat,
}

/// What `simulate` writes (a simulation has no per-tensor rows for a CSV).
#[derive(Clone, Copy, ValueEnum)]
enum SimFormat {
    Table,
    Json,
}

/// How a graph's tensors get their sizes: `--dim`, `--input`, `--size` (plan and simulate).
#[derive(clap::Args)]
struct ShapeArgs {
    /// Bind a symbolic dim: NAME=VALUE (repeatable).
    #[arg(long = "dim", value_name = "NAME=VALUE")]
    dims: Vec<String>,
    /// Set a graph input's whole shape: NAME=1x3x224x224 (repeatable).
    #[arg(long = "input", value_name = "NAME=SHAPE")]
    inputs: Vec<String>,
    /// Give a tensor's size in bytes: NAME=BYTES (repeatable; for shapes the importer could
    /// not infer, or to override one).
    #[arg(long = "size", value_name = "NAME=BYTES")]
    sizes: Vec<String>,
    /// Let Reshape, Flatten, Squeeze, Unsqueeze and Identity outputs share their input's
    /// buffer when the input dies there, as runtimes do (ONNX models; off by default).
    #[arg(long)]
    alias_views: bool,
    /// The order the ops run in (default: the graph's `"schedule"`, else file order; for
    /// `validate --model`, the plan's own, as its `problem.schedule` records it).
    #[arg(long, value_enum)]
    schedule: Option<ScheduleArg>,
    /// Fuse ops as a runtime does: pad (PAD folded into its consumer, TinyEngine), quantize
    /// (a graph input's QUANTIZE dropped, TinyEngine), activation (into its producer, TFLite,
    /// ONNX Runtime); comma separated.
    #[arg(long, value_name = "LIST", value_parser = memplan_core::graph::rewrite::Fuse::parse)]
    fuse: Option<memplan_core::graph::rewrite::Fuse>,
    /// Write outputs over a dying input's buffer as a runtime does: elementwise (same size,
    /// ONNX Runtime, TFLite), depthwise (TinyEngine); comma separated.
    #[arg(long, value_name = "LIST", value_parser = memplan_core::graph::rewrite::InPlace::parse)]
    in_place: Option<memplan_core::graph::rewrite::InPlace>,
}

#[derive(Clone, Copy, ValueEnum)]
enum ScheduleArg {
    /// File order (Kahn's algorithm, lowest file index first, if the file is not in order).
    File,
    /// GE's default topological sort for inference, depth-first (compute_graph.cc
    /// DFSTopologicalSorting).
    GeDfs,
    /// The order of lowest live-set lower bound found: exact search over sets of executed ops
    /// where the state space allows, else the best of LPMF, list, DFS, BFS and the file order
    /// (never above the file order's bound); the plan's notes say which won and what is proven.
    Memory,
}

impl ShapeArgs {
    /// The load options these flags give (no gears).
    fn load_options(&self) -> Result<LoadOptions, Error> {
        let mut s = parse_shapes(&self.dims, &self.inputs, &self.sizes)?;
        s.alias_views = self.alias_views;
        s.order = self.order();
        s.fuse = self.fuse.unwrap_or_default();
        s.in_place = self.in_place.unwrap_or_default();
        Ok(s)
    }

    /// Whether any of these flags was given.
    fn given(&self) -> bool {
        !self.dims.is_empty()
            || !self.inputs.is_empty()
            || !self.sizes.is_empty()
            || self.alias_views
            || self.schedule.is_some()
            || self.fuse.is_some()
            || self.in_place.is_some()
    }

    fn order(&self) -> Option<memplan_core::graph::ScheduleOrder> {
        use memplan_core::graph::ScheduleOrder;
        self.schedule.map(|s| match s {
            ScheduleArg::File => ScheduleOrder::File,
            ScheduleArg::GeDfs => ScheduleOrder::GeDfs,
            ScheduleArg::Memory => ScheduleOrder::Memory,
        })
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Table,
    Json,
    Csv,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PaddingArg {
    /// GE: ceil32(bytes) + 32.
    Ge,
    /// Raw sizes.
    None,
}

#[derive(clap::Args)]
struct PlanArgs {
    /// Input file: .onnx, .tflite, .json (memplan.graph/1) or .csv (MiniMalloc).
    input: PathBuf,
    /// Strategy to run (repeatable); default: every strategy.
    #[arg(long = "strategy", short = 's')]
    strategies: Vec<String>,
    /// Block/offset alignment in bytes. Default: 512 for graphs, 16 for TFLite (TFLM), 1 for CSV.
    #[arg(long)]
    align: Option<u64>,
    /// Tensor padding. Default: ge for graphs, none for TFLite and CSV.
    #[arg(long, value_enum)]
    padding: Option<PaddingArg>,
    #[command(flatten)]
    shape: ShapeArgs,
    /// Dynamic batch: plan these gears (batch sizes) overlaid, e.g. 1,2,4,8.
    #[arg(long, value_delimiter = ',')]
    batch: Vec<u64>,
    /// The symbolic dim that is the batch (default: leading symbolic dim of the first input).
    #[arg(long)]
    batch_dim: Option<String>,
    /// Turn memory reuse off (GE disableReuseMemory).
    #[arg(long)]
    disable_reuse: bool,
    /// Let graph inputs and outputs take part in reuse (not zero-copy): GE
    /// graphIOMemAllocMode=ByGE with input_fusion_size=0 (not the I/O reuse options: those are
    /// --zero-copy-reuse).
    #[arg(long)]
    io_reuse: bool,
    /// Graph inputs and outputs stay zero-copy but may be reused over their live range (GE
    /// inputReuseMemIndexes / outputReuseMemIndexes for all): ge-block nests activations in
    /// them, in the zero-copy region.
    #[arg(long)]
    zero_copy_reuse: bool,
    /// Clean atomic outputs separately (GE atomicCleanPolicy=1) so they can be reused.
    #[arg(long)]
    atomic_separate: bool,
    /// GE dynamic batch: cut the largest gear into virtual blocks of at most 400 MiB.
    #[arg(long)]
    expandable_memory: bool,
    /// GE block strategies: zero-copy blocks' alignment in bytes (default: the block alignment,
    /// as GE's code rounds them in AssignZeroCopyMemory; GE's design doc says 32, citing a
    /// constant the code does not have: `--zero-copy-align 32` plans that reading).
    #[arg(long, value_name = "BYTES")]
    zero_copy_align: Option<u64>,
    /// Graph inputs and outputs as GE sees them at run time: offset, size, the ops taking the
    /// address, zero-copy or copied (and why), bytes copied per run (table and plan file).
    #[arg(long)]
    io: bool,
    /// The memset ops (AtomicAddrClean centralised, MemSet per op with --atomic-separate) and
    /// the ranges (offset, size) each zeroes, with the count under both policies.
    #[arg(long)]
    atomic_clean: bool,
    /// Single-op mode (GE single-op execution): each op alone, its inputs and outputs the
    /// caller's buffers, only its workspaces in device memory, one buffer per stream.
    #[arg(long)]
    single_op: bool,
    /// Access cost per memory type: every buffer in its memory type at its planned size,
    /// written once and read once per reading op, priced per byte (`NAME=COST` pairs over the
    /// defaults, `*=COST` for types not named; "" for the defaults: HBM 16, P2P_DDR 32,
    /// HOST/HOST_SVM 128, others 16, illustrative, not measured). As `simulate --access-cost`.
    #[arg(long, value_name = "NAME=COST,...")]
    access_cost: Option<String>,
    /// Training step beside inference (sgd, momentum or adam): activations kept for the
    /// backward, their gradients, weight gradients in the arena; weights and optimizer state
    /// apart (docs/ge-memory-planning.md §10). Each strategy plans it too.
    #[arg(long, value_name = "OPTIMIZER")]
    training: Option<String>,
    /// One flow (GE hybrid): tensors of known size planned statically, tensors with a
    /// symbolic dim allocated at run time by ge-v2 at the sizes --dim gives.
    #[arg(long)]
    hybrid: bool,
    /// Time limit for anytime strategies, milliseconds.
    #[arg(long, default_value_t = 2000)]
    time_limit: u64,
    /// Memory budget: BYTES, or with a unit (KiB, MiB, GiB, KB, MB, GB; `1.5GiB`). `optimal` then looks
    /// for a plan that fits and stops at the first (MiniMalloc's capacity mode); every plan is
    /// checked against it, and the exit status is 3 if one does not fit.
    #[arg(long, value_name = "BYTES", value_parser = memplan_core::units::parse_bytes)]
    capacity: Option<u64>,
    /// Searches run side by side by strategies with search variants (`optimal`): one thread
    /// each, other random seeds, the best plan kept (its notes say which won and what the
    /// others reached). Default 1: one search, the playground's (measured: two did not help
    /// on a loaded 2-core machine, docs/benchmarks.md); 2 uses both cores of such a machine.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=64))]
    threads: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// Write the output here instead of stdout.
    #[arg(long, short = 'o')]
    out: Option<PathBuf>,
    /// TFLite model, one --strategy: also write the model with the plan as its
    /// `OfflineMemoryAllocation` metadata, which TFLM follows (the JSON's peak is its head).
    #[arg(long, value_name = "OUT.tflite")]
    emit_tflite: Option<PathBuf>,
    /// TFLite model, one --strategy: also write a C header with the arena head size, every
    /// tensor's offset and TFLM's `BufferPlan` for `NonPersistentMemoryPlannerShim`.
    #[arg(long, value_name = "OUT.h")]
    emit_header: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Plan(args) => match run_plan(&args) {
            // Every plan fits the --capacity budget (or none was given).
            Ok(true) => Ok(()),
            Ok(false) => return ExitCode::from(3),
            Err(e) => Err(e),
        },
        Command::Strategies => memplan_core::strategies()
            .iter()
            .try_for_each(|s| outln!("{:<22} {}", s.name, s.summary)),
        Command::Validate {
            plan,
            model,
            shape,
            batch,
            batch_dim,
        } => match model {
            Some(path) => shape.load_options().and_then(|mut s| {
                s.gears = batch;
                s.batch_dim = batch_dim;
                run_validate(&plan, Some(&(path, s)))
            }),
            None if shape.given() => Err(Error::bad_option(
                "--dim, --input, --size, --alias-views, --schedule, --fuse and --in-place say how to load --model: give the model too",
            )),
            None => run_validate(&plan, None),
        },
        Command::Inspect {
            input,
            dims,
            inputs,
            tensors,
        } => run_inspect(&input, &dims, &inputs, tensors),
        Command::Advise {
            input,
            shape,
            strategy,
            format,
        } => run_advise(&input, &shape, strategy.as_deref(), format),
        Command::Simulate(args) => match simulate::run(&args) {
            // Every allocation succeeded.
            Ok(true) => Ok(()),
            Ok(false) => return ExitCode::from(3),
            Err(e) => Err(e),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            errln!("error: {e}");
            // 2: a bad command line (as clap's own errors), 1: bad input or a failure
            match e.kind() {
                ErrorKind::BadOption | ErrorKind::UnknownStrategy => ExitCode::from(2),
                _ => ExitCode::FAILURE,
            }
        }
    }
}

fn parse_kv<'a>(s: &'a str, flag: &str) -> Result<(&'a str, &'a str), Error> {
    s.split_once('=')
        .filter(|(k, v)| !k.is_empty() && !v.is_empty())
        .ok_or_else(|| Error::bad_option(format!("{flag} '{s}': expected NAME=VALUE")))
}

fn parse_u64(v: &str, what: &str) -> Result<u64, Error> {
    let t = v.trim();
    t.parse::<u64>().map_err(|e| {
        // digits that do not fit say so, not "not an integer"; a long one is not echoed whole
        let shown: String = if t.len() > 40 {
            format!(
                "{}… ({} characters)",
                &t[..t.char_indices().nth(24).map_or(t.len(), |(i, _)| i)],
                t.chars().count()
            )
        } else {
            t.to_string()
        };
        if *e.kind() == std::num::IntErrorKind::PosOverflow {
            Error::bad_option(format!(
                "{what}: '{shown}' does not fit in 64 bits (at most {})",
                u64::MAX
            ))
        } else {
            Error::bad_option(format!("{what}: '{shown}' is not a non-negative integer"))
        }
    })
}

fn run_inspect(
    input: &std::path::Path,
    dims: &[String],
    inputs: &[String],
    tensors: bool,
) -> Result<(), Error> {
    use memplan_core::import::onnx;
    let shapes = parse_shapes(dims, inputs, &[])?;
    if load::is_tflite(input)? {
        return run_inspect_tflite(input, &shapes, tensors);
    }
    let model = load::read_onnx(input, &shapes)?;
    let mut text = onnx::summary(&model, &shapes.dims);
    if tensors {
        text += &model.graph.tensor_lines();
    }
    std::io::stdout()
        .write_all(term::clean(&text).as_bytes())
        .map_err(|e| Error::invalid(e.to_string()))
}

fn run_inspect_tflite(
    input: &std::path::Path,
    shapes: &LoadOptions,
    tensors: bool,
) -> Result<(), Error> {
    use memplan_core::import::tflite;
    let shown = input.display().to_string();
    if let Some(name) = shapes.inputs.keys().next() {
        return Err(Error::bad_option(format!(
            "--input {name}=…: whole input shapes apply to ONNX models; bind a TFLite model's symbolic dims with --dim NAME=VALUE"
        )));
    }
    let bytes = load::read_bytes(input)?;
    let model =
        tflite::parse(&bytes, &tflite::TfliteOptions::default()).map_err(|e| e.at(&shown))?;
    let mut text = tflite::summary(&model, &shapes.dims);
    if tensors {
        text += &model.graph.tensor_lines();
    }
    std::io::stdout()
        .write_all(term::clean(&text).as_bytes())
        .map_err(|e| Error::invalid(e.to_string()))
}

fn shapes(args: &PlanArgs) -> Result<LoadOptions, Error> {
    let mut s = args.shape.load_options()?;
    s.gears.clone_from(&args.batch);
    s.batch_dim.clone_from(&args.batch_dim);
    Ok(s)
}

fn parse_shapes(
    dims: &[String],
    inputs: &[String],
    sizes: &[String],
) -> Result<LoadOptions, Error> {
    // a name given twice is a slip (which value was meant?), not "the last one wins"
    let twice = |flag: &str, k: &str| {
        Error::bad_option(format!("{flag} {k} is given twice: give each name once"))
    };
    let mut s = LoadOptions::default();
    for z in sizes {
        let (k, v) = parse_kv(z, "--size")?;
        let bytes = parse_u64(v, &format!("--size {k}"))?;
        if s.sizes.insert(k.to_string(), bytes).is_some() {
            return Err(twice("--size", k));
        }
    }
    for d in dims {
        let (k, v) = parse_kv(d, "--dim")?;
        let n = parse_u64(v, &format!("--dim {k}"))?;
        if s.dims.insert(k.to_string(), n).is_some() {
            return Err(twice("--dim", k));
        }
    }
    // before the file is read (core's load refuses it too, for every caller)
    memplan_core::import::load::check_dims(&s.dims)?;
    for i in inputs {
        let (k, v) = parse_kv(i, "--input")?;
        let dims = v
            .split(['x', 'X', ','])
            .map(|d| parse_u64(d, &format!("--input {k}")))
            .collect::<Result<_, _>>()?;
        if s.inputs.insert(k.to_string(), dims).is_some() {
            return Err(twice("--input", k));
        }
    }
    Ok(s)
}

fn options(args: &PlanArgs, input: &Loaded) -> Result<PlanOptions, Error> {
    let mut o = load::default_options(input);
    if let Some(a) = args.align {
        if a == 0 {
            return Err(Error::bad_option("--align must be at least 1"));
        }
        o.alignment = a;
    }
    if let Some(p) = args.padding {
        o.padding = match p {
            PaddingArg::Ge => Padding::Ge,
            PaddingArg::None => Padding::None,
        };
    }
    o.reuse = !args.disable_reuse;
    if args.io_reuse {
        o.zero_copy_io = false; // TFLite's default already plans them in the arena
    }
    o.zero_copy_reuse = args.zero_copy_reuse;
    o.atomic_centralised = !args.atomic_separate;
    o.expandable_memory = args.expandable_memory;
    if args.zero_copy_align == Some(0) {
        return Err(Error::bad_option("--zero-copy-align must be at least 1"));
    }
    o.zero_copy_alignment = args.zero_copy_align;
    o.time_limit_ms = args.time_limit;
    Ok(o)
}

/// What exporting a plan to TFLM needs of the loaded model.
struct Tflm<'a> {
    graph: Option<&'a memplan_core::graph::Graph>,
    info: Option<&'a memplan_core::import::tflite::TfliteInfo>,
    lowered: &'a memplan_core::graph::Lowered,
    bytes: &'a [u8],
}

/// The `--emit-tflite` model, the `--emit-header` text and the plan TFLM runs from them.
type TflmFiles = (Option<Vec<u8>>, Option<String>, Plan);

/// The `--emit-tflite` model and the `--emit-header` text of `plan` (core's
/// `report::tflm_export` makes and checks both), and the plan TFLM runs from them (the same,
/// but for scratch buffers, which TFLM places online).
fn export_tflm(
    args: &PlanArgs,
    m: &Tflm<'_>,
    strategy: &str,
    plan: &Plan,
) -> Result<TflmFiles, Error> {
    use memplan_core::report::tflm_export;
    let (Some(graph), Some(info)) = (m.graph, m.info) else {
        return Err(Error::bad_option(
            "--emit-tflite and --emit-header export a plan of a TFLite model (.tflite)",
        ));
    };
    let export = tflm_export::tflm_offsets(m.lowered, info, plan)
        .map_err(|e| e.at(format!("strategy {strategy}")))?;
    if export.head > plan.peak {
        errln!(
            "warning: {}: TFLM places the scratch buffers online around the exported offsets: its head is {} B, {} B above the plan's {} B (tflm-greedy's own plan has none of this loss)",
            args.input.display(),
            export.head,
            export.head - plan.peak,
            plan.peak
        );
    }
    let model = match args.emit_tflite {
        Some(_) => Some(tflm_export::planned_tflite(m.bytes, &export)?),
        None => None,
    };
    let header = args.emit_header.as_ref().map(|_| {
        let name = args
            .input
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        tflm_export::c_header(&export, info, graph, &name, strategy)
    });
    Ok((model, header, export.deployed))
}

/// `memplan advise`: the advisor's rows as a table or JSON.
fn run_advise(
    input: &std::path::Path,
    shape: &ShapeArgs,
    strategy: Option<&str>,
    format: SimFormat,
) -> Result<(), Error> {
    use memplan_core::import::load::Format as InputFormat;
    let opts = shape.load_options()?;
    let shown = input.display().to_string();
    let bytes = load::read_bytes(input)?;
    let strategy = strategy.unwrap_or_else(|| {
        memplan_core::report::advise::default_strategy(InputFormat::detect(&shown, &bytes))
    });
    let advice = memplan_core::report::advise::advise(&shown, &bytes, &opts, strategy)
        .map_err(|e| e.at(&shown))?;
    let text = match format {
        SimFormat::Json => {
            let v =
                serde_json::to_string_pretty(&advice).map_err(|e| Error::invalid(e.to_string()))?;
            term::json(&(v + "\n")).into_owned()
        }
        SimFormat::Table => {
            use std::fmt::Write as _;
            let mut s = String::new();
            let b = &advice.baseline;
            let _ = writeln!(
                s,
                "{shown}: baseline peak {} (lower bound {}), {}",
                units::with_exact(b.peak),
                units::with_exact(b.lower_bound),
                b.flags.join(" ")
            );
            let _ = writeln!(
                s,
                "\n{:<24} {:>14} {:>14} {:>8}  flags / what the runtime must do",
                "lever", "peak B", "saving B", "saving"
            );
            for l in &advice.levers {
                let _ = writeln!(
                    s,
                    "{:<24} {:>14} {:>14} {:>7.1}%  {}\n{:<64}{}",
                    l.name,
                    l.peak,
                    l.saving_bytes,
                    l.saving_percent,
                    l.flags.join(" "),
                    "",
                    l.requires
                );
            }
            for k in &advice.skipped {
                let _ = writeln!(s, "skipped: {k}");
            }
            term::clean(&s).into_owned()
        }
    };
    std::io::stdout()
        .write_all(text.as_bytes())
        .map_err(|e| Error::invalid(e.to_string()))
}

/// Plans and writes the output; `Ok(false)` when a plan exceeds `--capacity`.
fn run_plan(args: &PlanArgs) -> Result<bool, Error> {
    let names: Vec<String> = if args.strategies.is_empty() {
        memplan_core::strategies()
            .iter()
            .map(|s| s.name.to_string())
            .collect()
    } else {
        args.strategies.clone()
    };
    let infos = names
        .iter()
        .map(|n| memplan_core::find_strategy(n))
        .collect::<Result<Vec<_>, _>>()?;
    if matches!(args.format, Format::Csv) && infos.len() != 1 {
        return Err(Error::bad_option(
            "--format csv writes one plan: choose it with --strategy NAME",
        ));
    }
    let exporting = args.emit_tflite.is_some() || args.emit_header.is_some();
    if exporting && infos.len() != 1 {
        return Err(Error::bad_option(
            "--emit-tflite and --emit-header write one plan: choose it with one --strategy NAME",
        ));
    }
    let shapes = shapes(args)?;
    let (input, model_bytes) = if exporting {
        load::read_keeping_bytes(&args.input, &shapes)?
    } else {
        (load::read(&args.input, &shapes)?, Vec::new())
    };
    let opts = options(args, &input)?;
    let shown = args.input.display().to_string();
    let graph = input.graph;
    let lowered = input.lowered;
    let problem = &lowered.problem;
    for w in &lowered.warnings {
        errln!("warning: {shown}: {w}");
    }
    if args.io && graph.is_none() {
        return Err(Error::bad_option(
            "--io needs a graph (ONNX or memplan.graph/1): a buffer list has no graph inputs or outputs",
        )
        .at(&shown));
    }
    let bounds = memplan_core::lower_bound(problem).map_err(|e| e.at(&shown))?;
    // per strategy run: the name asked and its analysis (plan, time, gear overlay)
    let mut plans = Vec::new();
    // One strategy's failure is reported and the others still run: the table shows what did.
    let mut failed = Vec::new();
    for s in infos {
        let a = match run_strategy(s, problem, &opts, args.capacity, threads(args)) {
            Ok(a) => a,
            Err(e) => {
                failed.push(e.at(format!("strategy {}", s.name)).at(&shown));
                continue;
            }
        };
        if let Err(v) = &a.valid {
            failed.push(
                Error::invalid(format!(
                    "produced an invalid plan: {v} (please report this bug)"
                ))
                .at(format!("strategy {}", s.name))
                .at(&shown),
            );
            continue;
        }
        plans.push((s.name, a));
    }
    if plans.is_empty() {
        // nothing to show: the first failure is the answer (they share their cause, mostly)
        return Err(failed
            .into_iter()
            .next()
            .unwrap_or_else(|| Error::bad_option("no strategy to run")));
    }
    if input.tflite.is_some() {
        // a head TFLM cannot hold (int32 offsets): said once, with the smallest such head
        use memplan_core::report::tflm_arena::{head_limit_warning, TFLM_MAX_BYTES};
        let over: Vec<&str> = plans
            .iter()
            .filter(|(_, a)| a.plan.peak > TFLM_MAX_BYTES)
            .map(|(name, _)| *name)
            .collect();
        let least = plans
            .iter()
            .map(|(_, a)| a.plan.peak)
            .filter(|&p| p > TFLM_MAX_BYTES)
            .min();
        if let Some(w) = least.and_then(|p| head_limit_warning(problem, p)) {
            let who = if over.len() == plans.len() {
                String::from("every plan")
            } else {
                format!("strategy {}", over.join(", "))
            };
            errln!("warning: {shown}: {who}: {w}");
        }
    }
    // the exported files are made before anything is written: a refusal writes nothing. The
    // plan shown and written is the one TFLM runs (scratch buffers placed online by TFLM).
    let exported = match (exporting, plans.first_mut()) {
        (true, Some((name, a))) => {
            let tflm = Tflm {
                graph: graph.as_ref(),
                info: input.tflite.as_ref(),
                lowered: &lowered,
                bytes: &model_bytes,
            };
            let (model, header, deployed) =
                export_tflm(args, &tflm, name, &a.plan).map_err(|e| e.at(&shown))?;
            memplan_core::validate_with(problem, &deployed, &memplan_core::Rules::from(&opts))
                .map_err(|v| {
                    Error::invalid(format!(
                        "the plan TFLM runs is invalid: {v} (please report this bug)"
                    ))
                    .at(format!("strategy {name}"))
                    .at(&shown)
                })?;
            a.plan = deployed;
            Some((model, header))
        }
        _ => None,
    };
    let runs: Vec<Run> = plans.iter().map(|(name, a)| Run::of(name, a)).collect();
    let extras = Extras {
        unknown: &lowered.unknown,
        views: lowered.views.as_ref(),
        order: lowered.order,
        search: lowered.search.as_ref(),
        rewrites: lowered.rewrites.as_ref(),
    };
    let mut file = PlanFile::new(&shown, problem, extras, &runs).map_err(|e| e.at(&shown))?;
    if let Some(info) = input.tflite.as_ref() {
        // kTensorArenaSize: each plan's head plus the variable tensors of TFLM's tail
        file.add_tflm_arena(&memplan_core::report::tflm_arena::TflmArena::of(info));
    }
    if let (true, Some(g)) = (args.io, graph.as_ref()) {
        let ps: Vec<&memplan_core::Plan> = plans.iter().map(|p| &p.1.plan).collect();
        file.add_graph_io(g, &lowered, &ps);
    }
    if let Some(opt) = &args.training {
        let Some(g) = graph.as_ref() else {
            return Err(Error::bad_option(
                "--training needs a graph (ONNX or memplan.graph/1): a buffer list has no ops or weights",
            )
            .at(&shown));
        };
        file.training = Some(
            training_summary(
                g,
                &lowered,
                opt,
                &plans,
                &opts,
                &memplan_core::Rules::from(&opts),
            )
            .map_err(|e| e.at(&shown))?,
        );
    }
    if args.hybrid {
        let Some(g) = graph.as_ref() else {
            return Err(Error::bad_option(
                "--hybrid needs a graph (ONNX or memplan.graph/1): a buffer list has no shapes",
            )
            .at(&shown));
        };
        let h = memplan_core::report::hybrid::split(g, &lowered);
        let runtime = memplan_core::simulate::registry::RuntimeOptions::default();
        for (name, _) in &plans {
            let (_, _, r) = memplan_core::report::hybrid::run(&h, name, &opts, &runtime)
                .map_err(|e| e.at(format!("strategy {name}")).at(&shown))?;
            file.hybrid.push(r);
        }
    }
    if let Some(spec) = &args.access_cost {
        let costs = memplan_core::simulate::access::AccessCosts::parse(spec)?;
        file.add_access_cost(problem, &opts, &costs)
            .map_err(|e| e.at(&shown))?;
    }
    if args.single_op {
        file.add_single_op(problem, &opts)
            .map_err(|e| e.at(&shown))?;
    }
    if args.atomic_clean {
        let ps: Vec<&memplan_core::Plan> = plans.iter().map(|p| &p.1.plan).collect();
        file.add_atomic_clean(problem, &ps, &opts)
            .map_err(|e| e.at(&shown))?;
    }
    let text = match args.format {
        Format::Json => term::json(&file.to_json()?).into_owned(),
        Format::Table => term::clean(&table(&file, &opts)).into_owned(),
        Format::Csv => {
            let p = plans
                .first()
                .ok_or_else(|| Error::bad_option("no strategy to write"))?;
            memplan_core::import::csv::write(problem, Some(&p.1.plan))
        }
    };
    match &args.out {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| Error::invalid(format!("cannot write: {e}")).at(path.display()))?,
        None => {
            let text = match args.format {
                Format::Csv => term::csv(&text),
                _ => std::borrow::Cow::Borrowed(text.as_str()),
            };
            std::io::stdout()
                .write_all(text.as_bytes())
                .map_err(|e| Error::invalid(e.to_string()))?;
        }
    }
    if let Some((model, header)) = exported {
        for (path, data) in [
            (&args.emit_tflite, model),
            (&args.emit_header, header.map(String::into_bytes)),
        ] {
            if let (Some(path), Some(data)) = (path, data) {
                std::fs::write(path, data)
                    .map_err(|e| Error::invalid(format!("cannot write: {e}")).at(path.display()))?;
            }
        }
    }
    if !failed.is_empty() {
        for e in &failed {
            errln!("error: {e}");
        }
        return Err(Error::new(
            failed[0].kind(),
            format!(
                "{} of {} strategies failed (above)",
                failed.len(),
                failed.len() + plans.len()
            ),
        )
        .at(&shown));
    }
    let Some(cap) = args.capacity else {
        return Ok(true);
    };
    let mut fits = true;
    for (_, a) in &plans {
        let p = &a.plan;
        // every arena must fit: with one per memory type, together
        let need = p.device_bytes();
        if need > cap {
            fits = false;
            // the search's own bound (planned sizes, raised by its proofs) can settle it too
            let proven = p
                .search
                .as_ref()
                .map(|s| s.lower_bound)
                .filter(|&lb| lb > cap && p.arenas.len() <= 1);
            let why = if cap < bounds.lower_bound {
                format!(
                    "; no plan can fit: the lower bound is {} B",
                    bounds.lower_bound
                )
            } else if let Some(lb) = proven {
                format!(
                    "; no plan of these planned sizes can fit: {} proves every one needs at least {lb} B",
                    p.strategy
                )
            } else {
                String::new()
            };
            let what = if p.arenas.len() > 1 {
                "its arenas together"
            } else {
                "peak"
            };
            errln!(
                "{shown}: {}: {what} {need} B exceeds the capacity {cap} B by {} B{why}",
                p.strategy,
                need - cap
            );
        }
    }
    Ok(fits)
}

/// `--threads`, or 1: one search, the same as the playground's, so that both give the same
/// plan and notes for the same limits.
fn threads(args: &PlanArgs) -> u64 {
    args.threads.unwrap_or(1)
}

/// The wall clock of one search thread; it reports a cancellation once another thread's
/// search has settled the question (a proven optimum, or a plan under the capacity).
struct ThreadClock<'a> {
    t0: Instant,
    done: &'a std::sync::atomic::AtomicBool,
}

impl memplan_core::strategy::Clock for ThreadClock<'_> {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.t0.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
    fn now_us(&self) -> u64 {
        u64::try_from(self.t0.elapsed().as_micros()).unwrap_or(u64::MAX)
    }
    fn cancelled(&self) -> bool {
        self.done.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// Runs and judges a strategy ([`analysis::analyse`], as the playground does) under the wall
/// clock (anytime strategies stop at `--time-limit`), with the memory budget in the context
/// (the one decision of [`analysis`]: it reaches the strategy; those that search under one
/// stop at the first plan that fits). Strategies with search variants run `threads` of them
/// side by side (one thread each), keep the best
/// ([`memplan_core::strategy::optimal::keep_best`]) and judge it ([`analysis::judge`]); a
/// search that proves its plan optimal (or, with a capacity, finds one that fits) stops the
/// others.
fn run_strategy(
    s: &memplan_core::StrategyInfo,
    problem: &Problem,
    opts: &PlanOptions,
    capacity: Option<u64>,
    threads: u64,
) -> Result<Analysis, Error> {
    let t0 = Instant::now();
    let done = std::sync::atomic::AtomicBool::new(false);
    if !s.caps.variants || threads < 2 {
        let clock = ThreadClock { t0, done: &done };
        let ctx = Ctx::with_clock(&clock).with_capacity(capacity);
        return analysis::analyse(problem, s, opts, &ctx);
    }
    let run = |variant: u64| {
        let clock = ThreadClock { t0, done: &done };
        let ctx = Ctx::with_clock(&clock)
            .with_capacity(capacity)
            .with_variant(variant);
        let got = s.run_in(problem, opts, &ctx);
        if let Ok(p) = &got {
            let settled = p.search.as_ref().is_some_and(|f| f.proven_optimal)
                || capacity.is_some_and(|c| p.peak <= c);
            if settled {
                done.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
        got
    };
    let results: Vec<Result<Plan, Error>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads).map(|v| scope.spawn(move || run(v))).collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::invalid("a search thread panicked")))
            })
            .collect()
    });
    let mut first_err = None;
    let mut plans = Vec::new();
    for r in results {
        match r {
            Ok(p) => plans.push(p),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    let plan = match memplan_core::strategy::optimal::keep_best(plans) {
        Some(p) => p,
        None => return Err(first_err.unwrap_or_else(|| Error::invalid("no search thread ran"))),
    };
    let time_us = u64::try_from(t0.elapsed().as_micros()).unwrap_or(u64::MAX);
    let planned = analysis::Planned {
        strategy: s.name,
        plan,
        options: opts.clone(),
        time_us,
    };
    analysis::judge(problem, planned, &memplan_core::Rules::from(opts), capacity)
}

/// GE's build-log lines for a GE plan ([`memplan_core::GeStats::imas_lines`]); none for
/// other plans.
fn imas_lines(graph: &str, e: &PlanEntry) -> Vec<String> {
    e.ge.as_ref()
        .map_or_else(Vec::new, |ge| ge.imas_lines(graph))
}

fn table(f: &PlanFile, o: &PlanOptions) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let p = &f.problem;
    // Every figure leaves out the tensors of unknown size: say so next to each.
    let unk = match p.unknown_size_tensors {
        0 => String::new(),
        1 => " (+1 tensor of unknown size)".to_string(),
        n => format!(" (+{n} tensors of unknown size)"),
    };
    let _ = writeln!(s, "{}: {} buffers, {} steps", f.input, p.buffers, p.steps);
    let _ = writeln!(
        s,
        "lower bound {}{unk}   no reuse {}{unk}",
        units::with_exact(p.lower_bound_bytes),
        units::with_exact(p.no_reuse_bytes)
    );
    if let (Some(n), Some(b)) = (p.aliased_views, p.aliased_view_bytes) {
        let _ = writeln!(
            s,
            "views aliased: {n} tensors share their input's buffer ({} not allocated)",
            units::with_exact(b)
        );
    }
    let order_note = p.schedule_search.as_ref().map(|r| r.note());
    if let Some(n) = &order_note {
        let _ = writeln!(s, "{n}");
    }
    for u in &p.unknown_size {
        let by =
            u.op.as_ref()
                .map_or(String::new(), |o| format!(" from op {o}"));
        let _ = writeln!(s, "  unknown size: '{}'{by}: {}", u.name, u.why);
    }
    if p.weight_bytes > 0 {
        let _ = writeln!(
            s,
            "weights (not planned) {}",
            units::with_exact(p.weight_bytes)
        );
    }
    let pad = match o.padding {
        Padding::Ge => "ceil32+32",
        Padding::None => "none",
    };
    let _ = writeln!(
        s,
        "alignment {} B, padding {pad}{}\n",
        o.alignment,
        if o.reuse { "" } else { ", reuse off" }
    );
    let _ = writeln!(
        s,
        "{:<34} {:>12} {:>16} {:>9} {:>10}",
        "strategy", "peak", "peak bytes", "/ lower", "time"
    );
    for e in &f.plans {
        // the bound counts every memory type: measure all the plan's arenas against it
        let device = e.device_bytes();
        let ratio = if p.lower_bound_bytes == 0 {
            1.0
        } else {
            device as f64 / p.lower_bound_bytes as f64
        };
        let _ = writeln!(
            s,
            "{:<34} {:>12} {:>16} {:>9.4} {:>8.2}ms{unk}",
            e.strategy,
            units::binary(e.peak_bytes),
            e.peak_bytes,
            ratio,
            e.plan_time_us as f64 / 1000.0
        );
        if let Some(a) = &e.tflm_arena {
            let _ = writeln!(s, "  {}", a.sentence());
        }
        if memplan_core::find_strategy(&e.strategy).is_ok_and(|s| s.caps.anytime) {
            // the op order's note is the problem's, shown above
            for n in e.notes.iter().filter(|&n| Some(n) != order_note.as_ref()) {
                let _ = writeln!(s, "  {n}");
            }
        }
        if e.arenas.len() > 1 {
            let list: Vec<String> = e
                .arenas
                .iter()
                .map(|a| format!("{} {}", a.name, units::binary(a.bytes)))
                .collect();
            let _ = writeln!(
                s,
                "  arenas: {} = {} ({device} B; the peak above is HBM's)",
                list.join(" + "),
                units::binary(device)
            );
        }
        for line in imas_lines(&f.input, e) {
            let _ = writeln!(s, "  {line}");
        }
        if let Some(gs) = &e.gears {
            for g in gs {
                let _ = writeln!(
                    s,
                    "  gear {:<6} region {:>12}  lower bound {:>12}  alone {:>12}",
                    g.batch,
                    units::binary(g.peak_bytes),
                    units::binary(g.lower_bound_bytes),
                    units::binary(g.alone_bytes)
                );
            }
            if let (Some(ov), Some(side)) = (e.overlay_bytes, e.side_by_side_bytes) {
                let _ = writeln!(
                    s,
                    "  overlay {}  side by side {}  saving {}",
                    units::binary(ov),
                    units::binary(side),
                    units::binary(side.saturating_sub(ov))
                );
            }
            if let Some(line) = virtual_blocks_line(e) {
                let _ = writeln!(s, "  {line}");
            }
        }
        graph_io_lines(&mut s, e);
        atomic_clean_lines(&mut s, e);
    }
    if let Some(a) = f.plans.iter().find_map(|e| e.tflm_arena) {
        let _ = writeln!(s, "\n{}", a.tail_sentence());
    }
    access_cost_lines(&mut s, f);
    single_op_lines(&mut s, f);
    training_lines(&mut s, f);
    hybrid_lines(&mut s, f);
    s
}

/// `--hybrid`: one flow, static plan plus ge-v2 at run time.
fn hybrid_lines(s: &mut String, f: &PlanFile) {
    use std::fmt::Write as _;
    if f.hybrid.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\none flow (GE hybrid): known sizes planned statically, symbolic dims through ge-v2 at run time"
    );
    for r in &f.hybrid {
        let _ = writeln!(
            s,
            "  {:<34} static {} ({} buffers, {} B)  run time {} reserved ({} buffers, {} B)  device {} ({} B)",
            r.strategy,
            units::binary(r.static_bytes),
            r.static_buffers,
            r.static_bytes,
            units::binary(r.runtime_reserved_bytes),
            r.dynamic_buffers,
            r.runtime_reserved_bytes,
            units::binary(r.device_bytes),
            r.device_bytes
        );
    }
}

/// `--training`: the training step planned by each strategy that planned inference.
fn training_summary(
    graph: &memplan_core::graph::Graph,
    lowered: &memplan_core::graph::Lowered,
    optimizer: &str,
    plans: &[(&str, memplan_core::report::analysis::Analysis)],
    opts: &PlanOptions,
    rules: &memplan_core::Rules,
) -> Result<memplan_core::report::training::TrainingSummary, Error> {
    use memplan_core::report::training::{training, Optimizer, TrainingSummary};
    let t = training(graph, lowered, Optimizer::parse(optimizer)?)?;
    let bound = memplan_core::lower_bound(&t.problem)?;
    let mut out = Vec::new();
    for (name, _) in plans {
        let p = memplan_core::plan(&t.problem, name, opts).map_err(|e| e.at("training step"))?;
        memplan_core::validate_with(&t.problem, &p, rules).map_err(|v| {
            Error::invalid(format!(
                "produced an invalid training plan: {} (please report this bug)",
                v.describe(&t.problem)
            ))
            .at(format!("strategy {name}"))
        })?;
        out.push((p.strategy.clone(), p.peak));
    }
    Ok(TrainingSummary {
        optimizer: Optimizer::parse(optimizer)?,
        lower_bound_bytes: bound.lower_bound,
        weight_bytes: t.weight_bytes,
        weight_grad_bytes: t.weight_grad_bytes,
        optimizer_state_bytes: t.optimizer_state_bytes,
        plans: out,
    })
}

/// `--training`: the training step beside inference.
fn training_lines(s: &mut String, f: &PlanFile) {
    use std::fmt::Write as _;
    let Some(t) = &f.training else {
        return;
    };
    let _ = writeln!(
        s,
        "\ntraining step ({:?}): arena lower bound {} ({} B); weights {} and optimizer state {} kept apart; weight gradients {} in the arena",
        t.optimizer,
        units::binary(t.lower_bound_bytes),
        t.lower_bound_bytes,
        units::binary(t.weight_bytes),
        units::binary(t.optimizer_state_bytes),
        units::binary(t.weight_grad_bytes)
    );
    for (name, peak) in &t.plans {
        let inference = f
            .plans
            .iter()
            .find(|e| &e.strategy == name)
            .map_or(0, |e| e.peak_bytes);
        let _ = writeln!(
            s,
            "  {:<34} training {:>12} ({peak} B)  inference {:>12}  device with weights and state {}",
            name,
            units::binary(*peak),
            units::binary(inference),
            units::binary(
                peak.saturating_add(t.weight_bytes)
                    .saturating_add(t.optimizer_state_bytes)
            )
        );
    }
}

/// `--access-cost`: the traffic per memory type, priced.
fn access_cost_lines(s: &mut String, f: &PlanFile) {
    use std::fmt::Write as _;
    let Some(a) = &f.access_cost else {
        return;
    };
    let _ = writeln!(s, "\n{}", simulate::access_cost_summary(a));
}

/// `--single-op`: each op alone (docs/ge-memory-planning.md §9).
fn single_op_lines(s: &mut String, f: &PlanFile) {
    use std::fmt::Write as _;
    let Some(r) = &f.single_op else {
        return;
    };
    let _ = writeln!(
        s,
        "\nsingle-op mode (GE single-op execution): device memory {} ({} B): per stream the largest op's workspaces\n  {:<24} {:>6} {:>14} {:>14}",
        units::binary(r.device_bytes),
        r.device_bytes,
        "op",
        "stream",
        "user buffers",
        "workspaces"
    );
    for o in &r.ops {
        let _ = writeln!(
            s,
            "  {:<24} {:>6} {:>14} {:>14}",
            o.name, o.stream, o.user_bytes, o.workspace_bytes
        );
    }
    for st in &r.streams {
        let _ = writeln!(
            s,
            "  stream {}: {} B held, {} device allocation(s)",
            st.stream, st.device_bytes, st.allocations
        );
    }
}

/// `--atomic-clean`: the memset ops and their ranges (docs/ge-memory-planning.md §3).
fn atomic_clean_lines(s: &mut String, e: &memplan_core::report::plan_file::PlanEntry) {
    use std::fmt::Write as _;
    let Some(r) = &e.atomic_clean else {
        return;
    };
    let _ = writeln!(
        s,
        "  atomic clean ({}): {} memset op(s); centralised policy {}, per-op policy {}",
        if r.centralised {
            "centralised, GE atomicCleanPolicy=0"
        } else {
            "per op, GE atomicCleanPolicy=1"
        },
        r.memsets.len(),
        r.memsets_centralised,
        r.memsets_per_op
    );
    for m in &r.memsets {
        let ranges: Vec<String> = m
            .ranges
            .iter()
            .map(|x| {
                let t = if x.memory_type == 0 {
                    String::new()
                } else {
                    format!(" {}", memplan_core::plan::memory_type_name(x.memory_type))
                };
                format!("[{}, +{}){t}", x.offset, x.size)
            })
            .collect();
        let _ = writeln!(
            s,
            "    {} for {}: {}",
            m.name,
            m.cleans_for.join(", "),
            ranges.join(" ")
        );
    }
}

/// `--io`: per graph input and output, GE's run-time view (docs/ge-memory-planning.md §4).
fn graph_io_lines(s: &mut String, e: &memplan_core::report::plan_file::PlanEntry) {
    use std::fmt::Write as _;
    if e.graph_io.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "  graph I/O (GE run time: tasks taking the address are refreshed with the user's buffer)\n  {:<6} {:<20} {:>12} {:>10}  {:<24} zero-copy or copied",
        "", "tensor", "offset", "size", "ops taking its address"
    );
    let mut copied = 0u64;
    for io in &e.graph_io {
        let how = if io.zero_copy {
            "zero-copy".to_string()
        } else {
            let why: Vec<&str> = io.copy_reasons.iter().map(|r| r.phrase()).collect();
            format!("copied {} B: {}", io.copied_bytes, why.join(", "))
        };
        copied = copied.saturating_add(io.copied_bytes);
        let _ = writeln!(
            s,
            "  {:<6} {:<20} {:>12} {:>10}  {:<24} {}",
            if io.input { "input" } else { "output" },
            io.name,
            io.offset.map_or("-".to_string(), |o| o.to_string()),
            io.size,
            io.address_ops.join(", "),
            how
        );
    }
    let _ = writeln!(s, "  copied per run: {copied} B");
}

/// The dynamic-batch region's virtual blocks (GE `ResizeDynamicBatchBlocks`): per memory type,
/// one for the largest gear, or with `--expandable-memory` pieces of at most 400 MiB
/// (`kMaxSplitSizeForDynamicBatch`), so the table shows what the option changed. A memory
/// type's blocks are adjacent; the next type starts again at its own offset 0.
fn virtual_blocks_line(e: &memplan_core::report::plan_file::PlanEntry) -> Option<String> {
    let groups = memplan_core::report::group_virtual_blocks(
        e.blocks
            .iter()
            .map(|b| (b.tag.as_deref(), b.offset, b.size)),
    );
    if groups.is_empty() {
        return None;
    }
    let expandable = e.settings.as_ref().is_some_and(|s| s.expandable_memory);
    let list: Vec<String> = groups
        .iter()
        .map(|g| {
            let sizes: Vec<String> = g.iter().map(|&b| units::binary(b)).collect();
            format!("[{}]", sizes.join(", "))
        })
        .collect();
    Some(format!(
        "dynamic-batch virtual blocks: {}{}",
        list.join(" + "),
        if expandable {
            " (expandable memory: pieces of at most 400 MiB)"
        } else {
            " (one per memory type; --expandable-memory cuts them at 400 MiB)"
        }
    ))
}

fn run_validate(
    path: &std::path::Path,
    model: Option<&(PathBuf, LoadOptions)>,
) -> Result<(), Error> {
    let shown = path.display().to_string();
    // a model given where a plan is expected: say so, not which plan field it lacks (nor
    // that an ONNX file is not UTF-8, nor where a CSV stops being JSON)
    let how =
        "plan it with `memplan plan FILE --format json -o plan.json`, then validate plan.json";
    let bytes = load::read_bytes(path)?;
    match memplan_core::import::load::Format::detect(&shown, &bytes) {
        memplan_core::import::load::Format::Onnx => {
            return Err(
                Error::invalid(format!("this is a model (ONNX), not a plan: {how}")).at(&shown),
            )
        }
        memplan_core::import::load::Format::Csv => {
            return Err(
                Error::invalid(format!("this is a buffer list (CSV), not a plan: {how}"))
                    .at(&shown),
            )
        }
        memplan_core::import::load::Format::Tflite => {
            return Err(
                Error::invalid(format!("this is a model (TFLite), not a plan: {how}")).at(&shown),
            )
        }
        memplan_core::import::load::Format::GraphJson => {}
    }
    let text = load::text_of(bytes, path)?;
    let format = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v.get("format").and_then(|f| f.as_str()).map(str::to_string));
    if format.as_deref() == Some("memplan.graph/1") {
        return Err(Error::invalid(
            "this is a model (memplan.graph/1), not a plan: plan it with `memplan plan FILE --format json -o plan.json`, then validate plan.json",
        )
        .at(&shown));
    }
    let file: PlanFile = serde_json::from_str(&text).map_err(|e| {
        Error::parse(format!(
            "{e} (a memplan.plan/1 file is expected, as `memplan plan --format json` writes)"
        ))
        .at(&shown)
    })?;
    if file.format != "memplan.plan/1" {
        return Err(
            Error::invalid(format!("format '{}' is not 'memplan.plan/1'", file.format)).at(&shown),
        );
    }
    if file.plans.is_empty() {
        return Err(Error::invalid("the file holds no plans: nothing to validate").at(&shown));
    }
    let model = match model {
        Some((m, opts)) => {
            // the plan's own op order (absent: file order, whatever the graph's "schedule"
            // says) unless --schedule says otherwise: its lifetimes follow it
            let mut opts = opts.clone();
            let planned = file.problem.schedule.as_deref().unwrap_or("file");
            if let Some(given) = opts.order.filter(|o| o.name() != planned) {
                eprintln!(
                    "warning: {shown}: the plan was made in op order '{planned}'; --schedule {} loads the model in another, so its lifetimes differ",
                    given.name()
                );
            }
            // a buffer list (CSV) has no ops to order: nothing to carry over (else it would
            // warn that a --schedule nobody gave has no effect)
            let list = memplan_core::import::load::Format::by_extension(&m.to_string_lossy())
                == Some(memplan_core::import::load::Format::Csv);
            if opts.order.is_none() && !list {
                opts.order = Some(match &file.problem.schedule {
                    Some(name) => memplan_core::graph::ScheduleOrder::from_name(name)
                        .map_err(|e| e.at(&shown))?,
                    None => memplan_core::graph::ScheduleOrder::File,
                });
            }
            // the plan's fusions and in-place rules, unless given
            if let Some(r) = &file.problem.rewrites {
                if !opts.fuse.any() {
                    opts.fuse = memplan_core::graph::rewrite::Fuse::parse(&r.fuse)
                        .map_err(|e| e.at(&shown))?;
                }
                if !opts.in_place.any() {
                    opts.in_place = memplan_core::graph::rewrite::InPlace::parse(&r.in_place_ops)
                        .map_err(|e| e.at(&shown))?;
                }
            }
            let loaded = load::read(m, &opts)?;
            for w in &loaded.lowered.warnings {
                errln!("warning: {}: {w}", m.display());
            }
            Some(loaded.lowered.problem)
        }
        None => None,
    };
    let mut bad = 0;
    for e in &file.plans {
        let name: String = e.strategy.escape_debug().collect();
        let checked = report::check_entry(&file, e).and_then(|()| match &model {
            Some(m) => report::check_against_model(&file, e, m),
            None => Ok(()),
        });
        match checked {
            Ok(()) => outln!(
                "{name:<34} valid   peak {}",
                units::with_exact(e.peak_bytes)
            )?,
            Err(why) => {
                outln!("{name:<34} INVALID: {why}")?;
                errln!("error: {shown}: plan {name}: {why}");
                bad += 1;
            }
        }
    }
    if bad > 0 {
        return Err(
            Error::invalid(format!("{bad} of {} plans invalid", file.plans.len())).at(&shown),
        );
    }
    Ok(())
}
