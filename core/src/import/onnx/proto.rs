//! The ONNX protobuf messages, written by hand with `prost` (no `protoc`): only the fields the
//! importer reads. Unknown fields are skipped by the decoder without copying them.
//!
//! [`TensorProto`] has a hand-written decoder that keeps payloads (`raw_data`, `float_data`,
//! `int64_data`, ...) only up to [`SMALL_PAYLOAD`] bytes: weights are never copied, only their
//! dims, type and location are kept. Small tensors (shape constants) keep their values.
#![allow(missing_docs)] // field names are the ONNX ones (onnx.proto documents them)

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

use prost::bytes::{Buf, BufMut};
use prost::encoding::{self, DecodeContext, WireType};
use prost::DecodeError;

/// Payloads longer than this (bytes on the wire) are skipped, not stored.
pub const SMALL_PAYLOAD: usize = 4096;

/// `ModelProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ModelProto {
    #[prost(int64, tag = "1")]
    pub ir_version: i64,
    #[prost(string, tag = "2")]
    pub producer_name: String,
    #[prost(message, optional, tag = "7")]
    pub graph: Option<GraphProto>,
    #[prost(message, repeated, tag = "8")]
    pub opset_import: Vec<OperatorSetIdProto>,
}

/// `OperatorSetIdProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OperatorSetIdProto {
    #[prost(string, tag = "1")]
    pub domain: String,
    #[prost(int64, tag = "2")]
    pub version: i64,
}

/// `GraphProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GraphProto {
    #[prost(message, repeated, tag = "1")]
    pub node: Vec<NodeProto>,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(message, repeated, tag = "5")]
    pub initializer: Vec<TensorProto>,
    #[prost(message, repeated, tag = "15")]
    pub sparse_initializer: Vec<SparseTensorProto>,
    #[prost(message, repeated, tag = "11")]
    pub input: Vec<ValueInfoProto>,
    #[prost(message, repeated, tag = "12")]
    pub output: Vec<ValueInfoProto>,
    #[prost(message, repeated, tag = "13")]
    pub value_info: Vec<ValueInfoProto>,
}

/// `NodeProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NodeProto {
    #[prost(string, repeated, tag = "1")]
    pub input: Vec<String>,
    #[prost(string, repeated, tag = "2")]
    pub output: Vec<String>,
    #[prost(string, tag = "3")]
    pub name: String,
    #[prost(string, tag = "4")]
    pub op_type: String,
    #[prost(string, tag = "7")]
    pub domain: String,
    #[prost(message, repeated, tag = "5")]
    pub attribute: Vec<AttributeProto>,
}

/// `AttributeProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AttributeProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(int32, tag = "20")]
    pub r#type: i32,
    #[prost(float, tag = "2")]
    pub f: f32,
    #[prost(int64, tag = "3")]
    pub i: i64,
    #[prost(bytes = "vec", tag = "4")]
    pub s: Vec<u8>,
    #[prost(message, optional, tag = "5")]
    pub t: Option<TensorProto>,
    #[prost(message, optional, boxed, tag = "6")]
    pub g: Option<Box<GraphProto>>,
    #[prost(message, optional, tag = "22")]
    pub sparse_tensor: Option<SparseTensorProto>,
    #[prost(float, repeated, tag = "7")]
    pub floats: Vec<f32>,
    #[prost(int64, repeated, tag = "8")]
    pub ints: Vec<i64>,
    #[prost(bytes = "vec", repeated, tag = "9")]
    pub strings: Vec<Vec<u8>>,
    #[prost(message, repeated, tag = "10")]
    pub tensors: Vec<TensorProto>,
    #[prost(message, repeated, tag = "11")]
    pub graphs: Vec<GraphProto>,
}

/// `ValueInfoProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ValueInfoProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub r#type: Option<TypeProto>,
}

