//! Inline `<DataArray>` contents of VTK XML files: base64 blocks with a length header, raw
//! or zlib-compressed (`compressor="vtkZLibDataCompressor"`), and ASCII arrays.
//!
//! Uncompressed binary: base64 of `[byte count][data]`. Compressed binary: the data is cut
//! into blocks of [`BLOCK_SIZE`] bytes, each compressed with zlib; the header
//! `[number of blocks][block size][size of the last block if partial, else 0][compressed
//! size of each block]` is base64-encoded on its own, followed by the base64 of the
//! compressed blocks one after the other (VTK's XML file format, "Compressed data"). Header
//! words are `UInt64` in what Supple writes; `UInt32` headers are read as well.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use flate2::write::ZlibEncoder;
use flate2::Compression;
use rayon::prelude::*;
use std::io::Write;

/// Uncompressed bytes per zlib block (VTK's default).
pub const BLOCK_SIZE: usize = 1 << 15;

/// zlib level of written frames: level 1 (fastest) gives most of level 6's size reduction on
/// simulation frames at a fraction of its time (EXPERIMENTS.md, "Output size").
const LEVEL: u32 = 1;

/// Base64 text of `data` as an uncompressed block with a `UInt64` length header.
pub fn encode_raw(data: &[u8]) -> String {
    let mut block = Vec::with_capacity(8 + data.len());
    block.extend_from_slice(&(data.len() as u64).to_le_bytes());
    block.extend_from_slice(data);
    STANDARD.encode(&block)
}

/// Base64 text of `data` compressed in zlib blocks with a `UInt64` header.
pub fn encode_zlib(data: &[u8]) -> std::io::Result<String> {
    // Blocks are independent: compressed in parallel, gathered in order (same bytes for
    // any thread count).
    let blocks: Vec<Vec<u8>> = data
        .par_chunks(BLOCK_SIZE)
        .map(|chunk| {
            let mut z = ZlibEncoder::new(Vec::new(), Compression::new(LEVEL));
            z.write_all(chunk)?;
            z.finish()
        })
        .collect::<std::io::Result<_>>()?;
    let mut header: Vec<u64> = vec![
        blocks.len() as u64,
        BLOCK_SIZE as u64,
        (data.len() % BLOCK_SIZE) as u64,
    ];
    header.extend(blocks.iter().map(|b| b.len() as u64));
    let header: Vec<u8> = header.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut text = STANDARD.encode(&header);
    text.push_str(&STANDARD.encode(blocks.concat()));
    Ok(text)
}

/// Width of the header words (`header_type` of `<VTKFile>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderType {
    UInt32,
    UInt64,
}

impl HeaderType {
    /// From the `header_type` attribute (absent: `UInt32`, VTK's legacy default).
    pub fn from_attr(value: Option<&str>) -> Result<Self, String> {
        match value {
            None | Some("UInt32") => Ok(Self::UInt32),
            Some("UInt64") => Ok(Self::UInt64),
            Some(other) => Err(format!("header_type=\"{other}\" is not supported")),
        }
    }

    fn width(self) -> usize {
        match self {
            Self::UInt32 => 4,
            Self::UInt64 => 8,
        }
    }

    fn word(self, bytes: &[u8]) -> u64 {
        match self {
            Self::UInt32 => u64::from(u32::from_le_bytes(bytes.try_into().unwrap_or([0; 4]))),
            Self::UInt64 => u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8])),
        }
    }
}

/// Decodes the base64 text of a binary `<DataArray>` to its raw bytes.
pub fn decode_binary(text: &str, header: HeaderType, zlib: bool) -> Result<Vec<u8>, String> {
    let text: String = text.split_ascii_whitespace().collect();
    let w = header.width();
    if !zlib {
        let raw = STANDARD
            .decode(&text)
            .map_err(|e| format!("bad base64: {e}"))?;
        let len = raw.get(..w).map(|h| header.word(h));
        return match len {
            Some(len) if len == (raw.len() - w) as u64 => Ok(raw[w..].to_vec()),
            _ => Err("the length header does not match the data".into()),
        };
    }
    // The first three header words, alone, to learn the number of blocks.
    let chars = |bytes: usize| bytes.div_ceil(3) * 4;
    let first = STANDARD
        .decode(
            text.get(..chars(3 * w))
                .ok_or("truncated compression header")?,
        )
        .map_err(|e| format!("bad base64 in the compression header: {e}"))?;
    let n_blocks = header.word(&first[..w]);
    let n_blocks = usize::try_from(n_blocks)
        .ok()
        .filter(|&n| n <= text.len())
        .ok_or_else(|| format!("compression header: {n_blocks} blocks is impossible"))?;
    let header_len = chars((3 + n_blocks) * w);
    let head = STANDARD
        .decode(
            text.get(..header_len)
                .ok_or("truncated compression header")?,
        )
        .map_err(|e| format!("bad base64 in the compression header: {e}"))?;
    let words: Vec<u64> = head.chunks_exact(w).map(|c| header.word(c)).collect();
    let (block_size, last) = (words[1], words[2]);
    let data = STANDARD
        .decode(&text[header_len..])
        .map_err(|e| format!("bad base64 in the compressed data: {e}"))?;
    let mut out = Vec::new();
    let mut at = 0usize;
    for (k, &size) in words[3..].iter().enumerate() {
        let end = usize::try_from(size)
            .ok()
            .and_then(|s| at.checked_add(s))
            .filter(|&e| e <= data.len())
            .ok_or_else(|| format!("compressed block {k} runs past the data"))?;
        let expected = if k + 1 == n_blocks && last != 0 {
            last
        } else {
            block_size
        };
        let mut z = flate2::write::ZlibDecoder::new(Vec::new());
        z.write_all(&data[at..end])
            .and_then(|()| z.finish())
            .map_err(|e| format!("compressed block {k}: {e}"))
            .and_then(|block| {
                if block.len() as u64 == expected {
                    out.extend_from_slice(&block);
                    Ok(())
                } else {
                    Err(format!(
                        "compressed block {k} holds {} bytes, the header says {expected}",
                        block.len()
                    ))
                }
            })?;
        at = end;
    }
    Ok(out)
}

