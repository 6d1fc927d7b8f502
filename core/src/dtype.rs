//! Element types and their storage size (ONNX `TensorProto.DataType` numbering).

/// An element type. Sizes follow ONNX: 4-bit types pack two per byte, `bool` is one byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[allow(missing_docs)]
pub enum DType {
    Float32,
    Uint8,
    Int8,
    Uint16,
    Int16,
    Int32,
    Int64,
    /// Variable-length strings: no fixed size; planned as one pointer-sized (8 byte) handle each.
    String,
    Bool,
    Float16,
    Float64,
    Uint32,
    Uint64,
    Complex64,
    Complex128,
    Bfloat16,
    Float8e4m3fn,
    Float8e4m3fnuz,
    Float8e5m2,
    Float8e5m2fnuz,
    Uint4,
    Int4,
    Float4e2m1,
    Float8e8m0,
    Uint2,
    Int2,
}

impl DType {
    /// Every type, for listings.
    pub const ALL: [DType; 26] = [
        DType::Float32,
        DType::Uint8,
        DType::Int8,
        DType::Uint16,
        DType::Int16,
        DType::Int32,
        DType::Int64,
        DType::String,
        DType::Bool,
        DType::Float16,
        DType::Float64,
        DType::Uint32,
        DType::Uint64,
        DType::Complex64,
        DType::Complex128,
        DType::Bfloat16,
        DType::Float8e4m3fn,
        DType::Float8e4m3fnuz,
        DType::Float8e5m2,
        DType::Float8e5m2fnuz,
        DType::Uint4,
        DType::Int4,
        DType::Float4e2m1,
        DType::Float8e8m0,
        DType::Uint2,
        DType::Int2,
    ];

    /// The ONNX `TensorProto.DataType` code.
    pub fn onnx_code(self) -> i32 {
        match self {
            DType::Float32 => 1,
            DType::Uint8 => 2,
            DType::Int8 => 3,
            DType::Uint16 => 4,
            DType::Int16 => 5,
            DType::Int32 => 6,
            DType::Int64 => 7,
            DType::String => 8,
            DType::Bool => 9,
            DType::Float16 => 10,
            DType::Float64 => 11,
            DType::Uint32 => 12,
            DType::Uint64 => 13,
            DType::Complex64 => 14,
            DType::Complex128 => 15,
            DType::Bfloat16 => 16,
            DType::Float8e4m3fn => 17,
            DType::Float8e4m3fnuz => 18,
            DType::Float8e5m2 => 19,
            DType::Float8e5m2fnuz => 20,
            DType::Uint4 => 21,
            DType::Int4 => 22,
            DType::Float4e2m1 => 23,
            DType::Float8e8m0 => 24,
            DType::Uint2 => 25,
            DType::Int2 => 26,
        }
    }

    /// The type with ONNX code `code`, if known (0 = UNDEFINED is not a type).
    pub fn from_onnx(code: i32) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.onnx_code() == code)
    }

    /// Storage bits per element.
    pub fn bits(self) -> u64 {
        match self {
            DType::Uint2 | DType::Int2 => 2,
            DType::Uint4 | DType::Int4 | DType::Float4e2m1 => 4,
            DType::Uint8
            | DType::Int8
            | DType::Bool
            | DType::Float8e4m3fn
            | DType::Float8e4m3fnuz
            | DType::Float8e5m2
            | DType::Float8e5m2fnuz
            | DType::Float8e8m0 => 8,
            DType::Uint16 | DType::Int16 | DType::Float16 | DType::Bfloat16 => 16,
            DType::Float32 | DType::Int32 | DType::Uint32 => 32,
            DType::Int64 | DType::Uint64 | DType::Float64 | DType::Complex64 | DType::String => 64,
            DType::Complex128 => 128,
        }
    }

    /// Bytes of `elements` elements: `ceil(elements * bits / 8)`, checked.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Overflow`] naming `what`.
    pub fn bytes(self, elements: u64, what: impl core::fmt::Display) -> crate::Result<u64> {
        // in u128: the bit count may exceed u64 while the byte count does not
        let bytes = (u128::from(elements) * u128::from(self.bits())).div_ceil(8);
        u64::try_from(bytes).map_err(|_| crate::Error::overflow(alloc::format!("{what}")))
    }

    /// Lowercase name (`float32`, `bfloat16`, `int4`).
    pub fn name(self) -> &'static str {
        match self {
            DType::Float32 => "float32",
            DType::Uint8 => "uint8",
            DType::Int8 => "int8",
            DType::Uint16 => "uint16",
            DType::Int16 => "int16",
            DType::Int32 => "int32",
            DType::Int64 => "int64",
            DType::String => "string",
            DType::Bool => "bool",
            DType::Float16 => "float16",
            DType::Float64 => "float64",
            DType::Uint32 => "uint32",
            DType::Uint64 => "uint64",
            DType::Complex64 => "complex64",
            DType::Complex128 => "complex128",
            DType::Bfloat16 => "bfloat16",
            DType::Float8e4m3fn => "float8e4m3fn",
            DType::Float8e4m3fnuz => "float8e4m3fnuz",
            DType::Float8e5m2 => "float8e5m2",
            DType::Float8e5m2fnuz => "float8e5m2fnuz",
            DType::Uint4 => "uint4",
            DType::Int4 => "int4",
            DType::Float4e2m1 => "float4e2m1",
            DType::Float8e8m0 => "float8e8m0",
            DType::Uint2 => "uint2",
            DType::Int2 => "int2",
        }
    }

    /// Parses a name: the lowercase names of [`DType::name`] plus `float`, `double`, `half`.
    pub fn parse(name: &str) -> Option<DType> {
        match name {
            "float" => Some(DType::Float32),
            "double" => Some(DType::Float64),
            "half" => Some(DType::Float16),
            _ => DType::ALL.into_iter().find(|d| d.name() == name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(DType::Float32.bytes(10, "t").unwrap(), 40);
        assert_eq!(DType::Int4.bytes(3, "t").unwrap(), 2);
        assert_eq!(DType::Bool.bytes(3, "t").unwrap(), 3);
        assert_eq!(DType::Float8e5m2.bytes(5, "t").unwrap(), 5);
        // bits overflow u64 while bytes do not: 10^18 float64 = 8 * 10^18 B
        assert_eq!(
            DType::Float64
                .bytes(1_000_000_000_000_000_000, "t")
                .unwrap(),
            8_000_000_000_000_000_000
        );
        assert_eq!(
            DType::Float64.bytes(u64::MAX / 8, "t").unwrap(),
            u64::MAX - 7
        );
        assert!(DType::Float64.bytes(u64::MAX / 8 + 1, "t").is_err());
        assert_eq!(DType::Int4.bytes(u64::MAX, "t").unwrap(), u64::MAX / 2 + 1);
        for d in DType::ALL {
            assert_eq!(DType::from_onnx(d.onnx_code()), Some(d));
            assert_eq!(DType::parse(d.name()), Some(d));
        }
    }
}
