//! A JPEG's entropy-coded data walked to its end, without decoding pixels:
//! the check that every scan holds every block its header promises.
//!
//! The decoder pads a scan that ends early (at an end marker that follows
//! cut-short data, say) with zeros and returns a whole frame whose missing
//! part is made up, even in its strict mode. Walking the Huffman codes of
//! every block — the sequential and progressive forms the decoder reads —
//! finds where the data runs out: a scan must decode all its blocks before
//! its data ends, and a progressive image must bring every coefficient of
//! every component to full precision.

/// The most components a frame may have (the JPEG limit is 255; the
/// decoder reads at most 4).
const MAX_COMPONENTS: usize = 4;

/// The most scans a file may have. Encoders write 1 (sequential) to
/// about 20 (progressive: libjpeg's default script has 10); each scan
/// visits every block of its components, and a progressive scan can cover
/// thousands of blocks with one code, so the bound keeps a small hostile
/// file from costing minutes.
const MAX_SCANS: usize = 128;

/// Why a JPEG is refused: the message of a decode error.
pub(super) type ScanError = String;

/// Code lengths resolved by one table look-up; longer codes take the
/// canonical walk.
const FAST_BITS: u32 = 9;

/// One Huffman table, in the canonical form of the JPEG standard (F.2.2.3):
/// for each code length, the largest code, and where its values start;
/// plus a look-up of the codes of up to [`FAST_BITS`] bits.
#[derive(Clone)]
struct Huffman {
    /// Largest code of each length 1..=16 (index 0 unused), −1 when none.
    max_code: [i32; 17],
    /// Index in `values` of the first code of each length, minus that
    /// code.
    offset: [i32; 17],
    values: Vec<u8>,
    /// For each [`FAST_BITS`]-bit prefix: `length << 8 | value` of the
    /// code it starts with, 0 when that code is longer.
    fast: Vec<u16>,
}

impl Huffman {
    fn parse(counts: &[u8; 16], values: &[u8]) -> Result<Huffman, ScanError> {
        let mut max_code = [-1i32; 17];
        let mut offset = [0i32; 17];
        let mut fast = vec![0u16; 1 << FAST_BITS];
        let mut code = 0i32;
        let mut k = 0i32;
        for len in 1..=16 {
            let n = i32::from(counts[len - 1]);
            if code + n > (1 << len) {
                return Err("JPEG Huffman table has too many codes".into());
            }
            if n > 0 {
                offset[len] = k - code;
                if len as u32 <= FAST_BITS {
                    let spread = FAST_BITS - len as u32;
                    for c in code..code + n {
                        let value = values[(k + c - code) as usize];
                        let first = (c as usize) << spread;
                        for slot in &mut fast[first..first + (1 << spread)] {
                            *slot = (len as u16) << 8 | u16::from(value);
                        }
                    }
                }
                code += n;
                k += n;
                max_code[len] = code - 1;
            }
            code <<= 1;
        }
        Ok(Huffman {
            max_code,
            offset,
            values: values.to_vec(),
            fast,
        })
    }
}

/// A component of the frame header.
#[derive(Clone, Copy)]
struct Component {
    id: u8,
    h: usize,
    v: usize,
}

/// Reads bits from entropy-coded data, undoing byte stuffing, through a
/// 64-bit buffer; stops at a marker, which it does not consume. `None`
/// from a read: the data ended first.
struct Bits<'a> {
    data: &'a [u8],
    /// The next byte not yet in the buffer.
    pos: usize,
    /// Buffered bits, the next one highest.
    acc: u64,
    n: u32,
    /// A marker (or the end of the file) is at `pos`.
    at_marker: bool,
}

