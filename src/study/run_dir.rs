//! A long run's folder: the whole run's snapshot (`run.wlpr`, written every few minutes, atomically)
//! and beside it what its curves and plot need (`progress.json`), so a killed run resumes exactly
//! from its last snapshot and its wall-clock adds up over its sittings; `plot.png` drawn from them.

use std::path::{Path, PathBuf};

use crate::adversary::history::PrimitiveHistory;
use crate::gminiwob::primitive::{PRIMITIVE_COUNT, by_index};
use crate::gminiwob::test_sites::TEST_SITES;
use crate::navigator::train::grid_mean;
use serde::{Deserialize, Serialize};

use super::plot::{Area, Canvas, GREY, PALETTE, Series, bar_chart, line_chart};

/// One report's figures (a point of the curves).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Point {
    pub train_min: f64,
    pub iteration: u64,
    pub designs: u64,
    pub env_steps: u64,
    /// Means over the designs since the last point.
    pub budget: Option<f64>,
    pub rendered: f64,
    pub active: f64,
    pub passive: f64,
    pub repeats: Option<f64>,
    pub regret: Option<f64>,
    pub success: f64,
    /// Each navigator's share of successful training episodes (absent in runs saved before it
    /// was kept): a population whose one navigator never succeeds shows here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub success_per_navigator: Vec<f64>,
}

/// What the curves and the plot keep over a run, saved beside each snapshot.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Progress {
    /// Training seconds (judging not counted) and wall-clock seconds, summed over sittings.
    pub train_s: f64,
    pub wall_s: f64,
    pub sittings: u32,
    pub points: Vec<Point>,
    /// (training minutes, grid of the best navigator at that judging, its navigator index).
    pub grids: Vec<(f64, Vec<Vec<f64>>, usize)>,
    pub best_mean: f64,
    pub best_grid: Vec<Vec<f64>>,
    pub history: PrimitiveHistory,
    /// `run::digest` of the iterations so far (hex; empty in runs saved before it was kept).
    #[serde(default)]
    pub trajectory: String,
}

pub struct RunDir {
    pub dir: PathBuf,
}

impl RunDir {
    pub fn new(dir: &str) -> Result<RunDir, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{dir}: {e}"))?;
        Ok(RunDir { dir: PathBuf::from(dir) })
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The saved snapshot and progress, when the folder holds a run.
    pub fn load(&self) -> Result<Option<(Vec<u8>, Progress)>, String> {
        let snap = self.path("run.wlpr");
        if !snap.exists() {
            return Ok(None);
        }
        // A kill between `save`'s two renames leaves the new snapshot in place and its progress
        // (complete: written before the snapshot's rename) under its temporary name: finish the
        // rename, or the newer snapshot would resume with the older progress (its trajectory
        // digest and curves an interval short).
        if !self.path("run.wlpr.new").exists() && self.path("progress.json.new").exists() {
            std::fs::rename(self.path("progress.json.new"), self.path("progress.json")).map_err(|e| format!("progress.json: {e}"))?;
        }
        let bytes = std::fs::read(&snap).map_err(|e| format!("{}: {e}", snap.display()))?;
        let progress = std::fs::read(self.path("progress.json")).map_err(|e| format!("progress.json: {e}"))?;
        let progress: Progress = serde_json::from_slice(&progress).map_err(|e| format!("progress.json is damaged: {e}"))?;
        progress.history.check()?;
        Ok(Some((bytes, progress)))
    }

    /// Writes the snapshot and the progress, each to a temporary name first and then renamed, so
    /// a kill in the middle leaves the previous pair whole, or (between the renames) the new
    /// pair, which `load` completes.
    pub fn save(&self, snapshot: &[u8], progress: &Progress) -> Result<(), String> {
        let json = serde_json::to_vec(progress).map_err(|e| e.to_string())?;
        // The snapshot's temporary file first: while it exists, a `progress.json.new` beside it
        // belongs to a save that never reached its renames.
        write_atomic(&self.path("run.wlpr.new"), snapshot)?;
        write_atomic(&self.path("progress.json.new"), &json)?;
        std::fs::rename(self.path("run.wlpr.new"), self.path("run.wlpr")).map_err(|e| e.to_string())?;
        std::fs::rename(self.path("progress.json.new"), self.path("progress.json")).map_err(|e| e.to_string())
    }
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    use std::io::Write;
    let mut f = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    f.write_all(bytes).and_then(|_| f.sync_all()).map_err(|e| format!("{}: {e}", path.display()))
}