/// `TypeProto` (the `value` oneof as optional fields; at most one is set).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TypeProto {
    #[prost(message, optional, tag = "1")]
    pub tensor_type: Option<TypeTensor>,
    #[prost(message, optional, boxed, tag = "4")]
    pub sequence_type: Option<Box<TypeSequence>>,
    #[prost(message, optional, boxed, tag = "5")]
    pub map_type: Option<Box<TypeMap>>,
    #[prost(message, optional, boxed, tag = "9")]
    pub optional_type: Option<Box<TypeSequence>>,
    #[prost(message, optional, tag = "8")]
    pub sparse_tensor_type: Option<TypeTensor>,
}

/// `TypeProto.Tensor` (also `TypeProto.SparseTensor`, same fields).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TypeTensor {
    #[prost(int32, tag = "1")]
    pub elem_type: i32,
    #[prost(message, optional, tag = "2")]
    pub shape: Option<TensorShapeProto>,
}

/// `TypeProto.Sequence` (also `TypeProto.Optional`: one `elem_type` field).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TypeSequence {
    #[prost(message, optional, boxed, tag = "1")]
    pub elem_type: Option<Box<TypeProto>>,
}

/// `TypeProto.Map`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TypeMap {
    #[prost(int32, tag = "1")]
    pub key_type: i32,
    #[prost(message, optional, boxed, tag = "2")]
    pub value_type: Option<Box<TypeProto>>,
}

/// `TensorShapeProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorShapeProto {
    #[prost(message, repeated, tag = "1")]
    pub dim: Vec<Dimension>,
}

/// `TensorShapeProto.Dimension`: `dim_value` or `dim_param` or neither.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Dimension {
    #[prost(int64, optional, tag = "1")]
    pub dim_value: Option<i64>,
    #[prost(string, optional, tag = "2")]
    pub dim_param: Option<String>,
}

/// `SparseTensorProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SparseTensorProto {
    #[prost(message, optional, tag = "1")]
    pub values: Option<TensorProto>,
    #[prost(message, optional, tag = "2")]
    pub indices: Option<TensorProto>,
    #[prost(int64, repeated, tag = "3")]
    pub dims: Vec<i64>,
}

/// `StringStringEntryProto` (external-data `location`, `offset`, `length`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct StringStringEntryProto {
    #[prost(string, tag = "1")]
    pub key: String,
    #[prost(string, tag = "2")]
    pub value: String,
}

/// `TensorProto`, keeping payloads only when small (see [`SMALL_PAYLOAD`]).
#[derive(Clone, PartialEq, Default, Debug)]
pub struct TensorProto {
    pub dims: Vec<i64>,
    pub data_type: i32,
    pub name: String,
    /// `raw_data` when at most [`SMALL_PAYLOAD`] bytes.
    pub raw_data: Vec<u8>,
    pub float_data: Vec<f32>,
    pub int32_data: Vec<i32>,
    pub int64_data: Vec<i64>,
    pub double_data: Vec<f64>,
    pub uint64_data: Vec<u64>,
    /// Number of `string_data` entries (their bytes are not kept).
    pub string_count: u64,
    pub external_data: Vec<StringStringEntryProto>,
    /// 0 = DEFAULT, 1 = EXTERNAL.
    pub data_location: i32,
    /// A payload was larger than [`SMALL_PAYLOAD`] and was skipped (decoder only).
    pub payload_skipped: bool,
}

/// Skips a length-delimited field whose length exceeds [`SMALL_PAYLOAD`]; `Ok(true)` if skipped.
fn skip_if_large(
    wire_type: WireType,
    buf: &mut impl Buf,
    skipped: &mut bool,
) -> Result<bool, DecodeError> {
    if wire_type != WireType::LengthDelimited {
        return Ok(false);
    }
    let chunk = buf.chunk();
    let whole = chunk.len() == buf.remaining();
    let mut peek = chunk;
    let Ok(len) = encoding::decode_varint(&mut peek) else {
        return Ok(false); // let the regular decoder report it
    };
    let head = chunk.len() - peek.len();
    let Ok(len) = usize::try_from(len) else {
        return Ok(false);
    };
    if !whole || len <= SMALL_PAYLOAD || len > peek.len() {
        return Ok(false); // small, or truncated: the regular decoder keeps or reports it
    }
    buf.advance(head + len);
    *skipped = true;
    Ok(true)
}

