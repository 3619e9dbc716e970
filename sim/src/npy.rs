//! NumPy `.npy` files holding FP16 data (docs/spec.md §6.1).
//!
//! Read: format versions 1.0, 2.0 and 3.0, dtype `<f2` (kept as raw FP16
//! patterns) or `<f4` (rounded to FP16 with RNE), C order. Write: `<f2`,
//! version 1.0 (2.0 only if the header would not fit a 16-bit length).
//! `parse_any` also reads dtype `|i1` (INT8 KV sets, docs/spec.md §11.2),
//! which `to_bytes_i8` writes.

use crate::fp16;
use std::fmt;
use std::path::Path;

const MAGIC: &[u8; 6] = b"\x93NUMPY";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyError(pub String);

impl fmt::Display for NpyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NpyError {}

fn err<T>(msg: impl Into<String>) -> Result<T, NpyError> {
    Err(NpyError(msg.into()))
}

/// An array read from or written to a `.npy` file: FP16 patterns in C order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyArray {
    pub shape: Vec<usize>,
    pub data: Vec<u16>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dtype {
    F2,
    F4,
    I1,
}

/// The elements of an array read by `parse_any`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NpyData {
    /// FP16 patterns (`<f2`, or `<f4` rounded with RNE).
    F16(Vec<u16>),
    /// INT8 (`|i1`).
    I8(Vec<i8>),
}

/// An array of either element type, C order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyAny {
    pub shape: Vec<usize>,
    pub data: NpyData,
}

/// Python literal values that can appear in a `.npy` header dict.
#[derive(Debug)]
enum Lit {
    Str(String),
    Bool(bool),
    Tuple(Vec<u64>),
}

/// Recursive-descent parser for the header dict. Only the subset numpy writes
/// (string keys; string, bool and int-tuple values) is accepted.
struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }

    fn expect(&mut self, c: u8) -> Result<(), NpyError> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            err(format!("malformed header: expected '{}' at offset {}", c as char, self.i))
        }
    }

    fn string(&mut self) -> Result<String, NpyError> {
        let q = match self.peek() {
            Some(q @ (b'\'' | b'"')) => q,
            _ => return err(format!("malformed header: expected a string at offset {}", self.i)),
        };
        self.i += 1;
        let start = self.i;
        while self.i < self.s.len() && self.s[self.i] != q {
            if self.s[self.i] == b'\\' {
                return err("malformed header: escapes in strings are not supported");
            }
            self.i += 1;
        }
        if self.i == self.s.len() {
            return err("malformed header: unterminated string");
        }
        let v = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
        self.i += 1;
        Ok(v)
    }

    fn int(&mut self) -> Result<u64, NpyError> {
        self.ws();
        let start = self.i;
        while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
            self.i += 1;
        }
        // numpy on some platforms writes `3L`
        let digits = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
        if self.i < self.s.len() && self.s[self.i] == b'L' {
            self.i += 1;
        }
        digits
            .parse()
            .or_else(|_| err(format!("malformed header: expected a non-negative integer at offset {start}")))
    }

    fn value(&mut self) -> Result<Lit, NpyError> {
        match self.peek() {
            Some(b'\'' | b'"') => Ok(Lit::Str(self.string()?)),
            Some(b'(') => {
                self.i += 1;
                let mut v = Vec::new();
                loop {
                    if self.peek() == Some(b')') {
                        self.i += 1;
                        break;
                    }
                    v.push(self.int()?);
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b')') => {}
                        _ => return err(format!("malformed header: bad shape tuple at offset {}", self.i)),
                    }
                }
                Ok(Lit::Tuple(v))
            }
            _ => {
                let rest = &self.s[self.i..];
                if rest.starts_with(b"True") {
                    self.i += 4;
                    Ok(Lit::Bool(true))
                } else if rest.starts_with(b"False") {
                    self.i += 5;
                    Ok(Lit::Bool(false))
                } else {
                    err(format!("malformed header: unsupported value at offset {}", self.i))
                }
            }
        }
    }

    fn dict(&mut self) -> Result<Vec<(String, Lit)>, NpyError> {
        self.expect(b'{')?;
        let mut items = Vec::new();
        loop {
            if self.peek() == Some(b'}') {
                self.i += 1;
                break;
            }
            let k = self.string()?;
            self.expect(b':')?;
            let v = self.value()?;
            items.push((k, v));
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {}
                _ => return err(format!("malformed header: expected ',' or '}}' at offset {}", self.i)),
            }
        }
        if self.peek().is_some() {
            return err("malformed header: text after the dict");
        }
        Ok(items)
    }
}