impl Bits<'_> {
    fn fill(&mut self) {
        while self.n <= 56 && !self.at_marker {
            let Some(&b) = self.data.get(self.pos) else {
                self.at_marker = true;
                break;
            };
            if b == 0xFF {
                if self.data.get(self.pos + 1) != Some(&0x00) {
                    self.at_marker = true;
                    break;
                }
                self.pos += 2;
            } else {
                self.pos += 1;
            }
            self.acc |= u64::from(b) << (56 - self.n);
            self.n += 8;
        }
    }

    fn bits(&mut self, k: u8) -> Option<u32> {
        let k = u32::from(k);
        if k == 0 {
            return Some(0);
        }
        if self.n < k {
            self.fill();
            if self.n < k {
                return None;
            }
        }
        let v = (self.acc >> (64 - k)) as u32;
        self.acc <<= k;
        self.n -= k;
        Some(v)
    }

    fn bit(&mut self) -> Option<u32> {
        self.bits(1)
    }

    fn decode(&mut self, t: &Huffman) -> Option<Result<u8, ScanError>> {
        if self.n < 16 {
            self.fill();
        }
        let entry = t.fast[(self.acc >> (64 - FAST_BITS)) as usize];
        let len = u32::from(entry >> 8);
        if len > 0 {
            if len > self.n {
                return None;
            }
            self.acc <<= len;
            self.n -= len;
            return Some(Ok(entry as u8));
        }
        for len in FAST_BITS as usize + 1..=16 {
            if len as u32 > self.n {
                return None;
            }
            let code = (self.acc >> (64 - len)) as i32;
            if code <= t.max_code[len] {
                self.acc <<= len;
                self.n -= len as u32;
                let i = (t.offset[len] + code) as usize;
                return Some(
                    t.values
                        .get(i)
                        .copied()
                        .ok_or_else(|| "JPEG Huffman code without a value".into()),
                );
            }
        }
        Some(Err("JPEG data holds an invalid Huffman code".into()))
    }

    /// Drops the rest of the current byte (the padding before a marker).
    fn align(&mut self) {
        let pad = self.n % 8;
        self.acc <<= pad;
        self.n -= pad;
    }

    /// At a restart boundary: after the padding, marker `RSTn` and nothing
    /// else; steps over it.
    fn restart(&mut self, n: usize) -> bool {
        self.align();
        if self.n == 0 {
            self.fill();
        }
        let want = 0xD0 + (n % 8) as u8;
        if self.n > 0 || !self.at_marker {
            return false;
        }
        if self.data.get(self.pos) != Some(&0xFF) || self.data.get(self.pos + 1) != Some(&want) {
            return false;
        }
        self.pos += 2;
        self.at_marker = false;
        self.acc = 0;
        true
    }
}

/// What the walk needs of one scan.
struct Scan {
    /// Indices into the frame's components, with their DC and AC tables.
    comps: Vec<(usize, usize, usize)>,
    ss: usize,
    se: usize,
    ah: u8,
    al: u8,
}

/// The markers of a JPEG file, and the frame it describes.
struct Walk<'a> {
    data: &'a [u8],
    progressive: bool,
    width: usize,
    height: usize,
    comps: Vec<Component>,
    dc: [Option<Huffman>; 4],
    ac: [Option<Huffman>; 4],
    restart: usize,
    /// Per component and coefficient (zig-zag order): the precision the
    /// scans so far brought it to (the point transform, 0 = full), or
    /// `None` before any scan held it.
    precision: Vec<[Option<u8>; 64]>,
    /// Progressive: per component and block, which coefficients are
    /// non-zero (bit k, zig-zag order), needed to read refinement scans.
    nonzero: Vec<Vec<u64>>,
    scans: usize,
}

/// Checks that the entropy-coded data of every scan of `data` (a whole JPEG
/// file) holds all the blocks of the frame, and, for a progressive JPEG,
/// that the scans bring every coefficient to full precision. Arithmetic
/// coding and the lossless and hierarchical processes are left to the
/// decoder (which refuses them).
pub(super) fn check(data: &[u8]) -> Result<(), ScanError> {
    if data.get(..2) != Some(&[0xFF, 0xD8]) {
        return Err("not a JPEG file (no start-of-image marker)".into());
    }
    let mut w = Walk {
        data,
        progressive: false,
        width: 0,
        height: 0,
        comps: Vec::new(),
        dc: Default::default(),
        ac: Default::default(),
        restart: 0,
        precision: Vec::new(),
        nonzero: Vec::new(),
        scans: 0,
    };
    let mut pos = 2;
    loop {
        // The next marker: FF (fill bytes FF) and a code; other bytes
        // between segments are skipped, as the decoder does.
        while pos < data.len() && data[pos] != 0xFF {
            pos += 1;
        }
        while pos < data.len() && data[pos] == 0xFF {
            pos += 1;
        }
        let Some(&marker) = data.get(pos) else {
            return Err("truncated JPEG (no end-of-image marker)".into());
        };
        pos += 1;
        match marker {
            0xD9 => return w.finish(),
            0x00 | 0x01 | 0xD0..=0xD8 => continue,
            _ => {}
        }
        let len = usize::from(u16::from_be_bytes([
            *data.get(pos).ok_or("truncated JPEG header")?,
            *data.get(pos + 1).ok_or("truncated JPEG header")?,
        ]));
        let body = data
            .get(pos + 2..pos + len.max(2))
            .ok_or("truncated JPEG header")?;
        pos += len.max(2);
        match marker {
            0xC0..=0xC2 => w.frame(marker == 0xC2, body)?,
            // Lossless, hierarchical and arithmetic-coded frames: the
            // decoder's to refuse.
            0xC3 | 0xC5..=0xC7 | 0xC9..=0xCB | 0xCD..=0xCF => return Ok(()),
            0xC4 => w.tables(body)?,
            0xDD => {
                let ri = body.get(..2).ok_or("truncated JPEG restart interval")?;
                w.restart = usize::from(u16::from_be_bytes([ri[0], ri[1]]));
            }
            0xDA => pos = w.scan(body, pos)?,
            _ => {}
        }
    }
}

