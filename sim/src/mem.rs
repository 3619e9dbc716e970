//! Sparse byte-addressed memory, the far side of the descriptors the MMU
//! model hands out (docs/spec.md §10). Tests write each token's bytes at its
//! placement descriptors and read them back at the read descriptors.
//!
//! Bytes never written read as 0. Storage is allocated per 4 KB chunk on
//! first write, so a 48-bit address space costs only what is touched.

use std::collections::BTreeMap;
use std::fmt;

const CHUNK: u64 = 4096;
pub const MAX_ADDR_BITS: u32 = 64;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemError {
    /// `addr_bits` outside 1..=64.
    AddrBits(u32),
    /// `[addr, addr + len)` does not fit in `2^addr_bits` bytes.
    OutOfRange { addr: u64, len: u64, addr_bits: u32 },
}

impl fmt::Display for MemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemError::AddrBits(b) => write!(f, "addr-bits must be in 1..={MAX_ADDR_BITS}, got {b}"),
            MemError::OutOfRange { addr, len, addr_bits } => write!(
                f,
                "access of {len} bytes at {addr:#x} leaves the {addr_bits}-bit address space"
            ),
        }
    }
}

impl std::error::Error for MemError {}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    addr_bits: u32,
    chunks: BTreeMap<u64, Box<[u8]>>,
}

impl Memory {
    pub fn new(addr_bits: u32) -> Result<Memory, MemError> {
        if addr_bits == 0 || addr_bits > MAX_ADDR_BITS {
            return Err(MemError::AddrBits(addr_bits));
        }
        Ok(Memory { addr_bits, chunks: BTreeMap::new() })
    }

    pub fn addr_bits(&self) -> u32 {
        self.addr_bits
    }

    // u128 so that neither addr + len nor 2^64 overflows.
    fn check(&self, addr: u64, len: u64) -> Result<(), MemError> {
        if addr as u128 + len as u128 > 1u128 << self.addr_bits {
            return Err(MemError::OutOfRange { addr, len, addr_bits: self.addr_bits });
        }
        Ok(())
    }

    /// Writes all of `data` at `addr`, or nothing if any byte is out of range.
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemError> {
        self.check(addr, data.len() as u64)?;
        let mut a = addr;
        let mut rest = data;
        while !rest.is_empty() {
            let off = (a % CHUNK) as usize;
            let n = rest.len().min(CHUNK as usize - off);
            let chunk = self
                .chunks
                .entry(a / CHUNK)
                .or_insert_with(|| vec![0u8; CHUNK as usize].into_boxed_slice());
            chunk[off..off + n].copy_from_slice(&rest[..n]);
            rest = &rest[n..];
            a += n as u64;
        }
        Ok(())
    }

    pub fn read(&self, addr: u64, len: usize) -> Result<Vec<u8>, MemError> {
        self.check(addr, len as u64)?;
        let mut out = Vec::with_capacity(len);
        let mut a = addr;
        while out.len() < len {
            let off = (a % CHUNK) as usize;
            let n = (len - out.len()).min(CHUNK as usize - off);
            match self.chunks.get(&(a / CHUNK)) {
                Some(c) => out.extend_from_slice(&c[off..off + n]),
                None => out.resize(out.len() + n, 0),
            }
            a += n as u64;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_round_trip_across_chunks() {
        let mut m = Memory::new(20).unwrap();
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7 + 3) as u8).collect();
        m.write(4000, &data).unwrap();
        assert_eq!(m.read(4000, data.len()).unwrap(), data);
        // untouched bytes on both sides read as 0
        assert_eq!(m.read(3990, 10).unwrap(), vec![0; 10]);
        assert_eq!(m.read(14_000, 5).unwrap(), vec![0; 5]);
        assert_eq!(m.read(3998, 4).unwrap(), vec![0, 0, data[0], data[1]]);
    }

    #[test]
    fn mem_range_errors_change_nothing() {
        assert_eq!(Memory::new(0).unwrap_err(), MemError::AddrBits(0));
        assert_eq!(Memory::new(65).unwrap_err(), MemError::AddrBits(65));
        let mut m = Memory::new(9).unwrap();
        m.write(508, &[1, 2, 3, 4]).unwrap();
        let before = m.clone();
        let e = m.write(510, &[9, 9, 9]).unwrap_err();
        assert_eq!(e, MemError::OutOfRange { addr: 510, len: 3, addr_bits: 9 });
        assert!(!e.to_string().contains('\n'));
        assert_eq!(m, before);
        assert!(m.read(512, 1).is_err());
        assert_eq!(m.read(512, 0).unwrap(), Vec::<u8>::new());
        assert!(m.read(u64::MAX, 2).is_err());
        let m64 = Memory::new(64).unwrap();
        assert_eq!(m64.read(u64::MAX, 1).unwrap(), vec![0]);
        assert!(m64.read(u64::MAX, 2).is_err());
    }
}