/// Numbers of a typed array, widened: floats to `f64`, integers to `i64`.
#[derive(Debug, Clone, PartialEq)]
pub enum Numbers {
    Float(Vec<f64>),
    Int(Vec<i64>),
}

impl Numbers {
    /// Number of values.
    pub fn len(&self) -> usize {
        match self {
            Self::Float(v) => v.len(),
            Self::Int(v) => v.len(),
        }
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values as `f64` (integers converted).
    pub fn into_f64(self) -> Vec<f64> {
        match self {
            Self::Float(v) => v,
            Self::Int(v) => v.into_iter().map(|i| i as f64).collect(),
        }
    }

    /// The values as integers; floats are refused.
    pub fn into_i64(self) -> Option<Vec<i64>> {
        match self {
            Self::Float(_) => None,
            Self::Int(v) => Some(v),
        }
    }
}

/// Interprets little-endian `bytes` as an array of VTK type `ty`.
#[allow(clippy::modulo_one)] // the size check is generic over the width, 1 included
pub fn numbers_from_bytes(ty: &str, bytes: &[u8]) -> Result<Numbers, String> {
    macro_rules! conv {
        ($t:ty, $variant:ident, $wide:ty) => {{
            const N: usize = std::mem::size_of::<$t>();
            if bytes.len() % N != 0 {
                return Err(format!(
                    "{} bytes is not a whole number of {ty} values",
                    bytes.len()
                ));
            }
            Ok(Numbers::$variant(
                bytes
                    .chunks_exact(N)
                    .map(|c| <$t>::from_le_bytes(c.try_into().unwrap_or([0; N])) as $wide)
                    .collect(),
            ))
        }};
    }
    match ty {
        "Float64" => conv!(f64, Float, f64),
        "Float32" => conv!(f32, Float, f64),
        "Int64" => conv!(i64, Int, i64),
        // Values above i64::MAX wrap to negatives, which no index check accepts.
        "UInt64" => conv!(u64, Int, i64),
        "Int32" => conv!(i32, Int, i64),
        "UInt32" => conv!(u32, Int, i64),
        "Int16" => conv!(i16, Int, i64),
        "UInt16" => conv!(u16, Int, i64),
        "Int8" => conv!(i8, Int, i64),
        "UInt8" => conv!(u8, Int, i64),
        other => Err(format!("type=\"{other}\" is not supported")),
    }
}

/// Parses an ASCII array of VTK type `ty`.
pub fn numbers_from_ascii(ty: &str, text: &str) -> Result<Numbers, String> {
    let words = text.split_ascii_whitespace();
    if ty.starts_with("Float") {
        words
            .map(|w| {
                w.parse::<f64>()
                    .map_err(|_| format!("`{w}` is not a number"))
            })
            .collect::<Result<_, _>>()
            .map(Numbers::Float)
    } else if ty.starts_with("Int") || ty.starts_with("UInt") {
        words
            .map(|w| {
                w.parse::<i64>()
                    .map_err(|_| format!("`{w}` is not an integer"))
            })
            .collect::<Result<_, _>>()
            .map(Numbers::Int)
    } else {
        Err(format!("type=\"{ty}\" is not supported"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zlib_blocks_round_trip_at_block_boundaries() {
        for len in [
            0,
            1,
            BLOCK_SIZE - 1,
            BLOCK_SIZE,
            BLOCK_SIZE + 1,
            3 * BLOCK_SIZE,
        ] {
            let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let text = encode_zlib(&data).unwrap();
            assert_eq!(
                decode_binary(&text, HeaderType::UInt64, true).unwrap(),
                data
            );
            let raw = encode_raw(&data);
            assert_eq!(
                decode_binary(&raw, HeaderType::UInt64, false).unwrap(),
                data
            );
        }
    }

    #[test]
    fn corrupt_compressed_data_is_an_error_not_a_panic() {
        let data: Vec<u8> = (0..100_000).map(|i| (i % 13) as u8).collect();
        let text = encode_zlib(&data).unwrap();
        for cut in [0, 5, 40, 60, text.len() / 2, text.len() - 4] {
            let _ = decode_binary(&text[..cut], HeaderType::UInt64, true);
        }
        let mut bad = text.clone().into_bytes();
        let mid = bad.len() / 2;
        bad[mid] = if bad[mid] == b'A' { b'B' } else { b'A' };
        let bad = String::from_utf8(bad).unwrap();
        assert!(decode_binary(&bad, HeaderType::UInt64, true).is_err());
        assert!(decode_binary(&text, HeaderType::UInt32, true).is_err());
    }
}