impl Walk<'_> {
    fn frame(&mut self, progressive: bool, body: &[u8]) -> Result<(), ScanError> {
        if !self.comps.is_empty() {
            return Err("JPEG with two frame headers".into());
        }
        let head = body.get(..6).ok_or("truncated JPEG frame header")?;
        self.progressive = progressive;
        self.height = usize::from(u16::from_be_bytes([head[1], head[2]]));
        self.width = usize::from(u16::from_be_bytes([head[3], head[4]]));
        let n = usize::from(head[5]);
        if self.width == 0 || self.height == 0 {
            return Err("JPEG frame header without a size".into());
        }
        if n == 0 || n > MAX_COMPONENTS {
            return Err(format!("JPEG with {n} components"));
        }
        for c in 0..n {
            let f = body
                .get(6 + 3 * c..9 + 3 * c)
                .ok_or("truncated JPEG frame header")?;
            let (h, v) = (usize::from(f[1] >> 4), usize::from(f[1] & 15));
            if !(1..=4).contains(&h) || !(1..=4).contains(&v) {
                return Err("JPEG sampling factor out of range".into());
            }
            self.comps.push(Component { id: f[0], h, v });
        }
        self.precision = vec![[None; 64]; n];
        if progressive {
            self.nonzero = (0..n)
                .map(|c| {
                    let (x, y) = self.blocks(c);
                    vec![0u64; x * y]
                })
                .collect();
        }
        Ok(())
    }

    fn h_max(&self) -> usize {
        self.comps.iter().map(|c| c.h).max().unwrap_or(1)
    }

    fn v_max(&self) -> usize {
        self.comps.iter().map(|c| c.v).max().unwrap_or(1)
    }

    /// Blocks across and down of component `c` on its own (A.2.2).
    fn blocks(&self, c: usize) -> (usize, usize) {
        let comp = self.comps[c];
        let x = (self.width * comp.h).div_ceil(self.h_max());
        let y = (self.height * comp.v).div_ceil(self.v_max());
        (x.div_ceil(8), y.div_ceil(8))
    }

    fn tables(&mut self, mut body: &[u8]) -> Result<(), ScanError> {
        while !body.is_empty() {
            let head = body.get(..17).ok_or("truncated JPEG Huffman table")?;
            let (class, id) = (head[0] >> 4, usize::from(head[0] & 15));
            let counts: [u8; 16] = head[1..17].try_into().unwrap_or([0; 16]);
            let n: usize = counts.iter().map(|&c| usize::from(c)).sum();
            let values = body.get(17..17 + n).ok_or("truncated JPEG Huffman table")?;
            if id > 3 || class > 1 {
                return Err("JPEG Huffman table out of range".into());
            }
            let table = Some(Huffman::parse(&counts, values)?);
            if class == 0 {
                self.dc[id] = table;
            } else {
                self.ac[id] = table;
            }
            body = &body[17 + n..];
        }
        Ok(())
    }

    /// Walks the scan whose header is `body` and whose data starts at
    /// `start`; returns where its data ends (at the next marker).
    fn scan(&mut self, body: &[u8], start: usize) -> Result<usize, ScanError> {
        if self.comps.is_empty() {
            return Err("JPEG scan before the frame header".into());
        }
        self.scans += 1;
        if self.scans > MAX_SCANS {
            return Err(format!("JPEG with more than {MAX_SCANS} scans"));
        }
        let ns = usize::from(*body.first().ok_or("truncated JPEG scan header")?);
        let mut comps = Vec::with_capacity(ns);
        for i in 0..ns {
            let s = body
                .get(1 + 2 * i..3 + 2 * i)
                .ok_or("truncated JPEG scan header")?;
            let c = self
                .comps
                .iter()
                .position(|c| c.id == s[0])
                .ok_or("JPEG scan of an unknown component")?;
            comps.push((c, usize::from(s[1] >> 4) & 3, usize::from(s[1] & 15) & 3));
        }
        let tail = body
            .get(1 + 2 * ns..4 + 2 * ns)
            .ok_or("truncated JPEG scan header")?;
        let scan = Scan {
            comps,
            ss: usize::from(tail[0]),
            se: usize::from(tail[1]),
            ah: tail[2] >> 4,
            al: tail[2] & 15,
        };
        if ns == 0 || scan.se > 63 || scan.ss > scan.se {
            return Err("JPEG scan header out of range".into());
        }
        if !self.progressive {
            // Sequential: every coefficient, full precision.
            let scan = Scan {
                ss: 0,
                se: 63,
                ah: 0,
                al: 0,
                ..scan
            };
            return self.walk(&scan, start);
        }
        if (scan.ss == 0) != (scan.se == 0) || (scan.ss > 0 && ns != 1) {
            return Err("JPEG progressive scan out of range".into());
        }
        self.walk(&scan, start)
    }

    /// Decodes every block of `scan` from `start`; returns where its data
    /// ends.
    fn walk(&mut self, scan: &Scan, start: usize) -> Result<usize, ScanError> {
        for &(c, dc, ac) in &scan.comps {
            let needs_dc = scan.ss == 0 && scan.ah == 0;
            let needs_ac = scan.se > 0;
            if (needs_dc && self.dc[dc].is_none()) || (needs_ac && self.ac[ac].is_none()) {
                return Err("JPEG scan uses a Huffman table never defined".into());
            }
            for k in scan.ss..=scan.se {
                let p = &mut self.precision[c][k];
                // A refinement must follow the scan it refines.
                if scan.ah > 0 && *p != Some(scan.ah) {
                    return Err("JPEG refinement scan out of order".into());
                }
                *p = Some(scan.al);
            }
        }
        // The order of data units in the scan (A.2): one component alone
        // in its own blocks, or interleaved MCUs.
        let units: Vec<(usize, usize, usize, usize)> = if scan.comps.len() == 1 {
            vec![(scan.comps[0].0, scan.comps[0].1, scan.comps[0].2, 1)]
        } else {
            scan.comps
                .iter()
                .map(|&(c, dc, ac)| (c, dc, ac, self.comps[c].h * self.comps[c].v))
                .collect()
        };
        let (mcus, blocks_per_mcu): (usize, usize) = if scan.comps.len() == 1 {
            let (x, y) = self.blocks(scan.comps[0].0);
            (x * y, 1)
        } else {
            let x = self.width.div_ceil(8 * self.h_max());
            let y = self.height.div_ceil(8 * self.v_max());
            (x * y, units.iter().map(|u| u.3).sum())
        };
        let mut bits = Bits {
            data: self.data,
            pos: start,
            acc: 0,
            n: 0,
            at_marker: false,
        };
        let mut eob_run = 0u32;
        let mut restarts = 0usize;
        let scan_no = self.scans;
        let ended = |done: usize| {
            format!(
                "truncated JPEG: scan {scan_no} ends after {done} of {} blocks",
                mcus * blocks_per_mcu
            )
        };
        for m in 0..mcus {
            if self.restart > 0 && m > 0 && m % self.restart == 0 {
                if !bits.restart(restarts) {
                    return Err(ended(m * blocks_per_mcu));
                }
                restarts += 1;
                eob_run = 0;
            }
            let mut b = 0;
            for &(c, dc, ac, count) in &units {
                // Only one-component scans index the component's blocks
                // (interleaved ones are DC scans, which keep nothing).
                let block = if scan.comps.len() == 1 { m } else { usize::MAX };
                for _ in 0..count {
                    let done = self
                        .block(&mut bits, scan, c, dc, ac, block, &mut eob_run)
                        .ok_or_else(|| ended(m * blocks_per_mcu + b))?;
                    done?;
                    b += 1;
                }
            }
        }
        Ok(bits.pos)
    }

    /// Decodes one block's codes of `scan`; `None` when the data ends
    /// first. `block` indexes the component's blocks in a one-component
    /// scan (progressive AC scans, which keep which coefficients are set).
    #[allow(clippy::too_many_arguments)]
    fn block(
        &mut self,
        bits: &mut Bits<'_>,
        scan: &Scan,
        c: usize,
        dc: usize,
        ac: usize,
        block: usize,
        eob_run: &mut u32,
    ) -> Option<Result<(), ScanError>> {
        let huff_dc = self.dc[dc].as_ref();
        let huff_ac = self.ac[ac].as_ref();
        if scan.ss == 0 {
            if scan.ah > 0 {
                bits.bit()?; // DC refinement: one bit
            } else {
                let s = match bits.decode(huff_dc?)? {
                    Ok(s) => s,
                    Err(e) => return Some(Err(e)),
                };
                if s > 16 {
                    return Some(Err("JPEG DC difference out of range".into()));
                }
                bits.bits(s)?;
            }
            if !self.progressive {
                // Sequential: the AC coefficients follow.
                let mut k = 1;
                while k < 64 {
                    let rs = match bits.decode(huff_ac?)? {
                        Ok(rs) => rs,
                        Err(e) => return Some(Err(e)),
                    };
                    let (r, s) = (usize::from(rs >> 4), rs & 15);
                    if s == 0 {
                        if r != 15 {
                            break;
                        }
                        k += 16;
                        continue;
                    }
                    k += r;
                    bits.bits(s)?;
                    k += 1;
                }
                if k > 64 {
                    return Some(Err("JPEG block with more than 64 coefficients".into()));
                }
            }
            return Some(Ok(()));
        }
        let Some(mask) = self.nonzero.get_mut(c).and_then(|m| m.get_mut(block)) else {
            return Some(Err("JPEG progressive AC scan outside its component".into()));
        };
        let huff = huff_ac?;
        let (ss, se) = (scan.ss, scan.se);
        if scan.ah == 0 {
            // First AC scan (G.1.2.2).
            if *eob_run > 0 {
                *eob_run -= 1;
                return Some(Ok(()));
            }
            let mut k = ss;
            while k <= se {
                let rs = match bits.decode(huff)? {
                    Ok(rs) => rs,
                    Err(e) => return Some(Err(e)),
                };
                let (r, s) = (rs >> 4, rs & 15);
                if s == 0 {
                    if r < 15 {
                        *eob_run = (1 << r) - 1 + bits.bits(r)?;
                        break;
                    }
                    k += 16;
                    continue;
                }
                k += usize::from(r);
                bits.bits(s)?;
                if k > se {
                    return Some(Err("JPEG block with more than 64 coefficients".into()));
                }
                *mask |= 1 << k;
                k += 1;
            }
            return Some(Ok(()));
        }
        // Refinement AC scan (G.1.2.3): a correction bit for every
        // coefficient already set, new ones of magnitude 1.
        let mut k = ss;
        if *eob_run == 0 {
            while k <= se {
                let rs = match bits.decode(huff)? {
                    Ok(rs) => rs,
                    Err(e) => return Some(Err(e)),
                };
                let (mut r, s) = (i32::from(rs >> 4), rs & 15);
                if s != 0 {
                    bits.bit()?; // the new coefficient's sign
                } else if r != 15 {
                    *eob_run = (1 << r) + bits.bits(r as u8)?;
                    break;
                }
                while k <= se {
                    if *mask & (1 << k) != 0 {
                        bits.bit()?;
                    } else {
                        r -= 1;
                        if r < 0 {
                            break;
                        }
                    }
                    k += 1;
                }
                if s != 0 {
                    if k > se {
                        return Some(Err("JPEG block with more than 64 coefficients".into()));
                    }
                    *mask |= 1 << k;
                }
                k += 1;
            }
        }
        if *eob_run > 0 {
            while k <= se {
                if *mask & (1 << k) != 0 {
                    bits.bit()?;
                }
                k += 1;
            }
            *eob_run -= 1;
        }
        Some(Ok(()))
    }

    /// At the end-of-image marker: every component was scanned, every
    /// coefficient to full precision.
    fn finish(&self) -> Result<(), ScanError> {
        if self.scans == 0 {
            return Err("truncated JPEG: no scan before the end marker".into());
        }
        for (c, p) in self.precision.iter().enumerate() {
            if p.iter().any(|&a| a != Some(0)) {
                return Err(format!(
                    "truncated JPEG: component {} is missing scans (the image would be incomplete)",
                    c + 1
                ));
            }
        }
        Ok(())
    }
}
