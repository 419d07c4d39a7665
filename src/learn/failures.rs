//! Environment failures in a training run: a page that fails (a stale ref, a navigation away, a
//! busy or broken page) ends that episode with its reason and the run goes on; only a task whose
//! episodes fail this way again and again stops the run. One rule for every agent the learner
//! trains (DOM-Q-Net on MiniWoB pages, the navigator on generated sites).

use serde::Serialize;

use crate::env::EnvError;

/// A run stops once this many episodes of one task in a row were ended by an environment failure
/// rather than by the page or the step limit. One such episode is a page's hiccup (an animated
/// foreign page, a link followed); five in a row is a page that cannot be trained on, and going
/// on would only repeat the failure.
pub const MAX_ENV_FAILURES_IN_A_ROW: u32 = 5;

/// One episode an environment failure ended, as the page's log shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EnvFailureNote {
    pub task: usize,
    pub reason: String,
    /// Episodes of this task in a row that failed so, this one included.
    pub in_a_row: u32,
}

/// Counts environment failures per task.
#[derive(Clone, Debug, Default)]
pub struct EnvFailures {
    in_a_row: Vec<u32>,
    /// Episodes ended by a failure over the whole run.
    pub total: u64,
    /// Failures since the last [`Self::take_notes`].
    notes: Vec<EnvFailureNote>,
}

/// Errors no retry can mend: they name a page the run can never use, so they stop it at once.
fn permanent(error: &EnvError) -> bool {
    matches!(error, EnvError::UnknownTask(_) | EnvError::RefusedTask(_) | EnvError::CrossOrigin { .. })
}

impl EnvFailures {
    pub fn new(tasks: usize) -> Self {
        EnvFailures { in_a_row: vec![0; tasks], ..Self::default() }
    }

    /// An episode of `task` ended by the page or the step limit: its failures are no longer in a
    /// row.
    pub fn ended(&mut self, task: usize) {
        if let Some(n) = self.in_a_row.get_mut(task) {
            *n = 0;
        }
    }

    /// An episode of `task` (named `name`) was ended by `error`. `Ok` when the run goes on, or the
    /// message the run stops with.
    pub fn failed(&mut self, task: usize, name: &str, error: &EnvError) -> Result<(), String> {
        if permanent(error) {
            return Err(format!("{name}: {error}"));
        }
        if task >= self.in_a_row.len() {
            self.in_a_row.resize(task + 1, 0);
        }
        self.in_a_row[task] += 1;
        self.total += 1;
        let in_a_row = self.in_a_row[task];
        self.notes.push(EnvFailureNote { task, reason: error.to_string(), in_a_row });
        if in_a_row >= MAX_ENV_FAILURES_IN_A_ROW {
            return Err(format!("{in_a_row} episodes of {name} in a row were ended by the page failing, the last by: {error}"));
        }
        Ok(())
    }

    /// The failures noted since the last call.
    pub fn take_notes(&mut self) -> Vec<EnvFailureNote> {
        std::mem::take(&mut self.notes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_stops_the_run_only_after_failing_so_many_episodes_in_a_row() {
        let away = EnvError::NavigatedAway { url: "http://x/elsewhere.html".into() };
        let mut f = EnvFailures::new(2);
        // Failures broken by an episode that ended normally never add up.
        for _ in 0..3 {
            for _ in 0..MAX_ENV_FAILURES_IN_A_ROW - 1 {
                f.failed(0, "click-link", &away).unwrap();
            }
            f.ended(0);
        }
        assert_eq!(f.take_notes().iter().map(|n| n.in_a_row).collect::<Vec<_>>(), [1, 2, 3, 4].repeat(3));
        // Another task's episodes do not break task 0's row, and its failures are its own.
        for k in 0..MAX_ENV_FAILURES_IN_A_ROW - 1 {
            f.failed(0, "click-link", &EnvError::Busy).unwrap();
            f.failed(1, "click-tab", &EnvError::UnknownRef(7)).unwrap();
            f.ended(1);
            assert_eq!(f.take_notes().iter().map(|n| (n.task, n.in_a_row)).collect::<Vec<_>>(), [(0, k + 1), (1, 1)]);
        }
        let err = f.failed(0, "click-link", &away).unwrap_err();
        assert_eq!(
            err,
            "5 episodes of click-link in a row were ended by the page failing, the last by: the task page navigated away to http://x/elsewhere.html"
        );
        assert_eq!(f.total, 3 * 4 + 2 * 4 + 1);
        let notes = f.take_notes();
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].reason, "the task page navigated away to http://x/elsewhere.html");
        assert!(f.take_notes().is_empty());
    }

    #[test]
    fn a_page_the_run_can_never_use_stops_it_at_once() {
        let mut f = EnvFailures::new(1);
        let err = f.failed(0, "nope", &EnvError::UnknownTask("nope".into())).unwrap_err();
        assert_eq!(err, "nope: unknown task \"nope\": it is not in the lab's task list");
        let cross = EnvError::CrossOrigin { url: "https://example.com/t.html".into(), origin: "http://127.0.0.1".into() };
        assert!(f.failed(0, "t", &cross).unwrap_err().contains("another origin"));
    }
}
