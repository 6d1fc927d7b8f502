//! Built-in samples: files under `samples/` next to the page, with where they come from.

/// The sample the page opens with: a real torchvision model, imported from ONNX.
pub const DEFAULT_SAMPLE: &str = "mobilenet_v2";

/// File format of a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleFormat {
    /// `memplan.graph/1` JSON.
    Json,
    /// MiniMalloc CSV.
    Csv,
    /// ONNX protobuf (weights stripped).
    Onnx,
}

/// A built-in sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// Stable id, used in share links.
    pub id: &'static str,
    /// Title shown in the list.
    pub title: &'static str,
    /// File name under `samples/`.
    pub file: &'static str,
    /// Format.
    pub format: SampleFormat,
    /// Where the file comes from.
    pub source: &'static str,
    /// Licence of the file.
    pub licence: &'static str,
    /// Dims the file leaves unnamed, bound when the sample opens to the input shape its
    /// source documents (a user's own file keeps them unknown until bound).
    pub dims: &'static [(&'static str, u64)],
}

/// Every built-in sample, in menu order.
pub const SAMPLES: &[Sample] = &[
    Sample {
        id: "mobilenet_v2",
        title: "MobileNetV2, torchvision (ONNX)",
        file: "mobilenet_v2_randinit.stripped.onnx",
        format: SampleFormat::Onnx,
        source: "torchvision MobileNetV2 exported with torch.onnx (random weights, weights stripped)",
        licence: "BSD-3-Clause (torchvision)",
        dims: &[],
    },
    Sample {
        id: "resnet50",
        title: "ResNet-50, torchvision (ONNX)",
        file: "resnet50_randinit.stripped.onnx",
        format: SampleFormat::Onnx,
        source: "torchvision ResNet-50 exported with torch.onnx (random weights, weights stripped)",
        licence: "BSD-3-Clause (torchvision)",
        dims: &[],
    },
    Sample {
        id: "vit_b_16",
        title: "ViT-B/16, torchvision (ONNX)",
        file: "vit_b_16_randinit.stripped.onnx",
        format: SampleFormat::Onnx,
        source: "torchvision ViT-B/16 exported with torch.onnx (random weights, weights stripped)",
        licence: "BSD-3-Clause (torchvision)",
        dims: &[],
    },
    Sample {
        id: "ppocr_cls",
        title: "PP-OCR mobile v2 text-direction classifier (ONNX)",
        file: "ppocr_mobile_v2_cls.stripped.onnx",
        format: SampleFormat::Onnx,
        source: "PyPI rapidocr-onnxruntime 1.4.4, models/ch_ppocr_mobile_v2.0_cls_infer.onnx (weights stripped)",
        licence: "Apache-2.0 (PaddleOCR)",
        // PaddleOCR's text-direction classifier runs on 3 × 48 × 192 crops (cls_image_shape)
        dims: &[("x axis 0", 1), ("x axis 2", 48), ("x axis 3", 192)],
    },
    Sample {
        id: "mobilenet-v2-blocks",
        title: "MobileNetV2 stem + 5 inverted-residual blocks (JSON)",
        file: "mobilenet-v2-blocks.json",
        format: SampleFormat::Json,
        source: "memplan (web/tools/gen_mobilenet_sample.py), shapes as torchvision MobileNetV2",
        licence: "Apache-2.0",
        dims: &[],
    },
    Sample {
        id: "ge-streams",
        title: "Two streams, a P2P tensor, a batch dim (JSON, GE features)",
        file: "ge-streams.json",
        format: SampleFormat::Json,
        source: "memplan, hand-written: a side branch on stream 1, an HCCL-style output in P2P_DDR memory, every shape by `batch` (set gears to see dynamic batch)",
        licence: "Apache-2.0",
        dims: &[],
    },
    Sample {
        id: "ge-node-rules",
        title: "GE node rules: continuous inputs, a ref output, atomic clean (JSON)",
        file: "ge-node-rules.json",
        format: SampleFormat::Json,
        source: "memplan, hand-written: an HCCL-style op that needs its two inputs adjacent, a Relu writing in place of its input (ref output), a reduction whose output is cleaned by a memset (atomic clean); figures worked out in core/tests/ge_block_samples.rs",
        licence: "Apache-2.0",
        dims: &[],
    },
    Sample {
        id: "tetris",
        title: "Tetris: 8 buffers (MiniMalloc CSV)",
        file: "tetris.csv",
        format: SampleFormat::Csv,
        source: "memplan, hand-written in MiniMalloc's CSV format",
        licence: "Apache-2.0",
        dims: &[],
    },
];

/// The sample with this id.
pub fn find(id: &str) -> Option<&'static Sample> {
    SAMPLES.iter().find(|s| s.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_exists_and_files_are_shipped() {
        assert!(find(DEFAULT_SAMPLE).is_some());
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../static/samples/");
        for s in SAMPLES {
            assert!(
                std::path::Path::new(&format!("{dir}{}", s.file)).exists(),
                "{}",
                s.file
            );
        }
        let mut ids: Vec<_> = SAMPLES.iter().map(|s| s.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), SAMPLES.len());
    }
}