impl prost::Message for TensorProto {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        encoding::int64::encode_packed(1, &self.dims, buf);
        if self.data_type != 0 {
            encoding::int32::encode(2, &self.data_type, buf);
        }
        encoding::float::encode_packed(4, &self.float_data, buf);
        encoding::int32::encode_packed(5, &self.int32_data, buf);
        encoding::int64::encode_packed(7, &self.int64_data, buf);
        if !self.name.is_empty() {
            encoding::string::encode(8, &self.name, buf);
        }
        if !self.raw_data.is_empty() {
            encoding::bytes::encode(9, &self.raw_data, buf);
        }
        encoding::double::encode_packed(10, &self.double_data, buf);
        encoding::uint64::encode_packed(11, &self.uint64_data, buf);
        encoding::message::encode_repeated(13, &self.external_data, buf);
        if self.data_location != 0 {
            encoding::int32::encode(14, &self.data_location, buf);
        }
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        match tag {
            1 => encoding::int64::merge_repeated(wire_type, &mut self.dims, buf, ctx),
            2 => encoding::int32::merge(wire_type, &mut self.data_type, buf, ctx),
            8 => encoding::string::merge(wire_type, &mut self.name, buf, ctx),
            13 => encoding::message::merge_repeated(wire_type, &mut self.external_data, buf, ctx),
            14 => encoding::int32::merge(wire_type, &mut self.data_location, buf, ctx),
            6 => {
                self.string_count = self.string_count.saturating_add(1);
                encoding::skip_field(wire_type, tag, buf, ctx)
            }
            4 | 5 | 7 | 9 | 10 | 11 => {
                if skip_if_large(wire_type, buf, &mut self.payload_skipped)? {
                    return Ok(());
                }
                let too_many = |n: usize| n.saturating_mul(8) > SMALL_PAYLOAD;
                // Unpacked repeated fields arrive one element at a time: cap them too.
                let full = match tag {
                    4 => too_many(self.float_data.len()),
                    5 => too_many(self.int32_data.len()),
                    7 => too_many(self.int64_data.len()),
                    9 => false,
                    10 => too_many(self.double_data.len()),
                    _ => too_many(self.uint64_data.len()),
                };
                if full {
                    self.payload_skipped = true;
                    return encoding::skip_field(wire_type, tag, buf, ctx);
                }
                match tag {
                    4 => encoding::float::merge_repeated(wire_type, &mut self.float_data, buf, ctx),
                    5 => encoding::int32::merge_repeated(wire_type, &mut self.int32_data, buf, ctx),
                    7 => encoding::int64::merge_repeated(wire_type, &mut self.int64_data, buf, ctx),
                    9 => encoding::bytes::merge(wire_type, &mut self.raw_data, buf, ctx),
                    10 => {
                        encoding::double::merge_repeated(wire_type, &mut self.double_data, buf, ctx)
                    }
                    _ => {
                        encoding::uint64::merge_repeated(wire_type, &mut self.uint64_data, buf, ctx)
                    }
                }
            }
            _ => encoding::skip_field(wire_type, tag, buf, ctx),
        }
    }

    fn encoded_len(&self) -> usize {
        let mut n = encoding::int64::encoded_len_packed(1, &self.dims)
            + encoding::float::encoded_len_packed(4, &self.float_data)
            + encoding::int32::encoded_len_packed(5, &self.int32_data)
            + encoding::int64::encoded_len_packed(7, &self.int64_data)
            + encoding::double::encoded_len_packed(10, &self.double_data)
            + encoding::uint64::encoded_len_packed(11, &self.uint64_data)
            + encoding::message::encoded_len_repeated(13, &self.external_data);
        if self.data_type != 0 {
            n += encoding::int32::encoded_len(2, &self.data_type);
        }
        if !self.name.is_empty() {
            n += encoding::string::encoded_len(8, &self.name);
        }
        if !self.raw_data.is_empty() {
            n += encoding::bytes::encoded_len(9, &self.raw_data);
        }
        if self.data_location != 0 {
            n += encoding::int32::encoded_len(14, &self.data_location);
        }
        n
    }

    fn clear(&mut self) {
        *self = TensorProto::default();
    }
}