/// The run as a picture: the best navigator's success per test site (mean over its levels) and
/// on level 3 over training; the budget against the primitives rendered; the regret and the
/// training success; the primitives' shares of designs early, middle and late (AEG Figure 7).
pub fn plot(progress: &Progress, title: &str) -> Vec<u8> {
    let mut c = Canvas::new(1400, 1100);
    c.text(20, 12, title, super::plot::BLACK, 2);
    let half = 680;
    let grid_series = |level3: bool| -> Vec<Series> {
        let mut out: Vec<Series> = TEST_SITES
            .iter()
            .enumerate()
            .map(|(s, site)| Series {
                name: site.to_string(),
                color: PALETTE[s],
                points: progress
                    .grids
                    .iter()
                    .map(|(t, g, _)| (*t, 100.0 * if level3 { g[s][3] } else { g[s].iter().sum::<f64>() / g[s].len() as f64 }))
                    .collect(),
            })
            .collect();
        if !level3 {
            out.push(Series {
                name: "mean".into(),
                color: PALETTE[7],
                points: progress.grids.iter().map(|(t, g, _)| (*t, 100.0 * grid_mean(g))).collect(),
            });
        }
        out
    };
    line_chart(
        &mut c,
        Area { x: 20, y: 40, w: half, h: 330 },
        "Zero-shot success, mean of levels 0-3 (%)",
        "training minutes",
        &grid_series(false),
        Some((0.0, 100.0)),
    );
    line_chart(
        &mut c,
        Area { x: 20 + half, y: 40, w: half, h: 330 },
        "Zero-shot success, level 3 (%)",
        "training minutes",
        &grid_series(true),
        Some((0.0, 100.0)),
    );
    let pts = &progress.points;
    let curve = |name: &str, k: usize, f: &dyn Fn(&Point) -> Option<f64>| Series {
        name: name.into(),
        color: PALETTE[k],
        points: pts.iter().filter_map(|p| f(p).map(|v| (p.train_min, v))).collect(),
    };
    let budget = [
        curve("expected budget", 0, &|p| p.budget),
        curve("rendered", 1, &|p| Some(p.rendered)),
        curve("active", 2, &|p| Some(p.active)),
        curve("passive", 3, &|p| Some(p.passive)),
        curve("repeated pairs", 5, &|p| p.repeats),
    ];
    line_chart(&mut c, Area { x: 20, y: 390, w: half, h: 320 }, "Primitives per design", "training minutes", &budget, None);
    let regret = [curve("regret", 0, &|p| p.regret), curve("training success", 2, &|p| Some(p.success))];
    line_chart(
        &mut c,
        Area { x: 20 + half, y: 390, w: half, h: 320 },
        "Regret and success on the training designs",
        "training minutes",
        &regret,
        None,
    );
    let thirds = progress.history.thirds();
    let labels: Vec<String> = (1..=PRIMITIVE_COUNT).map(|i| by_index(i).map(|p| p.name.to_string()).unwrap_or_default()).collect();
    let names = ["early", "middle", "late"];
    let series: Vec<(String, [u8; 3], Vec<f64>)> = thirds
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let shares = t.counts.iter().map(|&n| 100.0 * n as f64 / t.designs.max(1) as f64).collect();
            (format!("{} (iterations {}-{})", names[k], t.from, t.to), [PALETTE[0], PALETTE[1], PALETTE[2]][k], shares)
        })
        .collect();
    let top = series.iter().flat_map(|s| s.2.iter().copied()).fold(1.0f64, f64::max);
    bar_chart(
        &mut c,
        Area { x: 20, y: 730, w: 1360, h: 360 },
        "Share of designs holding each primitive (%), by third of training",
        &labels,
        &series,
        (top / 10.0).ceil() * 10.0,
    );
    c.text(20, 1086, "fields: active primitives; the rest are page parts", GREY, 1);
    c.png()
}

/// A study's runs side by side: each run's best-navigator grid mean over its training, and its
/// level-3 mean (the figure the papers' tables lead with).
pub fn study_plot(runs: &[(String, Progress)], title: &str) -> Vec<u8> {
    let mut c = Canvas::new(1400, 520);
    c.text(20, 12, title, super::plot::BLACK, 2);
    let series = |level3: bool| -> Vec<Series> {
        runs.iter()
            .enumerate()
            .map(|(k, (name, p))| Series {
                name: name.clone(),
                color: PALETTE[k % PALETTE.len()],
                points: p
                    .grids
                    .iter()
                    .map(|(t, g, _)| {
                        let cells: Vec<f64> =
                            if level3 { g.iter().filter_map(|row| row.last().copied()).collect() } else { g.iter().flatten().copied().collect() };
                        (*t, 100.0 * cells.iter().sum::<f64>() / cells.len().max(1) as f64)
                    })
                    .collect(),
            })
            .collect()
    };
    let half = 680;
    line_chart(
        &mut c,
        Area { x: 20, y: 40, w: half, h: 460 },
        "Zero-shot grid mean, levels 0-3 (%)",
        "training minutes",
        &series(false),
        Some((0.0, 100.0)),
    );
    line_chart(
        &mut c,
        Area { x: 20 + half, y: 40, w: half, h: 460 },
        "Zero-shot mean on level 3 (%)",
        "training minutes",
        &series(true),
        Some((0.0, 100.0)),
    );
    c.png()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kill_between_the_renames_resumes_the_new_pair_and_one_before_them_the_old() {
        let dir = std::env::temp_dir().join(format!("weblab-run-dir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let run = RunDir::new(dir.to_str().unwrap()).unwrap();
        let (old, new) = (Progress { trajectory: "old".into(), ..Progress::default() }, Progress { trajectory: "new".into(), ..Progress::default() });
        run.save(b"A", &old).unwrap();
        // Killed after the snapshot's rename, before the progress's.
        write_atomic(&run.path("progress.json.new"), &serde_json::to_vec(&new).unwrap()).unwrap();
        std::fs::write(run.path("run.wlpr"), b"B").unwrap();
        let (bytes, p) = run.load().unwrap().unwrap();
        assert_eq!((bytes.as_slice(), p.trajectory.as_str()), (&b"B"[..], "new"));
        // Killed before the renames: both temporary files there, the old pair stands.
        run.save(b"C", &old).unwrap();
        std::fs::write(run.path("run.wlpr.new"), b"partial").unwrap();
        std::fs::write(run.path("progress.json.new"), b"{").unwrap();
        let (bytes, p) = run.load().unwrap().unwrap();
        assert_eq!((bytes.as_slice(), p.trajectory.as_str()), (&b"C"[..], "old"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
