//! Bit-exact model of the Titanus quantization unit (`titanus-quantizer`):
//! max-min finder, non-zero quantizer, tolerance updater, channel monitor with
//! HierQuant, scheduler.
//! Paper: Titanus (GLSVLSI 2025) §2.3 (per-channel quantization and its
//! re-quantization problem), §3.2 and Figure 2 (HQE), §4.4 and Figure 7 (QU).
//! Spec: docs/spec.md §11.5-§11.7.

use super::params::{ConfigTable, TitanusParams, MAX_POSITIONS};
use super::pruner::Pruned;
use crate::oaken::thresholds::Kv;
use std::fmt;

/// Floor division for a positive divisor (rounds toward minus infinity).
pub fn floor_div(a: i64, b: i64) -> i64 {
    a.div_euclid(b)
}

/// Ceiling division for a positive divisor.
pub fn ceil_div(a: i64, b: i64) -> i64 {
    -(-a).div_euclid(b)
}

/// One quantization level of one channel (spec §11.5.2-§11.5.3): the range
/// it was built from, its scale `S` (UQ8.8, step `S/256`), its zero point
/// `z` (a code, signed), and its tolerance range `[tl, th]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    pub lo: i32,
    pub hi: i32,
    pub scale: u32,
    pub zero: i32,
    pub tl: i32,
    pub th: i32,
    /// Position of the first token quantized with this level.
    pub start: u32,
}

impl Level {
    /// NZQ and tolerance updater for the range `[lo, hi]` at `bits` bits.
    pub fn new(lo: i32, hi: i32, bits: u8, start: u32) -> Level {
        debug_assert!(lo <= hi && (-128..=127).contains(&lo) && (-128..=127).contains(&hi));
        let q = (1i64 << bits) - 1;
        let r = (hi - lo) as i64;
        // never finer than one INT8 step: the inputs are integers (§11.5.2)
        let s = ceil_div(256 * r, q).max(256);
        // grid centred on the range midpoint; zero point rounded half down,
        // the one tie rule that keeps both ends of the range in tolerance
        let z = ceil_div(q * s - 256 * (lo + hi) as i64 - s, 2 * s);
        let tl = ceil_div(-(2 * z + 1) * s, 512).max(-128);
        let th = (ceil_div((2 * q + 1 - 2 * z) * s, 512) - 1).min(127);
        Level { lo, hi, scale: s as u32, zero: z as i32, tl: tl as i32, th: th as i32, start }
    }

    pub fn contains(&self, x: i32) -> bool {
        self.tl <= x && x <= self.th
    }

    /// The code before clamping (§11.5.3).
    pub fn raw_code(&self, x: i32) -> i64 {
        raw_code(self.scale, self.zero, x)
    }

    /// The code, clamped to `0 ..= 2^bits - 1` (clamping happens only at the
    /// level limit, §11.6).
    pub fn code(&self, x: i32, bits: u8) -> u8 {
        self.raw_code(x).clamp(0, (1 << bits) - 1) as u8
    }
}

/// The code of `x` under a level `(S, z)` before clamping (spec §11.5.3):
/// `floor((512x + 2zS + S) / 2S)`.
pub fn raw_code(scale: u32, zero: i32, x: i32) -> i64 {
    let s = scale as i64;
    floor_div(512 * x as i64 + 2 * zero as i64 * s + s, 2 * s)
}

/// `x` rounds to 0 at the scale `S`: `-s/2 <= x < s/2`, i.e. `-S <= 512x <
/// S`. Exactly the kept elements the DQU rebuilds as 0 (spec §11.8.2).
pub fn rounds_to_zero(scale: u32, x: i32) -> bool {
    let (s, x) = (scale as i64, x as i64);
    -s <= 512 * x && 512 * x < s
}

/// Reconstruction of one code into the INT8 domain (spec §11.8):
/// `clamp(floor(((q - z) S + 128) / 256), -128, 127)`.
pub fn reconstruct(scale: u32, zero: i32, code: u8) -> i8 {
    floor_div((code as i64 - zero as i64) * scale as i64 + 128, 256).clamp(-128, 127) as i8
}

