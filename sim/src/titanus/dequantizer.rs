//! Bit-exact model of the Titanus dequantization unit (`titanus-dequantizer`)
//! and of the scale-zero table it reads.
//! Paper: Titanus (GLSVLSI 2025) §3.1 (reconstruction from index and label),
//! §4.4 (the three rules of the DQU), §4.1 (SZ buffer).
//! Spec: docs/spec.md §11.8.

use super::params::TitanusParams;
use super::quantizer::{reconstruct, Record, SzEntry};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SzError {
    ChannelOutOfRange,
    LevelOutOfRange,
}

impl fmt::Display for SzError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SzError::ChannelOutOfRange => "scale-zero entry channel out of range",
            SzError::LevelOutOfRange => "scale-zero entry level out of range",
        })
    }
}

/// `channels x max_levels` slots, each empty or holding an entry (spec §11.8.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SzTable {
    max_levels: usize,
    slots: Vec<Option<SzEntry>>,
}

impl SzTable {
    pub fn new(channels: usize, max_levels: usize) -> SzTable {
        SzTable { max_levels, slots: vec![None; channels * max_levels] }
    }

    /// Writes an entry into slot (channel, level); a rejected entry changes nothing.
    pub fn load(&mut self, e: &SzEntry) -> Result<(), SzError> {
        let c = e.channel as usize;
        if c * self.max_levels >= self.slots.len() {
            return Err(SzError::ChannelOutOfRange);
        }
        if e.level as usize >= self.max_levels {
            return Err(SzError::LevelOutOfRange);
        }
        self.slots[c * self.max_levels + e.level as usize] = Some(*e);
        Ok(())
    }

    /// Empties every slot (a new sequence).
    pub fn clear(&mut self) {
        self.slots.fill(None);
    }

    /// Level lookup: the highest level of `channel` whose start is `<= pos`.
    pub fn lookup(&self, channel: usize, pos: u32) -> Option<SzEntry> {
        let row = &self.slots[channel * self.max_levels..(channel + 1) * self.max_levels];
        row.iter().rev().flatten().find(|e| e.start as u32 <= pos).copied()
    }
}

/// Skip counters of the status port (spec §11.8.3), since reset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SkipCounters {
    /// Index bit 0: output 0, nothing read.
    pub pruned: u64,
    /// Label bit 0 (code 0): the level's code-0 value, no subtract or multiply.
    pub label_zero: u64,
    /// Code equal to the zero point (and not 0): output 0, no subtract or multiply.
    pub zero_point: u64,
    /// Codes that went through the subtractor and multiplier.
    pub multiplies: u64,
    /// Kept elements whose channel has no level at the token's position:
    /// output 0 (a table that does not match the stream).
    pub missing_level: u64,
}

#[derive(Clone, Debug)]
pub struct Dequantizer {
    pub table: SzTable,
    pub counters: SkipCounters,
    channels: usize,
}

impl Dequantizer {
    pub fn new(p: &TitanusParams) -> Dequantizer {
        Dequantizer {
            table: SzTable::new(p.channels, p.max_levels),
            counters: SkipCounters::default(),
            channels: p.channels,
        }
    }

    /// Rebuilds the INT8-domain vector of the token at position `pos`.
    pub fn dequantize(&mut self, pos: u32, r: &Record) -> Vec<i8> {
        assert_eq!(r.index.len(), self.channels, "record width");
        let mut codes = r.codes.iter();
        (0..self.channels)
            .map(|c| {
                if !r.index[c] {
                    self.counters.pruned += 1;
                    return 0;
                }
                let code = if r.label[c] { *codes.next().expect("one code per label bit") } else { 0 };
                let Some(e) = self.table.lookup(c, pos) else {
                    self.counters.missing_level += 1;
                    return 0;
                };
                if code == 0 {
                    self.counters.label_zero += 1;
                    reconstruct(e.scale as u32, e.zero as i32, 0) // per-level constant
                } else if code as i32 == e.zero as i32 {
                    self.counters.zero_point += 1;
                    0
                } else {
                    self.counters.multiplies += 1;
                    reconstruct(e.scale as u32, e.zero as i32, code)
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_takes_the_last_level_started() {
        let mut t = SzTable::new(2, 4);
        let e = |level, start| SzEntry { channel: 1, level, scale: 256, zero: 0, start };
        t.load(&e(0, 0)).unwrap();
        t.load(&e(1, 5)).unwrap();
        t.load(&e(2, 9)).unwrap();
        assert_eq!(t.lookup(1, 4).unwrap().level, 0);
        assert_eq!(t.lookup(1, 5).unwrap().level, 1);
        assert_eq!(t.lookup(1, 100).unwrap().level, 2);
        assert_eq!(t.lookup(0, 100), None);
        assert_eq!(t.load(&SzEntry { channel: 2, ..e(0, 0) }), Err(SzError::ChannelOutOfRange));
        assert_eq!(t.load(&e(4, 0)), Err(SzError::LevelOutOfRange));
    }

    #[test]
    fn missing_level_gives_zero_and_counts() {
        let p = TitanusParams { channels: 4, lanes: 4, layers: 1, max_levels: 2, max_prefill: 4 };
        let mut d = Dequantizer::new(&p);
        let r = Record {
            index: vec![true, false, false, false],
            label: vec![true, false, false, false],
            codes: vec![1],
        };
        assert_eq!(d.dequantize(0, &r), vec![0, 0, 0, 0]);
        assert_eq!(d.counters.missing_level, 1);
        assert_eq!(d.counters.pruned, 3);
    }
}