/// Parses `.npy` bytes holding FP16 data (`<f2` or `<f4`).
pub fn parse(bytes: &[u8]) -> Result<NpyArray, NpyError> {
    let a = parse_any(bytes)?;
    match a.data {
        NpyData::F16(data) => Ok(NpyArray { shape: a.shape, data }),
        NpyData::I8(_) => err("unsupported dtype '|i1': expected '<f2' or '<f4'"),
    }
}

/// Parses `.npy` bytes of dtype `<f2`, `<f4` or `|i1`.
pub fn parse_any(bytes: &[u8]) -> Result<NpyAny, NpyError> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return err("not a .npy file (bad magic)");
    }
    let (major, minor) = (bytes[6], bytes[7]);
    let (hlen, hstart): (usize, usize) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            if bytes.len() < 12 {
                return err("truncated .npy header");
            }
            (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12)
        }
        _ => return err(format!("unsupported .npy format version {major}.{minor}")),
    };
    let hend = hstart.checked_add(hlen).filter(|&e| e <= bytes.len());
    let Some(hend) = hend else {
        return err(format!(
            "truncated .npy header: {hlen} bytes declared, {} present",
            bytes.len() - hstart
        ));
    };
    let header = &bytes[hstart..hend];
    if major < 3 && !header.is_ascii() {
        return err("malformed header: non-ASCII bytes");
    }
    let items = Parser { s: header, i: 0 }.dict()?;

    let (mut dtype, mut fortran, mut shape) = (None, None, None);
    for (k, v) in items {
        match (k.as_str(), v) {
            ("descr", Lit::Str(s)) => {
                dtype = Some(match s.as_str() {
                    "<f2" => Dtype::F2,
                    "<f4" => Dtype::F4,
                    "|i1" | "<i1" => Dtype::I1,
                    _ => return err(format!("unsupported dtype '{s}': expected '<f2', '<f4' or '|i1'")),
                })
            }
            ("fortran_order", Lit::Bool(b)) => fortran = Some(b),
            ("shape", Lit::Tuple(t)) => shape = Some(t),
            ("descr" | "fortran_order" | "shape", _) => {
                return err(format!("malformed header: key '{k}' has the wrong type"))
            }
            _ => return err(format!("malformed header: unexpected key '{k}'")),
        }
    }
    let (Some(dtype), Some(fortran), Some(shape)) = (dtype, fortran, shape) else {
        return err("malformed header: needs 'descr', 'fortran_order' and 'shape'");
    };
    if fortran {
        return err("Fortran-order arrays are not supported; save with C order (np.ascontiguousarray)");
    }
    let shape: Vec<usize> = shape
        .into_iter()
        .map(|d| usize::try_from(d).or_else(|_| err("shape dimension too large")))
        .collect::<Result<_, _>>()?;
    let count = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| NpyError("shape too large".into()))?;
    let item = match dtype {
        Dtype::F2 => 2,
        Dtype::F4 => 4,
        Dtype::I1 => 1,
    };
    let body = &bytes[hend..];
    let need = count.checked_mul(item).ok_or_else(|| NpyError("shape too large".into()))?;
    if body.len() < need {
        return err(format!("truncated .npy data: shape needs {need} bytes, file has {}", body.len()));
    }
    if body.len() > need {
        return err(format!("{} unexpected bytes after the .npy data", body.len() - need));
    }
    let data = match dtype {
        Dtype::F2 => NpyData::F16(body.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect()),
        Dtype::F4 => NpyData::F16(
            body.chunks_exact(4).map(|c| fp16::from_f32(f32::from_le_bytes([c[0], c[1], c[2], c[3]]))).collect(),
        ),
        Dtype::I1 => NpyData::I8(body.iter().map(|&b| b as i8).collect()),
    };
    Ok(NpyAny { shape, data })
}

