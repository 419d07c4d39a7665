//! The messages between the learner worker and the page that owns the task pages: the worker asks
//! for a reset or a step of task page `task` ([`EnvRequest`]) and the page answers
//! ([`EnvReply`]). The page checks each request's task as anything from outside its own code
//! ([`EnvRequest::check`]) before a page loads.

use serde::{Deserialize, Serialize};

use super::task::TaskSpec;
use super::{Action, EnvError, Observation, Step};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum EnvRequest<S> {
    Reset { task: usize, spec: TaskSpec<S>, seed: u32 },
    Step { task: usize, action: Action },
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnvReply {
    Observation(Observation),
    Step(Step),
    Error(EnvError),
}

impl<S> EnvRequest<S> {
    /// The task page the request is for.
    pub fn page(&self) -> usize {
        match self {
            EnvRequest::Reset { task, .. } | EnvRequest::Step { task, .. } => *task,
        }
    }

    /// A reset names its task as anything from outside the page's own code does
    /// ([`TaskSpec::check_untrusted_with`], with the folders a person typed into the tab).
    pub fn check(&self, typed_folders: &[String]) -> Result<(), EnvError> {
        match self {
            EnvRequest::Reset { spec, .. } => spec.check_untrusted_with(typed_folders),
            EnvRequest::Step { .. } => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    type EnvRequest = super::EnvRequest<serde_json::Map<String, serde_json::Value>>;

    #[test]
    fn a_reset_names_a_page_the_lab_opens_and_nothing_else() {
        let read = |json: &str| serde_json::from_str::<EnvRequest>(json).unwrap();
        let ok = read(r#"{"op":"reset","task":1,"spec":{"source":"builtin","name":"click-test"},"seed":3}"#);
        assert_eq!((ok.page(), ok.check(&[])), (1, Ok(())));
        let inline = read(r#"{"op":"reset","task":0,"spec":{"source":"inline","name":"x","html":"<script>parent.x=1</script>"},"seed":3}"#);
        assert!(inline.check(&[]).unwrap_err().to_string().contains("whole page"));
        let away = read(r#"{"op":"reset","task":0,"spec":{"source":"external","base_url":"/","name":"index"},"seed":3}"#);
        assert!(away.check(&[]).is_err());
        assert_eq!(read(r#"{"op":"step","task":2,"action":{"click":4}}"#).check(&[]), Ok(()));
        assert!(serde_json::from_str::<EnvRequest>(r#"{"op":"eval","task":0}"#).is_err());
    }
}