/// A scale-zero table entry as the QU emits it (spec §11.7.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SzEntry {
    pub channel: u16,
    pub level: u8,
    pub scale: u16,
    pub zero: i16,
    pub start: u16,
}

/// Stored width of an entry: scale 16 + zero point 9 + start 16 bits.
pub const SZ_STORED_BITS: usize = 41;

impl SzEntry {
    /// The 64-bit output word: `[15:0]` scale, `[24:16]` zero point (9-bit
    /// two's complement), `[47:32]` start, `[51:48]` level, `[61:52]` channel.
    pub fn word(&self) -> u64 {
        self.scale as u64
            | ((self.zero as u64) & 0x1FF) << 16
            | (self.start as u64) << 32
            | (self.level as u64 & 0xF) << 48
            | (self.channel as u64 & 0x3FF) << 52
    }

    pub fn from_word(w: u64) -> SzEntry {
        let z = ((w >> 16) & 0x1FF) as i16;
        SzEntry {
            scale: w as u16,
            zero: if z & 0x100 != 0 { z - 0x200 } else { z },
            start: (w >> 32) as u16,
            level: ((w >> 48) & 0xF) as u8,
            channel: ((w >> 52) & 0x3FF) as u16,
        }
    }
}

/// What a token leaves in memory (spec §11.7.1): index mask, label mask
/// (positional here; stored compacted), and the non-zero codes in channel
/// order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    pub index: Vec<bool>,
    pub label: Vec<bool>,
    pub codes: Vec<u8>,
}

impl Record {
    pub fn stored_bits(&self, bits: u8) -> usize {
        let k = self.index.iter().filter(|&&b| b).count();
        self.index.len() + k + bits as usize * self.codes.len()
    }

    /// The stored bit string, bit 0 first: `C` index bits, one label bit per
    /// kept channel, then `bits` bits per code (LSB first).
    pub fn pack(&self, bits: u8) -> Vec<bool> {
        let mut out = self.index.clone();
        out.extend(self.index.iter().zip(&self.label).filter(|(&i, _)| i).map(|(_, &l)| l));
        for &c in &self.codes {
            out.extend((0..bits).map(|b| c >> b & 1 == 1));
        }
        out
    }

    /// Inverse of `pack`; the bit string must have exactly the length its
    /// masks imply.
    pub fn unpack(s: &[bool], channels: usize, bits: u8) -> Result<Record, String> {
        if s.len() < channels {
            return Err(format!("record of {} bits is shorter than its {channels}-bit index", s.len()));
        }
        let index = s[..channels].to_vec();
        let k = index.iter().filter(|&&b| b).count();
        if s.len() < channels + k {
            return Err(format!("record of {} bits is shorter than its masks ({})", s.len(), channels + k));
        }
        let mut lab = s[channels..channels + k].iter();
        let label: Vec<bool> = index.iter().map(|&i| i && *lab.next().expect("k label bits")).collect();
        let m = label.iter().filter(|&&b| b).count();
        let want = channels + k + bits as usize * m;
        if s.len() != want {
            return Err(format!("record has {} bits, its masks say {want}", s.len()));
        }
        let codes = s[channels + k..]
            .chunks(bits as usize)
            .map(|c| c.iter().enumerate().fold(0u8, |a, (i, &b)| a | (b as u8) << i))
            .collect();
        Ok(Record { index, label, codes })
    }
}

/// One output transaction of the QU (spec §11.7).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TokenOut {
    pub pos: u32,
    pub record: Record,
    /// Scale-zero entries created for this token, in channel order.
    pub entries: Vec<SzEntry>,
    /// Kept elements clamped because their channel is at the level limit.
    pub saturated: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Idle,
    Prefill,
    Quant,
    Decode,
}

