//! Which elements stand Near, in the same row or in the same column as some element of a set
//! (the constraint language's spatial sets, reference-implementations.md §2.2), without comparing
//! every element with every anchor: rows and columns by counting overlaps in sorted bounds, Near
//! through a grid of cells. `relates` is the definition; the fast paths only narrow down whom it
//! is asked about, so they give exactly its answer (a test compares them on random pages).

use std::collections::HashMap;

use crate::env::DomNode;

/// Any element within this many pixels of one in the set, along a shared row or column, is
/// `Near` it (the authors' `is_pixel_neighbor`; the paper's appendix says 30 px).
pub const NEAR_PX: f32 = 30.0;

/// Side of the grid's cells for `Near` (about one `NEAR_PX` reach).
const CELL_PX: f64 = 32.0;
/// A box reaching over more cells than this is checked against every element instead of being
/// entered cell by cell (a page-wide container, or a hostile box a billion pixels wide).
const MAX_CELLS: f64 = 256.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relation {
    Near,
    SameRow,
    SameCol,
}

/// The elements' boxes as the spatial sets read them: a coordinate that is not a number counts as
/// 0 and a negative or missing size as none, so every box is an interval pair with lo ≤ hi.
pub struct Boxes {
    x0: Vec<f32>,
    x1: Vec<f32>,
    y0: Vec<f32>,
    y1: Vec<f32>,
}

fn finite(v: f32) -> f32 {
    if v.is_finite() { v } else { 0.0 }
}

impl Boxes {
    pub fn new(nodes: &[DomNode]) -> Self {
        let mut b = Boxes { x0: Vec::new(), x1: Vec::new(), y0: Vec::new(), y1: Vec::new() };
        for n in nodes {
            let (left, top) = (finite(n.rect.left), finite(n.rect.top));
            b.x0.push(left);
            b.x1.push(left + finite(n.rect.width).max(0.0));
            b.y0.push(top);
            b.y1.push(top + finite(n.rect.height).max(0.0));
        }
        b
    }

    pub fn len(&self) -> usize {
        self.x0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.x0.is_empty()
    }

    /// Whether element `i` relates to anchor `a` (never itself): Near when they share a row and
    /// are at most `NEAR_PX` apart horizontally, or share a column and are at most that apart
    /// vertically; SameRow / SameCol when their vertical / horizontal extents overlap.
    pub fn relates(&self, a: usize, i: usize, rel: Relation) -> bool {
        if a == i {
            return false;
        }
        let row_gap = gap(self.y0[a], self.y1[a], self.y0[i], self.y1[i]);
        let col_gap = gap(self.x0[a], self.x1[a], self.x0[i], self.x1[i]);
        match rel {
            Relation::SameRow => row_gap == 0.0,
            Relation::SameCol => col_gap == 0.0,
            Relation::Near => (row_gap == 0.0 && col_gap <= NEAR_PX) || (col_gap == 0.0 && row_gap <= NEAR_PX),
        }
    }

    /// Every element related to some anchor, in document order; `work` grows by the pairs and
    /// elements looked at (the induction's budget counts it).
    pub fn related(&self, anchors: &[usize], rel: Relation, work: &mut u64) -> Vec<usize> {
        *work += (self.len() + anchors.len()) as u64;
        if anchors.is_empty() {
            return Vec::new();
        }
        match rel {
            Relation::SameRow => self.overlapping(anchors, &self.y0, &self.y1, work),
            Relation::SameCol => self.overlapping(anchors, &self.x0, &self.x1, work),
            Relation::Near => self.near(anchors, work),
        }
    }

    /// Rows or columns: how many anchors' intervals overlap element i's is the anchor count less
    /// those that start after it ends and those that end before it starts (disjoint groups, as
    /// lo ≤ hi); an anchor always overlaps itself, so one of its own needs a second. Two floats'
    /// difference is ≤ 0 exactly when the first is ≤ the second, so these comparisons are
    /// `relates`' own.
    fn overlapping(&self, anchors: &[usize], lo: &[f32], hi: &[f32], work: &mut u64) -> Vec<usize> {
        let mut starts: Vec<f32> = anchors.iter().map(|&a| lo[a]).collect();
        let mut ends: Vec<f32> = anchors.iter().map(|&a| hi[a]).collect();
        starts.sort_by(f32::total_cmp);
        ends.sort_by(f32::total_cmp);
        let mut is_anchor = vec![false; self.len()];
        anchors.iter().for_each(|&a| is_anchor[a] = true);
        let m = anchors.len();
        (0..self.len())
            .filter(|&i| {
                let after = m - starts.partition_point(|&s| s <= hi[i]);
                let before = ends.partition_point(|&e| e < lo[i]);
                *work += 2 * (usize::BITS - m.leading_zeros()) as u64;
                m - after - before > is_anchor[i] as usize
            })
            .collect()
    }

