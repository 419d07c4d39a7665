//! `weblab._native`: the lab's native core for Python. The Python package (`py/python/weblab`)
//! wraps it: Gymnasium environments over [`env::SiteEnv`] and [`env::SiteBatch`], the population
//! loop's runs ([`run::train`], the same loop as the command line's), and the pieces the Ray
//! population needs ([`run::Driver`], [`run::Learner`]). Configs cross as JSON; a bad one raises
//! `ValueError` naming what is wrong, and a panic in native code becomes a `RuntimeError`.

mod env;
mod run;

use std::panic::{AssertUnwindSafe, catch_unwind};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

pub(crate) fn bad_value(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Runs `f` with the GIL released; its error becomes a `RuntimeError`, and so does a panic.
pub(crate) fn native<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T, String> + Send) -> PyResult<T> {
    py.detach(|| catch_unwind(AssertUnwindSafe(f))).map_err(panicked)?.map_err(PyRuntimeError::new_err)
}

/// `f` with the GIL held (quick calls), a panic a `RuntimeError`.
pub(crate) fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).map_err(panicked)?
}

fn panicked(p: Box<dyn std::any::Any + Send>) -> PyErr {
    let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
    PyRuntimeError::new_err(format!("weblab's native core failed: {msg}"))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<env::SiteEnv>()?;
    m.add_class::<env::SiteBatch>()?;
    m.add_class::<run::Driver>()?;
    m.add_class::<run::Learner>()?;
    m.add_function(wrap_pyfunction!(run::train, m)?)?;
    m.add_function(wrap_pyfunction!(run::check_config, m)?)?;
    m.add_function(wrap_pyfunction!(run::judge, m)?)?;
    m.add_function(wrap_pyfunction!(run::study_plot, m)?)?;
    m.add("TEST_SITES", weblab::gminiwob::test_sites::TEST_SITES.to_vec())?;
    m.add("LEVELS", weblab::gminiwob::test_sites::LEVELS)?;
    m.add("REPORT_SEEDS_FROM", weblab::navigator::train::REPORT_SEEDS_FROM)?;
    Ok(())
}