/// A rejected input: the token is not stored and the state is unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuantError {
    /// A token or flush arrived in IDLE: no sequence, so no layer or width.
    NoStart,
    /// A prefill token after the prefill ended.
    PrefillAfterDecode,
    /// The prefill buffer holds `max_prefill` tokens already.
    PrefillFull,
    /// The sequence already has 65,536 tokens (16-bit positions).
    SequenceFull,
    /// The index mask does not have `channels` bits, or the value count is
    /// not its popcount (model-level check; hardware cannot express it).
    BadVector,
}

impl fmt::Display for QuantError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            QuantError::NoStart => "no sequence started",
            QuantError::PrefillAfterDecode => "prefill token after the prefill ended",
            QuantError::PrefillFull => "prefill buffer full",
            QuantError::SequenceFull => "sequence has 65536 tokens",
            QuantError::BadVector => "index mask and values do not match the channel count",
        })
    }
}

/// Status port (spec §11.6.4): counters since reset, sticky flags.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QuantStatus {
    pub levels_opened: u64,
    pub saturated: u64,
    pub limit_hit: bool,
    /// Channels with no kept prefill element, at the last end of prefill.
    pub empty_channels: u32,
    /// Channels whose prefill range was a single value, at the last end of prefill.
    pub single_value_channels: u32,
    /// The last prefill ended with no token.
    pub no_prefill: bool,
    pub layer_oob: bool,
    pub rejected: u64,
}

/// One half (K or V) of the QU. The hardware's two halves share the
/// scheduler; each behaves as this model.
#[derive(Clone, Debug)]
pub struct Quantizer {
    p: TitanusParams,
    kv: Kv,
    phase: Phase,
    bits: u8,
    next_pos: usize,
    mmf_max: Vec<i8>,
    mmf_min: Vec<i8>,
    buffer: Vec<Pruned>,
    levels: Vec<Vec<Level>>,
    pub status: QuantStatus,
}