/// Serialises FP16 patterns as a `<f2`, C-order `.npy` file.
pub fn to_bytes(shape: &[usize], data: &[u16]) -> Result<Vec<u8>, NpyError> {
    let mut out = header("<f2", shape, data.len())?;
    for &x in data {
        out.extend_from_slice(&x.to_le_bytes());
    }
    Ok(out)
}

/// Serialises INT8 values as a `|i1`, C-order `.npy` file.
pub fn to_bytes_i8(shape: &[usize], data: &[i8]) -> Result<Vec<u8>, NpyError> {
    let mut out = header("|i1", shape, data.len())?;
    out.extend(data.iter().map(|&x| x as u8));
    Ok(out)
}

/// Magic, version, length and the padded header dict.
fn header(descr: &str, shape: &[usize], len: usize) -> Result<Vec<u8>, NpyError> {
    let count = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    if count != Some(len) {
        return err(format!("shape {shape:?} does not match {len} elements"));
    }
    let dims = match shape {
        [d] => format!("({d},)"), // a 1-tuple needs its comma
        _ => format!("({})", shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")),
    };
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {dims}, }}");
    // numpy pads magic + length + header + '\n' to a multiple of 64 bytes
    let (major, prefix) = if dict.len() + 1 + 10 <= u16::MAX as usize { (1u8, 10) } else { (2u8, 12) };
    let total = (prefix + dict.len() + 1).div_ceil(64) * 64;
    let hlen = total - prefix;
    let mut out = Vec::with_capacity(total + 2 * len);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[major, 0]);
    if major == 1 {
        out.extend_from_slice(&(hlen as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(hlen as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    Ok(out)
}

pub fn read(path: &Path) -> Result<NpyArray, NpyError> {
    let bytes = std::fs::read(path).map_err(|e| NpyError(format!("{}: {e}", path.display())))?;
    parse(&bytes).map_err(|e| NpyError(format!("{}: {e}", path.display())))
}

pub fn read_any(path: &Path) -> Result<NpyAny, NpyError> {
    let bytes = std::fs::read(path).map_err(|e| NpyError(format!("{}: {e}", path.display())))?;
    parse_any(&bytes).map_err(|e| NpyError(format!("{}: {e}", path.display())))
}

pub fn write_i8(path: &Path, shape: &[usize], data: &[i8]) -> Result<(), NpyError> {
    let bytes = to_bytes_i8(shape, data)?;
    std::fs::write(path, bytes).map_err(|e| NpyError(format!("{}: {e}", path.display())))
}

pub fn write(path: &Path, shape: &[usize], data: &[u16]) -> Result<(), NpyError> {
    let bytes = to_bytes(shape, data)?;
    std::fs::write(path, bytes).map_err(|e| NpyError(format!("{}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(version: u8, header: &str, body: &[u8]) -> Vec<u8> {
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(&[version, 0]);
        if version == 1 {
            b.extend_from_slice(&(header.len() as u16).to_le_bytes());
        } else {
            b.extend_from_slice(&(header.len() as u32).to_le_bytes());
        }
        b.extend_from_slice(header.as_bytes());
        b.extend_from_slice(body);
        b
    }

    #[test]
    fn round_trip() {
        let data: Vec<u16> = (0..24).map(|i| 0x3C00 + i * 7).collect();
        for shape in [vec![2, 3, 4], vec![24], vec![1, 2, 1, 3, 4]] {
            let b = to_bytes(&shape, &data).unwrap();
            assert_eq!((b.len() - 48) % 64, 0); // header 64-aligned, then 48 data bytes
            assert_eq!(parse(&b).unwrap(), NpyArray { shape, data: data.clone() });
        }
        let b = to_bytes(&[], &[0x3C00]).unwrap();
        assert_eq!(parse(&b).unwrap(), NpyArray { shape: vec![], data: vec![0x3C00] });
        let b = to_bytes(&[0, 5], &[]).unwrap();
        assert_eq!(parse(&b).unwrap().shape, vec![0, 5]);
    }

    #[test]
    fn writes_numpys_exact_header() {
        let b = to_bytes(&[3], &[1, 2, 3]).unwrap();
        let want = "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }";
        assert_eq!(&b[..8], b"\x93NUMPY\x01\x00");
        assert_eq!(u16::from_le_bytes([b[8], b[9]]), 118);
        assert_eq!(&b[10..10 + want.len()], want.as_bytes());
        assert_eq!(b[127], b'\n');
        assert_eq!(&b[128..], &[1, 0, 2, 0, 3, 0]);
    }

    #[test]
    fn hand_built_headers() {
        // v1.0 f2, double quotes, no trailing comma, extra spaces
        let b =
            file(1, "{\"descr\":\"<f2\",\"fortran_order\":False,\"shape\":( 2 , 1 )}\n", &[0, 0x3C, 0, 0xC0]);
        assert_eq!(parse(&b).unwrap(), NpyArray { shape: vec![2, 1], data: vec![0x3C00, 0xC000] });
        // v2.0 f4: 1.0, -2.5, 65520 (overflows FP16), 1e-8 (rounds to a subnormal)
        let vals = [1.0f32, -2.5, 65520.0, 1e-8];
        let body: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
        let b = file(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", &body);
        assert_eq!(parse(&b).unwrap().data, vec![0x3C00, 0xC100, 0x7C00, 0x0000]);
        let b = file(1, "{'shape': (1L,), 'fortran_order': False, 'descr': '<f4'}", &6.0e-8f32.to_le_bytes());
        assert_eq!(parse(&b).unwrap().data, vec![0x0001]);
    }

    #[test]
    fn malformed_inputs() {
        let e = |b: Vec<u8>| parse(&b).unwrap_err().0;
        let ok_h = "{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }";
        assert!(e(b"NUMPY\x01\x00".to_vec()).contains("magic"));
        assert!(e(file(4, ok_h, &[0; 4])).contains("version 4.0"));
        assert!(e(file(1, ok_h, &[0; 3])).contains("truncated .npy data"));
        assert!(e(file(1, ok_h, &[0; 6])).contains("unexpected bytes"));
        let mut short = file(1, ok_h, &[]);
        short.truncate(20);
        assert!(e(short).contains("truncated .npy header"));
        assert!(e(file(1, "{'descr': '>f2', 'fortran_order': False, 'shape': (2,)}", &[0; 4]))
            .contains("dtype '>f2'"));
        assert!(
            e(file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,)}", &[0; 16])).contains("dtype")
        );
        assert!(
            e(file(1, "{'descr': '<f2', 'fortran_order': True, 'shape': (2,)}", &[0; 4])).contains("Fortran")
        );
        assert!(e(file(1, "{'descr': '<f2', 'shape': (2,)}", &[0; 4])).contains("needs"));
        assert!(e(file(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (2,-1)}", &[0; 4]))
            .contains("malformed"));
        assert!(e(file(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (2,)", &[0; 4]))
            .contains("malformed"));
        assert!(e(file(1, "{'descr': [('a', '<f2')], 'fortran_order': False, 'shape': (2,)}", &[0; 4]))
            .contains("malformed"));
        assert!(
            e(file(1, "{'descr': '<f2', 'fortran_order': 0, 'shape': (2,)}", &[0; 4])).contains("malformed")
        );
        assert!(e(file(
            1,
            "{'descr': '<f2', 'fortran_order': False, 'shape': (99999999999,99999999999,99999999999)}",
            &[]
        ))
        .contains("too large"));
        assert!(to_bytes(&[2, 2], &[0; 3]).is_err());
    }
}
