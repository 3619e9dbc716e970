//! Bit-exact models of `packkv-encoder` and `packkv-decoder`'s unpacking
//! (docs/spec.md §14.4-§14.7): median repacking, per-pack minimum and
//! width, the block bitstream, and the decoder's checks of a stream.

use super::params::{Interleave, PackKvParams, Repack, GPU_GROUP, HEADER_BITS, META_BITS};
use super::quantizer::TokenMeta as Meta;

/// A little-endian bitstream of 32-bit words: field bit 0 first; stream
/// bit `k` is bit `k mod 32` of word `k div 32` (spec §14.4).
#[derive(Clone, Debug, Default)]
pub struct BitWriter {
    pub words: Vec<u32>,
    pub bits: usize,
}

impl BitWriter {
    pub fn put(&mut self, v: u64, n: u32) {
        assert!(n <= 32 && v >> n == 0, "{v} wider than {n} bits");
        for i in 0..n as usize {
            if self.bits % 32 == 0 {
                self.words.push(0);
            }
            self.words[self.bits / 32] |= (((v >> i) & 1) as u32) << (self.bits % 32);
            self.bits += 1;
        }
    }
}

pub struct BitReader<'a> {
    pub words: &'a [u32],
    pub pos: usize,
}

impl BitReader<'_> {
    /// `None` past the end of the words.
    pub fn get(&mut self, n: u32) -> Option<u32> {
        let mut v = 0u32;
        for i in 0..n as usize {
            let w = *self.words.get(self.pos / 32)?;
            v |= ((w >> (self.pos % 32)) & 1) << i;
            self.pos += 1;
        }
        Some(v)
    }
}

/// A block's tokens as quantized, in arrival order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenBlock {
    pub meta: Vec<Meta>,
    pub rows: Vec<Vec<u8>>,
    pub nonfinite: bool,
}

/// The lower median of a row of codes: the smallest `m` with at least
/// `ceil(n / 2)` codes `<= m` (torch.median's choice; spec §14.5).
pub fn lower_median(codes: &[u8]) -> u8 {
    let mut hist = [0usize; 256];
    for &q in codes {
        hist[q as usize] += 1;
    }
    let need = codes.len().div_ceil(2);
    let mut acc = 0;
    for (m, &h) in hist.iter().enumerate() {
        acc += h;
        if acc >= need {
            return m as u8;
        }
    }
    unreachable!("empty row")
}

/// Median repacking: row order by V median descending, ties by arrival
/// (a stable counting sort). `order[i]` is the arrival index of stored row `i`.
pub fn median_order(v_rows: &[Vec<u8>]) -> Vec<usize> {
    let med: Vec<u8> = v_rows.iter().map(|r| lower_median(r)).collect();
    let mut order = Vec::with_capacity(v_rows.len());
    for m in (0..=255u8).rev() {
        order.extend((0..v_rows.len()).filter(|&t| med[t] == m));
    }
    order
}

/// Why the encoder refused a block, or the decoder a block of the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockError {
    /// Encoder: a code above `N` (or a pack range past the raw width).
    Overflow,
    /// Decoder: reserved bits set, a raw width other than the parameters',
    /// or a length shorter than the fixed part (spec §14.7).
    BadHeader,
    /// Decoder: a pack width above the raw width `r`.
    BadWidth,
    /// Decoder: a pack minimum plus a code above `N`.
    BadCode,
    /// Decoder: the header's length differs from the length its widths give.
    BadLength,
    /// Decoder: the stream ends inside the block.
    Truncated,
    /// Decoder: the stored permutation is not one.
    BadPermutation,
}

/// The bits of one encoded block, by kind (spec §14.9).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockBits {
    pub header: usize,
    pub meta: usize,
    pub perm: usize,
    pub fields: usize,
    pub payload: usize,
    pub pad: usize,
}

impl BlockBits {
    pub fn total(&self) -> usize {
        self.header + self.meta + self.perm + self.fields + self.payload + self.pad
    }

    pub fn add(&mut self, o: &BlockBits) {
        self.header += o.header;
        self.meta += o.meta;
        self.perm += o.perm;
        self.fields += o.fields;
        self.payload += o.payload;
        self.pad += o.pad;
    }
}

