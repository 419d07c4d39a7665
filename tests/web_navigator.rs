//! The gMiniWoB navigator on the live DOM: it reads the site (not the profile card beside it),
//! judging is greedy and repeatable and learns nothing, and a training iteration runs on live
//! pages. Run by `scripts/test.sh` (wasm-bindgen-test in headless Chromium).
#![cfg(target_arch = "wasm32")]

mod common;

use burn::prelude::Device;
use common::new_frame;
use wasm_bindgen_test::*;
use weblab::curriculum::Fixed;
use weblab::curriculum::train::{LoopConfig, PopulationTrainer};
use weblab::env::{EnvConfig, Environment};
use weblab::gminiwob::test_sites::test_site;
use weblab::navigator::features::EpisodeMemory;
use weblab::navigator::train::{judge, site_task};
use weblab::navigator::{Navigator, NavigatorConfig};
use weblab::web::IframeEnv;

wasm_bindgen_test_configure!(run_in_browser);

fn env() -> IframeEnv {
    IframeEnv::new(new_frame(), EnvConfig { hold_clock: true, ..EnvConfig::default() })
}

fn small() -> NavigatorConfig {
    NavigatorConfig { vocab_cap: 400, embedding_dim: 16, latent_dim: 16, episodes_per_update: 2, ..NavigatorConfig::default() }
}

#[wasm_bindgen_test]
async fn the_navigator_reads_the_site_and_its_profile() {
    let mut env = env();
    let task = site_task("address-2", test_site("address", 2).unwrap());
    let obs = env.reset(&task, 5).await.unwrap();
    let mut nav = Navigator::new(small(), &Device::flex().autodiff(), 1).unwrap();
    let state = nav.encode(&obs, &mut EpisodeMemory::default(), true);
    assert_eq!(state.fields, obs.instruction.fields.len());
    assert_eq!(state.fields, 5, "address level 2: first and last name, two address lines, city");
    // Every element read lies under #gsite; the profile card (#query) is not read.
    let root = obs.dom.nodes.iter().position(|n| n.id == "gsite").expect("the site root");
    let under = |mut i: usize| loop {
        match obs.dom.nodes[i].parent {
            Some(p) if p == root => return true,
            Some(p) => i = p,
            None => return false,
        }
    };
    for r in &state.refs {
        let i = obs.dom.index_of(*r).unwrap();
        assert!(under(i), "ref {r} ({}) is outside the site", obs.dom.nodes[i].tag);
    }
    let in_site = (0..obs.dom.nodes.len()).filter(|&i| under(i)).count();
    assert_eq!(state.elements, in_site, "all of the site's visible elements");
}

#[wasm_bindgen_test]
async fn judging_is_greedy_repeatable_and_learns_nothing() {
    let mut env = env();
    let mut nav = Navigator::new(small(), &Device::flex().autodiff(), 2).unwrap();
    let task = site_task("login-1", test_site("login", 1).unwrap());
    let first = judge(std::slice::from_mut(&mut env), &mut nav, &task, 100..105).await.unwrap();
    let vocab = nav.vocab.len();
    assert_eq!(vocab, 2, "judging adds no words");
    let again = judge(std::slice::from_mut(&mut env), &mut nav, &task, 100..105).await.unwrap();
    assert_eq!(first, again, "same navigator, same seeds, same episodes");
    assert_eq!(first.episodes, 5);
    assert!(first.mean_steps >= 1.0 && first.mean_steps <= 25.0, "{first:?}");
    assert_eq!(nav.counters.updates, 0);
}

#[wasm_bindgen_test]
async fn a_training_iteration_runs_on_live_pages() {
    let mut env = env();
    let nav = Navigator::new(small(), &Device::flex().autodiff(), 3).unwrap();
    let loop_cfg = LoopConfig { episodes: nav.cfg.episodes_per_update, designs: 1, ..LoopConfig::default() };
    let mut trainer = PopulationTrainer::new(vec![nav], Fixed(test_site("payment", 0).unwrap()), loop_cfg, 3).unwrap();
    for _ in 0..2 {
        let it = trainer.step(std::slice::from_mut(&mut env)).await.unwrap();
        assert_eq!(it.episodes[0].len(), 2);
        assert_eq!(it.fields, [2], "payment level 0: card type and full name");
        assert!(it.updates[0].loss.is_finite());
    }
    let nav = &trainer.population[0];
    assert_eq!(nav.counters.updates, 2);
    assert_eq!(nav.counters.episodes, 4);
    assert!(nav.vocab.len() > 20, "training grew the vocabulary: {}", nav.vocab.len());
}
