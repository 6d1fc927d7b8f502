//! Bytes decoded into a small problem (sizes, live ranges, flags, alignments, pins, gears) and
//! options, planned by every registered strategy: each either refuses with an error or returns
//! a plan the independent validator accepts under the options' rules.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memplan_core::{strategies, validate_with, Buffer, BufferKind, Padding, PlanOptions, Problem, Rules};

fuzz_target!(|data: &[u8]| {
    let Some((&head, rest)) = data.split_first() else {
        return;
    };
    let options = PlanOptions {
        alignment: [1, 2, 3, 512][usize::from(head & 3)],
        padding: if head & 4 != 0 { Padding::Ge } else { Padding::None },
        reuse: head & 8 == 0,
        zero_copy_io: head & 16 != 0,
        atomic_centralised: head & 32 != 0,
        time_limit_ms: 1,
        ..PlanOptions::default()
    };
    // 6 bytes a buffer: size (2), start, length, flags, alignment/gear
    let buffers: Vec<Buffer> = rest
        .chunks_exact(6)
        .take(24)
        .enumerate()
        .map(|(i, c)| {
            let size = u64::from(u16::from_le_bytes([c[0], c[1]]));
            let start = u64::from(c[2] % 16);
            let mut b = Buffer::new(format!("b{i}"), size, start, start + u64::from(c[3] % 8));
            b.flags.no_reuse = c[4] & 1 != 0;
            b.flags.zero_copy = c[4] & 2 != 0;
            b.flags.atomic_clean = c[4] & 4 != 0;
            b.kind = match c[4] >> 5 {
                1 => BufferKind::GraphInput,
                2 => BufferKind::GraphOutput,
                3 => BufferKind::Workspace,
                _ => BufferKind::Activation,
            };
            b.alignment = [1, 1, 4, 3][usize::from(c[5] & 3)];
            b.gear = match (c[5] >> 2) & 3 {
                0 | 1 => None,
                g => Some(u64::from(g)),
            };
            if c[4] & 8 != 0 {
                b.fixed_offset = Some(u64::from(c[5] >> 4) * 12 * b.alignment);
            }
            b
        })
        .collect();
    let problem = Problem::from_buffers("fuzz", buffers);
    if problem.check().is_err() {
        return;
    }
    let rules = Rules::from(&options);
    for s in strategies() {
        if let Ok(plan) = s.run(&problem, &options) {
            if let Err(v) = validate_with(&problem, &plan, &rules) {
                panic!("{}: {}", s.name, v.describe(&problem));
            }
        }
    }
});