/// Channel of the `i`-th pack of a pack row in payload order.
pub fn payload_channel(p: &PackKvParams, i: usize) -> usize {
    match p.interleave {
        Interleave::None => i,
        Interleave::Gpu => {
            let (g, j) = (i / GPU_GROUP, i % GPU_GROUP);
            g * GPU_GROUP + (j % 32) * 4 + j / 32
        }
    }
}

/// `ceil(log2(range + 1))`: 0 for an all-equal pack.
pub fn pack_width(range: u32) -> u32 {
    32 - range.leading_zeros()
}

/// Minimum and width of every pack, `[row][channel]`.
pub fn pack_fields(p: &PackKvParams, rows: &[Vec<u8>]) -> Vec<Vec<(u8, u32)>> {
    let c = p.vector_len();
    (0..p.rows())
        .map(|r| {
            (0..c)
                .map(|ch| {
                    let col = (0..p.pack).map(|t| rows[r * p.pack + t][ch]);
                    let (lo, hi) = col.fold((u8::MAX, 0u8), |(lo, hi), q| (lo.min(q), hi.max(q)));
                    (lo, pack_width((hi - lo) as u32))
                })
                .collect()
        })
        .collect()
}

/// `packkv-encoder` on one block whose rows are already in stored order;
/// `perm` (the arrival index of each stored row) only for a K block.
pub fn encode_block(p: &PackKvParams, meta: &[Meta], rows: &[Vec<u8>], perm: Option<&[usize]>, nonfinite: bool) -> Result<(Vec<u32>, BlockBits), BlockError> {
    let (b, c, r, wb) = (p.block, p.vector_len(), p.raw_bits(), p.width_bits());
    assert!(meta.len() == b && rows.len() == b && rows.iter().all(|x| x.len() == c));
    if rows.iter().flatten().any(|&q| q as u32 > p.levels) {
        return Err(BlockError::Overflow);
    }
    let fields = pack_fields(p, rows);
    let mut bits = BlockBits { header: HEADER_BITS, meta: META_BITS * b, ..Default::default() };
    let mut w = BitWriter::default();
    w.put(0, 32); // the header, written last
    for m in meta {
        w.put(m.word() as u64, 32);
    }
    if let Some(perm) = perm {
        let lb = b.trailing_zeros();
        for &i in perm {
            w.put(i as u64, lb);
        }
        bits.perm = b * lb as usize;
    }
    for (ri, row_fields) in fields.iter().enumerate() {
        for &(min, width) in row_fields {
            w.put(min as u64 | (width as u64) << r, r + wb);
        }
        bits.fields += c * (r + wb) as usize;
        for i in 0..c {
            let ch = payload_channel(p, i);
            let (min, width) = row_fields[ch];
            for t in 0..p.pack {
                w.put((rows[ri * p.pack + t][ch] - min) as u64, width);
            }
            bits.payload += p.pack * width as usize;
        }
    }
    bits.pad = (32 - w.bits % 32) % 32;
    let len = w.words.len();
    assert!(len < 1 << 20);
    w.words[0] = len as u32 | r << 20 | (perm.is_some() as u32) << 24 | (nonfinite as u32) << 25;
    assert_eq!(bits.total(), 32 * len);
    Ok((w.words, bits))
}

/// `packkv-encoder` on a K and a V block of the same tokens (spec §14.5),
/// with the K and the V parameters (they may differ in `levels` only):
/// with `repack = median` both are stored in the V-median order, and the
/// permutation goes into the K block.
pub fn encode_pair(p: &PackKvParams, pv: &PackKvParams, k: &TokenBlock, v: &TokenBlock) -> Result<[(Vec<u32>, BlockBits); 2], BlockError> {
    assert_eq!(PackKvParams { levels: p.levels, ..pv.clone() }, *p, "K and V differ only in levels");
    let order: Vec<usize> = match p.repack {
        Repack::None => (0..p.block).collect(),
        Repack::Median => median_order(&v.rows),
    };
    let perm = (p.repack == Repack::Median).then_some(&order[..]);
    let arrange = |x: &TokenBlock| -> (Vec<Meta>, Vec<Vec<u8>>) {
        (order.iter().map(|&i| x.meta[i]).collect(), order.iter().map(|&i| x.rows[i].clone()).collect())
    };
    let (km, kr) = arrange(k);
    let (vm, vr) = arrange(v);
    Ok([encode_block(p, &km, &kr, perm, k.nonfinite)?, encode_block(pv, &vm, &vr, None, v.nonfinite)?])
}