    /// Near: anchors are entered in the grid cells their reach covers (the box widened by a
    /// little more than `NEAR_PX` each way); an element asks the anchors in the cells its own box
    /// covers, stopping at the first that relates.
    fn near(&self, anchors: &[usize], work: &mut u64) -> Vec<usize> {
        let reach = NEAR_PX as f64 + 1.0;
        let span = |lo: f32, hi: f32, pad: f64| -> Option<(i64, i64)> {
            let (a, b) = (((lo as f64 - pad) / CELL_PX).floor(), ((hi as f64 + pad) / CELL_PX).floor());
            (a.is_finite() && b.is_finite() && b - a < MAX_CELLS).then_some((a as i64, b as i64))
        };
        let mut cells: HashMap<(i64, i64), Vec<usize>> = HashMap::new();
        let mut wide = Vec::new();
        for &a in anchors {
            match (span(self.x0[a], self.x1[a], reach), span(self.y0[a], self.y1[a], reach)) {
                (Some((cx0, cx1)), Some((cy0, cy1))) if ((cx1 - cx0 + 1) * (cy1 - cy0 + 1)) as f64 <= MAX_CELLS => {
                    for cx in cx0..=cx1 {
                        for cy in cy0..=cy1 {
                            cells.entry((cx, cy)).or_default().push(a);
                        }
                    }
                    *work += ((cx1 - cx0 + 1) * (cy1 - cy0 + 1)) as u64;
                }
                _ => wide.push(a),
            }
        }
        (0..self.len())
            .filter(|&i| {
                let mut check = |a: usize| {
                    *work += 1;
                    self.relates(a, i, Relation::Near)
                };
                if wide.iter().any(|&a| check(a)) {
                    return true;
                }
                match (span(self.x0[i], self.x1[i], 0.0), span(self.y0[i], self.y1[i], 0.0)) {
                    (Some((cx0, cx1)), Some((cy0, cy1))) if ((cx1 - cx0 + 1) * (cy1 - cy0 + 1)) as f64 <= MAX_CELLS => {
                        (cx0..=cx1).any(|cx| (cy0..=cy1).any(|cy| cells.get(&(cx, cy)).is_some_and(|v| v.iter().any(|&a| check(a)))))
                    }
                    _ => anchors.iter().any(|&a| check(a)),
                }
            })
            .collect()
    }
}

/// Distance between intervals [a0, a1] and [b0, b1]; 0 when they overlap or touch.
fn gap(a0: f32, a1: f32, b0: f32, b1: f32) -> f32 {
    (a0.max(b0) - a1.min(b1)).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::Rect;
    use crate::rng::Rng;

    fn page(rng: &mut Rng, n: usize, spread: f32) -> Vec<DomNode> {
        (0..n)
            .map(|_| {
                let mut v = || rng.next_f64() as f32;
                DomNode { rect: Rect { left: v() * spread, top: v() * spread, width: v() * 60.0, height: v() * 25.0 }, ..DomNode::default() }
            })
            .collect()
    }

    #[test]
    fn fast_sets_equal_the_pairwise_definition() {
        let mut rng = Rng::new(5);
        for (n, spread) in [(1, 100.0), (40, 160.0), (300, 400.0), (300, 60.0)] {
            let mut nodes = page(&mut rng, n, spread);
            if n > 3 {
                // Boxes a file may hold: a page-wide one, a non-number and a negative size.
                nodes[0].rect = Rect { left: 0.0, top: 0.0, width: 1e9, height: 1e9 };
                nodes[1].rect.left = f32::NAN;
                nodes[2].rect.width = -50.0;
            }
            let boxes = Boxes::new(&nodes);
            for anchors in [vec![0], (0..n).step_by(3).collect(), (0..n).collect::<Vec<_>>()] {
                let anchors: Vec<usize> = anchors.into_iter().filter(|&a| a < n).collect();
                for rel in [Relation::Near, Relation::SameRow, Relation::SameCol] {
                    let brute: Vec<usize> = (0..n).filter(|&i| anchors.iter().any(|&a| boxes.relates(a, i, rel))).collect();
                    let mut work = 0;
                    assert_eq!(boxes.related(&anchors, rel, &mut work), brute, "{rel:?}, {n} boxes, {} anchors", anchors.len());
                }
            }
        }
    }

    #[test]
    fn a_long_column_of_buttons_costs_linear_work_not_quadratic() {
        // 20,000 buttons in rows of four, every one Near and SameRow of its neighbours.
        let nodes: Vec<DomNode> = (0..20_000)
            .map(|i| {
                let rect = Rect { left: (i % 4) as f32 * 40.0, top: 50.0 + (i / 4) as f32 * 20.0, width: 38.0, height: 18.0 };
                DomNode { rect, ..DomNode::default() }
            })
            .collect();
        let boxes = Boxes::new(&nodes);
        let all: Vec<usize> = (0..nodes.len()).collect();
        for rel in [Relation::Near, Relation::SameRow] {
            let mut work = 0;
            assert_eq!(boxes.related(&all, rel, &mut work).len(), nodes.len());
            // The pairwise definition would ask 400 million pairs.
            assert!(work < 50 * nodes.len() as u64, "{rel:?}: {work} units for {} boxes", nodes.len());
        }
    }
}
