//! What the adversary generated over training: each primitive's count in blocks of consecutive
//! iterations, so the share of designs holding each primitive can be read for the early, middle
//! and late thirds of the run at any point (AEG Figure 7), in bounded memory however long the run.

use serde::{Deserialize, Serialize};

use crate::gminiwob::Design;
use crate::gminiwob::primitive::PRIMITIVE_COUNT;

/// The histogram keeps at most this many blocks of iterations; past it, neighbours merge and
/// blocks double in length, so its size stays bounded however long the run (our choice: enough
/// for even thirds, small enough to travel with every progress message and snapshot).
const HISTORY_BLOCKS: usize = 48;

/// How often each primitive was generated over training, in blocks of consecutive iterations,
/// so that the early, middle and late thirds (AEG Figure 7) can be read at any time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PrimitiveHistory {
    /// Iterations per block (a power of two, from 1).
    pub block: u64,
    /// Per block: designs seen and each primitive's count (index 0 is primitive 1).
    pub blocks: Vec<(u64, Vec<u32>)>,
}

/// One third of training as the histogram shows it.
#[derive(Serialize)]
pub struct Third {
    /// Iterations `from..to`.
    pub from: u64,
    pub to: u64,
    pub designs: u64,
    pub counts: Vec<u32>,
}

impl PrimitiveHistory {
    pub fn add(&mut self, iteration: u64, design: &Design) {
        self.block = self.block.max(1);
        // Lengthen the blocks until the iteration's block is within the cap (so a history read
        // back from a snapshot never grows past it either).
        while iteration / self.block >= HISTORY_BLOCKS as u64 {
            self.merge();
        }
        let at = (iteration / self.block) as usize;
        while self.blocks.len() <= at {
            self.blocks.push((0, vec![0; PRIMITIVE_COUNT]));
        }
        let (designs, counts) = &mut self.blocks[at];
        *designs += 1;
        for p in design.placed() {
            counts[p.primitive - 1] += 1;
        }
    }

    /// Neighbouring blocks become one, twice as long.
    fn merge(&mut self) {
        self.blocks = self
            .blocks
            .chunks(2)
            .map(|pair| {
                let mut merged = pair[0].clone();
                if let Some((d, c)) = pair.get(1) {
                    merged.0 += d;
                    merged.1.iter_mut().zip(c).for_each(|(a, b)| *a += b);
                }
                merged
            })
            .collect();
        self.block *= 2;
    }

    /// The blocks split in three runs of (nearly) equal length: early, middle, late.
    pub fn thirds(&self) -> Vec<Third> {
        let n = self.blocks.len();
        (0..3)
            .map(|t| {
                let (a, b) = (n * t / 3, n * (t + 1) / 3);
                let mut counts = vec![0; PRIMITIVE_COUNT];
                let mut designs = 0;
                for (d, c) in &self.blocks[a..b] {
                    designs += d;
                    counts.iter_mut().zip(c).for_each(|(x, y)| *x += y);
                }
                Third { from: a as u64 * self.block, to: b as u64 * self.block, designs, counts }
            })
            .collect()
    }

    /// A history read back from a snapshot: what is wrong with it, if anything.
    pub fn check(&self) -> Result<(), String> {
        if self.blocks.len() > HISTORY_BLOCKS
            || self.blocks.iter().any(|(_, c)| c.len() != PRIMITIVE_COUNT)
            || (self.block == 0 && !self.blocks.is_empty())
        {
            return Err("the saved run is damaged: its primitive histogram does not fit".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn design(entries: &[(usize, u32)]) -> Design {
        Design::from_entries(None, entries).unwrap()
    }

    #[test]
    fn thirds_count_each_primitive_over_early_middle_and_late_iterations() {
        let mut h = PrimitiveHistory::default();
        // Iterations 0-2 place primitive 1, 3-5 primitive 2 (twice: on two pages), 6-8 primitive 3.
        for it in 0..9u64 {
            let p = 1 + (it / 3) as usize;
            let d = if p == 2 { design(&[(2, 0), (2, 1)]) } else { design(&[(p, 0)]) };
            h.add(it, &d);
        }
        let t = h.thirds();
        assert_eq!(t.iter().map(|t| (t.from, t.to, t.designs)).collect::<Vec<_>>(), [(0, 3, 3), (3, 6, 3), (6, 9, 3)]);
        assert_eq!((t[0].counts[0], t[0].counts[1], t[0].counts[2]), (3, 0, 0));
        assert_eq!((t[1].counts[0], t[1].counts[1], t[1].counts[2]), (0, 6, 0));
        assert_eq!((t[2].counts[0], t[2].counts[1], t[2].counts[2]), (0, 0, 3));
        assert!(h.check().is_ok());
    }

    #[test]
    fn long_runs_merge_blocks_and_keep_every_count() {
        let mut h = PrimitiveHistory::default();
        for it in 0..1000u64 {
            h.add(it, &design(&[(1 + (it % 40) as usize, 0)]));
        }
        assert!(h.blocks.len() <= HISTORY_BLOCKS && h.block > 1, "{} blocks of {}", h.blocks.len(), h.block);
        let t = h.thirds();
        assert_eq!(t.iter().map(|t| t.designs).sum::<u64>(), 1000, "no design is lost in merging");
        assert_eq!(t.iter().map(|t| t.counts.iter().map(|&c| c as u64).sum::<u64>()).sum::<u64>(), 1000);
        assert_eq!(t[0].from, 0);
        assert_eq!((t[0].to, t[1].from, t[1].to, t[2].from), (t[1].from, t[0].to, t[2].from, t[1].to), "the thirds are contiguous");
        assert!(t[2].to >= 1000);
        let mut bad = h.clone();
        bad.blocks[0].1.pop();
        assert!(bad.check().unwrap_err().contains("histogram"));
    }
}