/// One block as `packkv-decoder` unpacks it, rows in stored order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodedBlock {
    pub meta: Vec<Meta>,
    pub rows: Vec<Vec<u8>>,
    pub perm: Option<Vec<usize>>,
    pub nonfinite: bool,
    pub words: usize,
}

impl DecodedBlock {
    /// Rows back in arrival order (identity without a permutation).
    pub fn arrival_rows(&self) -> (Vec<Meta>, Vec<Vec<u8>>) {
        match &self.perm {
            None => (self.meta.clone(), self.rows.clone()),
            Some(perm) => {
                let mut m = vec![Meta::default(); perm.len()];
                let mut r = vec![vec![]; perm.len()];
                for (i, &a) in perm.iter().enumerate() {
                    m[a] = self.meta[i];
                    r[a] = self.rows[i].clone();
                }
                (m, r)
            }
        }
    }
}

/// Decodes the block starting at `words[0]`; `Err((e, skip))` says how many
/// words to skip to the next block (0: stop, the stream is exhausted).
pub fn decode_block(p: &PackKvParams, words: &[u32]) -> Result<DecodedBlock, (BlockError, usize)> {
    let (b, c, r, wb) = (p.block, p.vector_len(), p.raw_bits(), p.width_bits());
    let Some(&h) = words.first() else { return Err((BlockError::Truncated, 0)) };
    let len = (h & 0xF_FFFF) as usize;
    let has_perm = h >> 24 & 1 == 1;
    let fixed = 1 + b + if has_perm { b * b.trailing_zeros() as usize / 32 } else { 0 };
    let skip = if len == 0 || len > words.len() { 0 } else { len };
    if h >> 26 != 0 || (h >> 20 & 0xF) != r || len < fixed {
        return Err((BlockError::BadHeader, skip));
    }
    if len > words.len() {
        return Err((BlockError::Truncated, 0));
    }
    let mut rd = BitReader { words: &words[..len], pos: 32 };
    let meta: Vec<Meta> = (0..b).map(|_| Meta::from_word(rd.get(32).unwrap())).collect();
    let perm = if has_perm {
        let lb = b.trailing_zeros();
        let perm: Vec<usize> = (0..b).map(|_| rd.get(lb).unwrap() as usize).collect();
        let mut seen = vec![false; b];
        for &i in &perm {
            if std::mem::replace(&mut seen[i], true) {
                return Err((BlockError::BadPermutation, skip));
            }
        }
        Some(perm)
    } else {
        None
    };
    let mut rows = vec![vec![0u8; c]; b];
    let mut err = None;
    for ri in 0..p.rows() {
        let mut fields = Vec::with_capacity(c);
        for _ in 0..c {
            let f = rd.get(r + wb).ok_or((BlockError::BadLength, skip))?;
            let (min, width) = (f & ((1 << r) - 1), f >> r);
            if width > r {
                return Err((BlockError::BadWidth, skip));
            }
            fields.push((min, width));
        }
        for i in 0..c {
            let ch = payload_channel(p, i);
            let (min, width) = fields[ch];
            for t in 0..p.pack {
                let q = min + rd.get(width).ok_or((BlockError::BadLength, skip))?;
                if q > p.levels {
                    err.get_or_insert(BlockError::BadCode);
                }
                rows[ri * p.pack + t][ch] = q.min(255) as u8;
            }
        }
    }
    if let Some(e) = err {
        return Err((e, skip));
    }
    if rd.pos.div_ceil(32) != len {
        return Err((BlockError::BadLength, skip));
    }
    Ok(DecodedBlock { meta, rows, perm, nonfinite: h >> 25 & 1 == 1, words: len })
}

/// `packkv-decoder` on a stream of blocks: one result per block; after a
/// bad block it resumes at the header's length, or stops when that length
/// is unusable (spec §14.7).
pub fn decode_stream(p: &PackKvParams, words: &[u32]) -> Vec<Result<DecodedBlock, BlockError>> {
    let mut out = vec![];
    let mut at = 0;
    while at < words.len() {
        match decode_block(p, &words[at..]) {
            Ok(d) => {
                at += d.words;
                out.push(Ok(d));
            }
            Err((e, skip)) => {
                out.push(Err(e));
                if skip == 0 {
                    break;
                }
                at += skip;
            }
        }
    }
    out
}