impl Quantizer {
    /// `p` must be valid (`TitanusParams::validate`).
    pub fn new(p: TitanusParams, kv: Kv) -> Quantizer {
        Quantizer {
            p,
            kv,
            phase: Phase::Idle,
            bits: 4,
            next_pos: 0,
            mmf_max: vec![i8::MIN; p.channels],
            mmf_min: vec![i8::MAX; p.channels],
            buffer: Vec::new(),
            levels: vec![Vec::new(); p.channels],
            status: QuantStatus::default(),
        }
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    pub fn bits(&self) -> u8 {
        self.bits
    }

    /// Levels currently held by each channel.
    pub fn level_counts(&self) -> Vec<usize> {
        self.levels.iter().map(Vec::len).collect()
    }

    pub fn levels(&self, channel: usize) -> &[Level] {
        &self.levels[channel]
    }

    /// The MMF registers of a channel, `(max, min)`.
    pub fn mmf(&self, channel: usize) -> (i8, i8) {
        (self.mmf_max[channel], self.mmf_min[channel])
    }

    /// Starts a sequence: latches the layer's bit width, clears every
    /// channel, enters PREFILL. An unfinished prefill is flushed first and
    /// its outputs returned (nothing is dropped).
    pub fn start(&mut self, layer: usize, table: &ConfigTable) -> Vec<TokenOut> {
        let out = if self.phase == Phase::Prefill { self.end_prefill() } else { Vec::new() };
        let (cfg, oob) = table.lookup(layer, self.kv);
        self.status.layer_oob |= oob;
        self.bits = cfg.bits;
        self.next_pos = 0;
        self.mmf_max.fill(i8::MIN);
        self.mmf_min.fill(i8::MAX);
        self.buffer.clear();
        self.levels.iter_mut().for_each(Vec::clear);
        self.phase = Phase::Prefill;
        out
    }

    fn check(&mut self, t: &Pruned) -> Result<(), QuantError> {
        let r = if self.phase == Phase::Idle {
            Err(QuantError::NoStart)
        } else if t.index.len() != self.p.channels || t.values.len() != t.index.iter().filter(|&&b| b).count()
        {
            Err(QuantError::BadVector)
        } else if self.next_pos >= MAX_POSITIONS {
            Err(QuantError::SequenceFull)
        } else {
            Ok(())
        };
        if r.is_err() {
            self.status.rejected += 1;
        }
        r
    }

    /// A prefill token: buffered, and seen by the MMF.
    pub fn prefill(&mut self, t: &Pruned) -> Result<(), QuantError> {
        self.check(t)?;
        let e = match self.phase {
            Phase::Decode => Some(QuantError::PrefillAfterDecode),
            _ if self.buffer.len() >= self.p.max_prefill => Some(QuantError::PrefillFull),
            _ => None,
        };
        if let Some(e) = e {
            self.status.rejected += 1;
            return Err(e);
        }
        let mut vals = t.values.iter();
        for (c, _) in t.index.iter().enumerate().filter(|(_, &i)| i) {
            let x = *vals.next().expect("checked count");
            self.mmf_max[c] = self.mmf_max[c].max(x);
            self.mmf_min[c] = self.mmf_min[c].min(x);
        }
        self.buffer.push(t.clone());
        self.next_pos += 1;
        Ok(())
    }

    /// Ends the prefill (QUANT): level 0 of every channel that saw a kept
    /// element, then the buffered tokens quantized in order; enters DECODE.
    pub fn flush(&mut self) -> Result<Vec<TokenOut>, QuantError> {
        match self.phase {
            Phase::Idle => {
                self.status.rejected += 1;
                Err(QuantError::NoStart)
            }
            Phase::Prefill | Phase::Quant => Ok(self.end_prefill()),
            Phase::Decode => Ok(Vec::new()),
        }
    }

    fn end_prefill(&mut self) -> Vec<TokenOut> {
        self.phase = Phase::Quant;
        let mut entries = Vec::new();
        let (mut empty, mut single) = (0, 0);
        for c in 0..self.p.channels {
            let (hi, lo) = (self.mmf_max[c] as i32, self.mmf_min[c] as i32);
            if hi < lo {
                empty += 1; // MMF never updated: no level until a kept decode value
                continue;
            }
            single += (hi == lo) as u32;
            let l = Level::new(lo, hi, self.bits, 0);
            entries.push(self.entry(c, 0, &l));
            self.levels[c].push(l);
            self.status.levels_opened += 1;
        }
        self.status.empty_channels = empty;
        self.status.single_value_channels = single;
        self.status.no_prefill = self.buffer.is_empty();
        let buffer = std::mem::take(&mut self.buffer);
        let mut out: Vec<TokenOut> = buffer
            .iter()
            .enumerate()
            .map(|(pos, t)| {
                let codes: Vec<Option<u8>> = self.expand(t, |c, x, q: &mut Quantizer| {
                    let l = q.levels[c].last().expect("kept prefill channel has level 0");
                    l.code(x, q.bits)
                });
                TokenOut {
                    pos: pos as u32,
                    record: record(&t.index, &codes),
                    entries: Vec::new(),
                    saturated: 0,
                }
            })
            .collect();
        if let Some(first) = out.first_mut() {
            first.entries = entries;
        }
        self.phase = Phase::Decode;
        out
    }

    fn entry(&self, c: usize, level: usize, l: &Level) -> SzEntry {
        SzEntry {
            channel: c as u16,
            level: level as u8,
            scale: l.scale as u16,
            zero: l.zero as i16,
            start: l.start as u16,
        }
    }

    /// Applies `f(channel, value)` to each kept element; pruned elements give None.
    fn expand(&mut self, t: &Pruned, mut f: impl FnMut(usize, i32, &mut Quantizer) -> u8) -> Vec<Option<u8>> {
        let mut vals = t.values.iter();
        let index = t.index.clone();
        index
            .iter()
            .enumerate()
            .map(|(c, &i)| i.then(|| f(c, *vals.next().expect("checked") as i32, self)))
            .collect()
    }

    /// A decode token. In PREFILL the prefill ends first and its outputs come
    /// before this token's.
    pub fn decode(&mut self, t: &Pruned) -> Result<Vec<TokenOut>, QuantError> {
        self.check(t)?;
        let mut out = if self.phase == Phase::Prefill { self.end_prefill() } else { Vec::new() };
        let pos = self.next_pos as u32;
        let bits = self.bits;
        let max_levels = self.p.max_levels;
        let mut entries = Vec::new();
        let mut saturated = 0;
        let codes = self.expand(t, |c, x, q| {
            let ch = &mut q.levels[c];
            let grow = match ch.last() {
                None => Some((x, x)),
                Some(l) if l.contains(x) => None,
                Some(l) if ch.len() < max_levels => Some((l.lo.min(x), l.hi.max(x))),
                Some(_) => {
                    saturated += 1;
                    None
                }
            };
            if let Some((lo, hi)) = grow {
                let l = Level::new(lo, hi, bits, pos);
                ch.push(l);
                q.status.levels_opened += 1;
                entries.push(q.entry(c, q.levels[c].len() - 1, &l));
            }
            q.levels[c].last().expect("a level exists now").code(x, bits)
        });
        self.status.saturated += saturated as u64;
        self.status.limit_hit |= saturated > 0;
        self.next_pos += 1;
        out.push(TokenOut { pos, record: record(&t.index, &codes), entries, saturated });
        Ok(out)
    }
}

/// Label = kept and code != 0; values = the non-zero codes in channel order.
fn record(index: &[bool], codes: &[Option<u8>]) -> Record {
    let label: Vec<bool> = codes.iter().map(|c| matches!(c, Some(q) if *q != 0)).collect();
    let values = codes.iter().filter_map(|&c| c.filter(|&q| q != 0)).collect();
    Record { index: index.to_vec(), label, codes: values }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerance_range_is_exactly_the_unclamped_code_range() {
        for bits in [2u8, 3, 4] {
            let q = (1i64 << bits) - 1;
            for lo in -128..=127 {
                for hi in lo..=127 {
                    let l = Level::new(lo, hi, bits, 0);
                    assert!(l.contains(lo) && l.contains(hi), "{l:?}");
                    assert!((256..=21760).contains(&l.scale), "scale width {l:?}");
                    assert!((-126..=135).contains(&l.zero), "zero point range of §11.5.2 {l:?}");
                    for x in -128..=127 {
                        let raw = l.raw_code(x);
                        assert_eq!(l.contains(x), (0..=q).contains(&raw), "{l:?} x={x}");
                    }
                }
            }
        }
    }

    #[test]
    fn error_bound_inside_the_tolerance_range() {
        for bits in [2u8, 3, 4] {
            for lo in -128..=127 {
                for hi in lo..=127 {
                    let l = Level::new(lo, hi, bits, 0);
                    for x in l.tl..=l.th {
                        let y = reconstruct(l.scale, l.zero, l.code(x, bits));
                        let e = (y as i64 - x as i64).abs();
                        assert!(512 * e <= l.scale as i64 + 256, "{l:?} x={x} e={e}");
                        // rebuilt as 0 exactly when x rounds to 0 at the
                        // level's scale (spec §11.8.2)
                        assert_eq!(y == 0, rounds_to_zero(l.scale, x), "{l:?} x={x} y={y}");
                    }
                }
            }
        }
    }

    #[test]
    fn sz_word_round_trips() {
        for e in [
            SzEntry { channel: 1023, level: 15, scale: 21760, zero: -125, start: 65535 },
            SzEntry { channel: 0, level: 0, scale: 256, zero: 136, start: 0 },
            SzEntry { channel: 5, level: 3, scale: 1110, zero: -1, start: 7 },
        ] {
            assert_eq!(SzEntry::from_word(e.word()), e);
        }
    }

    #[test]
    fn record_pack_round_trips() {
        let r = Record {
            index: vec![true, false, true, true],
            label: vec![true, false, false, true],
            codes: vec![3, 1],
        };
        let s = r.pack(2);
        assert_eq!(s.len(), r.stored_bits(2));
        assert_eq!(s.len(), 4 + 3 + 4);
        assert_eq!(Record::unpack(&s, 4, 2).unwrap(), r);
        assert!(Record::unpack(&s[..10], 4, 2).is_err());
    }
}
