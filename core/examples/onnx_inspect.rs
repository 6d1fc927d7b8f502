//! Prints the importer's summary of an ONNX file: `onnx_inspect FILE [input=d,d,..]... [sym=v]...`.
use memplan_core::import::onnx::{parse, summary, OnnxOptions};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: onnx_inspect FILE [input=1,3,224,224] [batch=1]");
        std::process::exit(2);
    };
    let mut opts = OnnxOptions::default();
    for a in args {
        let Some((k, v)) = a.split_once('=') else {
            continue;
        };
        let nums: Vec<u64> = v.split(',').filter_map(|x| x.parse().ok()).collect();
        if v.contains(',') || opts.dims.contains_key(k) {
            opts.inputs.insert(k.to_string(), nums);
        } else if let [n] = nums[..] {
            opts.dims.insert(k.to_string(), n);
            opts.inputs.insert(k.to_string(), vec![n]);
        }
    }
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    match parse(&bytes, &opts) {
        Ok(m) => print!("{}", summary(&m, &opts.dims)),
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    }
}
