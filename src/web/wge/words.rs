//! The word-vector table DOMNet reads through when the WGE view says GloVe (`Words`): fetched
//! once from the lab's own origin (`data/`, copied beside the app by trunk) only when a session
//! asks for it, parsed as data (`WordVectors::parse` checks every count first), and kept for the
//! page's life.

use std::cell::RefCell;
use std::sync::Arc;

use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::web::util::{js_message, window};
use crate::wge::domnet_config::{NeuralConfig, WordEmbedding, Words};
use crate::wge::word_vectors::{MAX_BYTES, WordVectors};

/// The shipped table, relative to the app's page.
pub const TABLE_URL: &str = "data/glove-6b-50d-tasks.wlv";

thread_local! {
    static TABLE: RefCell<Option<Arc<WordVectors>>> = const { RefCell::new(None) };
}

/// Makes sure the table `words` needs is here, fetching it the first time.
pub async fn load(words: Words) -> Result<(), String> {
    if !words.needs_vectors() || TABLE.with(|t| t.borrow().is_some()) {
        return Ok(());
    }
    let why = |e: String| format!("the word vectors ({TABLE_URL}) could not be loaded: {e}");
    let resp = JsFuture::from(window().fetch_with_str(TABLE_URL)).await.map_err(|e| why(js_message(&e)))?;
    let resp: web_sys::Response = resp.unchecked_into();
    if !resp.ok() {
        return Err(why(format!("HTTP {} {}", resp.status(), resp.status_text())));
    }
    if let Some(n) = resp.headers().get("content-length").ok().flatten().and_then(|n| n.parse::<usize>().ok())
        && n > MAX_BYTES
    {
        return Err(why(format!("{n} bytes, over the limit of {MAX_BYTES}")));
    }
    let body = JsFuture::from(resp.array_buffer().map_err(|e| why(js_message(&e)))?).await.map_err(|e| why(js_message(&e)))?;
    let table = WordVectors::parse(&js_sys::Uint8Array::new(&body).to_vec()).map_err(why)?;
    TABLE.with(|t| *t.borrow_mut() = Some(Arc::new(table)));
    Ok(())
}

/// The table a DOMNet of `cfg` reads through: none for learned words, the loaded one for GloVe
/// (`load` first), or why there is none.
pub fn vectors_for(cfg: &NeuralConfig) -> Result<Option<Arc<WordVectors>>, String> {
    match cfg.word_embedding {
        WordEmbedding::Learned => Ok(None),
        WordEmbedding::Glove6b50d => TABLE
            .with(|t| t.borrow().clone())
            .map(Some)
            .ok_or_else(|| format!("DOMNet reads words through GloVe here, and the word vectors ({TABLE_URL}) are not loaded")),
    }
}
