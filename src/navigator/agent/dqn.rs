//! The navigator's DQN head, as the reference code's (ACME's DQN agent, which CoDE is built
//! on): n-step double DQN with a replay buffer and a target network. The A2C head and acting are
//! in the parent module; this file holds what only DQN needs: the TD update and the learner state
//! a snapshot keeps beside the checkpoint.

use burn::optim::GradientsParams;
use burn::prelude::*;

use super::{Navigator, Transition, UpdateStats, argmax};
use crate::learn::adam::Adam;
use crate::learn::clip::clip_global_norm;
use crate::learn::init::read;
use crate::navigator::features::{NavAction, NavState};
use crate::navigator::model::{NavigatorModel, Padded};
use crate::navigator::replay::Replay;

/// The first bytes of a DQN navigator's learner state.
pub(super) const STATE_MAGIC: &[u8; 8] = b"WLNVDQN1";

/// What the DQN head keeps beside the online network.
pub struct DqnState {
    /// The target network (not differentiated), a copy of the online one every
    /// `dqn_target_update_period` updates.
    pub target: NavigatorModel,
    pub replay: Replay,
}

impl Navigator {
    /// The learner state of a DQN navigator: `WLNVDQN1` · u64 length · Adam's moments (empty
    /// before the first update) · u64 length · the target network's record · the replay (see
    /// [`Replay::to_bytes`]); `None` before anything was learnt or stored. The replay is the large
    /// part: about 1–3 kB per step on the test sites, so at most tens of MB at the default capacity.
    pub(super) async fn dqn_state(&self, dqn: &DqnState, adam: Option<Vec<u8>>) -> Result<Option<Vec<u8>>, String> {
        if adam.is_none() && dqn.replay.is_empty() {
            return Ok(None);
        }
        let cfg = self.cfg.clone();
        let target =
            crate::learn::checkpoint::record_bytes(&dqn.target, |d| NavigatorModel::new(&cfg, d), crate::learn::checkpoint::Precision::Full).await?;
        let adam = adam.unwrap_or_default();
        let mut out = Vec::with_capacity(32 + adam.len() + target.len());
        out.extend_from_slice(STATE_MAGIC);
        out.extend_from_slice(&(adam.len() as u64).to_le_bytes());
        out.extend_from_slice(&adam);
        out.extend_from_slice(&(target.len() as u64).to_le_bytes());
        out.extend_from_slice(&target);
        out.extend_from_slice(&dqn.replay.to_bytes());
        Ok(Some(out))
    }

    /// Continues with a state [`Self::dqn_state`] wrote; a damaged one changes nothing.
    pub(super) fn load_dqn_state(&mut self, bytes: &[u8]) -> Result<(), String> {
        let damaged = |why: &str| format!("the saved DQN state is damaged: {why}");
        let mut at = STATE_MAGIC.len();
        let part = |at: &mut usize| -> Result<&[u8], String> {
            let len = bytes.get(*at..*at + 8).ok_or_else(|| damaged("it ends too early"))?;
            let len = usize::try_from(u64::from_le_bytes(len.try_into().unwrap())).map_err(|_| damaged("bad length"))?;
            let start = *at + 8;
            let s = bytes.get(start..start.checked_add(len).ok_or_else(|| damaged("bad length"))?).ok_or_else(|| damaged("it ends too early"))?;
            *at = start + len;
            Ok(s)
        };
        let adam = part(&mut at)?;
        let target = part(&mut at)?;
        let cfg = self.cfg.clone();
        let model = self.model();
        let plain = model.device().without_autodiff();
        crate::learn::checkpoint::check_record_size(target, cfg.num_params(), false).map_err(|e| damaged(&format!("its target network: {e}")))?;
        let target = crate::learn::checkpoint::load_record(|d| NavigatorModel::new(&cfg, d), target, false, &plain)
            .map_err(|e| damaged(&format!("its target network: {e}")))?;
        let limits = (cfg.max_elements, cfg.max_fields, cfg.max_tokens, cfg.vocab_cap);
        let replay = Replay::from_bytes(&bytes[at..], cfg.dqn_replay_capacity, limits).map_err(|e| damaged(&e))?;
        let mut optim = Adam::new(cfg.adam_epsilon, None);
        if !adam.is_empty() {
            optim.load(model, adam)?;
        }
        self.optim = optim;
        self.dqn = Some(DqnState { target, replay });
        Ok(())
    }

    /// DQN: stores the episodes as n-step transitions, then takes TD updates until the updates
    /// made reach (steps stored since the replay held `dqn_min_replay`) × samples per insert /
    /// batch, as ACME's rate. Counting from the counters makes a resumed run owe what the
    /// original did.
    pub(super) async fn dqn_update(&mut self, episodes: &[Vec<Transition>]) -> Result<UpdateStats, String> {
        let cfg = self.cfg.clone();
        let epsilon = cfg.epsilon(self.counters.env_steps.saturating_sub(episodes.iter().map(|e| e.len() as u64).sum()));
        let dqn = self.dqn.as_mut().expect("the DQN head");
        for ep in episodes {
            dqn.replay.push_episode(ep, cfg.dqn_n_step, cfg.discount, cfg.dqn_reward_clip);
        }
        let steps: Vec<&Transition> = episodes.iter().flatten().collect();
        let owed = if dqn.replay.len() >= cfg.dqn_min_replay {
            let counted = self.counters.env_steps.saturating_sub(cfg.dqn_min_replay as u64) as f64;
            (counted * cfg.dqn_samples_per_insert / cfg.dqn_batch_size as f64).floor() as u64
        } else {
            0
        };
        let mut losses = Vec::new();
        // A run that starts from a checkpoint (counters ahead, replay fresh) catches up on at
        // most one iteration's worth, not on the whole history.
        let per_iteration = ((steps.len() as f64 * cfg.dqn_samples_per_insert / cfg.dqn_batch_size as f64).ceil() as u64).max(1);
        let mut budget = per_iteration;
        while self.counters.updates < owed && budget > 0 {
            let batch = {
                let dqn = self.dqn.as_ref().expect("the DQN head");
                dqn.replay.sample(&mut self.rng, cfg.dqn_batch_size)
            };
            losses.push(self.td_update(&batch).await?);
            budget -= 1;
        }
        let mut returns = Vec::new();
        for ep in episodes {
            let mut g = 0.0;
            for t in ep.iter().rev() {
                g = t.reward + cfg.discount * g;
                returns.push(g);
            }
        }
        Ok(UpdateStats {
            loss: if losses.is_empty() { 0.0 } else { losses.iter().sum::<f32>() / losses.len() as f32 },
            policy_loss: 0.0,
            value_loss: 0.0,
            entropy: 0.0,
            mean_return: (returns.iter().sum::<f64>() / returns.len() as f64) as f32,
            steps: steps.len() as u32,
            updates: losses.len() as u32,
            epsilon: epsilon as f32,
        })
    }

    /// TD targets of replay steps `batch`: y = R + γ^n · Q_target(s', a*) with a* the online
    /// network's best open choice in s' (double DQN) or the target's own (plain DQN); y = R
    /// when the window reached the episode's end.
    async fn td_targets(&self, batch: &[usize]) -> Result<Vec<f32>, String> {
        let dqn = self.dqn.as_ref().expect("the DQN head");
        let nexts: Vec<(usize, &NavState)> = batch.iter().enumerate().filter_map(|(k, &i)| dqn.replay.next_state(i).map(|s| (k, s))).collect();
        let mut y: Vec<f32> = batch.iter().map(|&i| dqn.replay.get(i).ret).collect();
        if nexts.is_empty() {
            return Ok(y);
        }
        let states: Vec<&NavState> = nexts.iter().map(|&(_, s)| s).collect();
        let p = Padded::new(&states);
        let w = p.width();
        let q_target = read(dqn.target.q_values(&p)).await?;
        let q_select = if self.cfg.dqn_double { read(self.model().valid().q_values(&p)).await? } else { q_target.clone() };
        let bootstrap = self.cfg.discount.powi(self.cfg.dqn_n_step as i32) as f32;
        for (row, &(k, s)) in nexts.iter().enumerate() {
            let open: Vec<(NavAction, f32)> = (0..w).map(|i| (p.choice(i), q_select[row * w + i])).filter(|&(a, _)| s.is_open(a)).collect();
            // A state with nothing open ends the episode (the rollout stops there): no bootstrap.
            if let Some(best) = argmax(&open) {
                y[k] += bootstrap * q_target[row * w + p.index(best)];
            }
        }
        Ok(y)
    }

    /// The TD loss (Huber or squared) of replay steps `batch` against the current target
    /// network, without learning: for tests and diagnostics.
    pub async fn td_loss(&self, batch: &[usize]) -> Result<f32, String> {
        let y = self.td_targets(batch).await?;
        let model = self.model().valid();
        let loss = self.td_loss_tensor(&model, batch, y);
        Ok(read(loss).await?[0])
    }

    fn td_loss_tensor(&self, model: &NavigatorModel, batch: &[usize], y: Vec<f32>) -> Tensor<1> {
        let dqn = self.dqn.as_ref().expect("the DQN head");
        let states: Vec<&NavState> = batch.iter().map(|&i| &dqn.replay.get(i).state).collect();
        let p = Padded::new(&states);
        let n = batch.len();
        let plain = model.device().without_autodiff();
        let idx: Vec<i64> = batch.iter().map(|&i| p.index(dqn.replay.get(i).action) as i64).collect();
        let idx = Tensor::<2, Int>::from_data(TensorData::new(idx, [n, 1]), &plain);
        let q_sa = model.q_values(&p).gather(1, idx).reshape([n]);
        let td = Tensor::<1>::from_data(TensorData::new(y, [n]), &plain) - q_sa;
        if self.cfg.dqn_huber {
            // Huber with δ = 1: ½x² inside ±1, |x| − ½ outside.
            let a = td.abs();
            let inside = a.clone().clamp_max(1.0);
            (inside.clone().square().mul_scalar(0.5) + (a - inside)).mean()
        } else {
            td.square().mean()
        }
    }

    /// One TD update on replay steps `batch`; copies the online network into the target every
    /// `dqn_target_update_period` updates. Returns the batch's loss before the step.
    pub async fn td_update(&mut self, batch: &[usize]) -> Result<f32, String> {
        let y = self.td_targets(batch).await?;
        let model = self.model.take().expect("model");
        let loss = self.td_loss_tensor(&model, batch, y);
        let figure = loss.clone().detach();
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        let grads = match self.cfg.max_grad_norm {
            Some(max) => clip_global_norm(&model, grads, max),
            None => grads,
        };
        let model = self.optim.step(self.cfg.dqn_learning_rate, model, grads);
        self.counters.updates += 1;
        if self.counters.updates.is_multiple_of(self.cfg.dqn_target_update_period as u64) {
            self.dqn.as_mut().expect("the DQN head").target = model.valid();
        }
        self.model = Some(model);
        let f = read(figure).await?[0];
        if !f.is_finite() {
            return Err(format!("the update gave a non-finite TD loss ({f}): training stopped"));
        }
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::navigator::agent::choice_at;
    use crate::navigator::agent::tests::{assert_nothing_left, partly_acted, small};
    use crate::navigator::config::{Head, NavigatorConfig};
    use crate::navigator::features::EpisodeMemory;
    use crate::navigator::features::tests::observation;
    use crate::util::block_on;
    use std::collections::HashSet;

    fn dqn() -> NavigatorConfig {
        NavigatorConfig { head: Head::Dqn, dqn_batch_size: 4, dqn_replay_capacity: 64, dqn_min_replay: 4, dqn_n_step: 2, ..small() }
    }

    /// Three episodes on the fixture page, stored in the DQN navigator's replay.
    fn fill_replay(nav: &mut Navigator) {
        let mut eps = Vec::new();
        for (first, reward) in
            [(NavAction::Set { field: 1, element: 1 }, 0.5), (NavAction::Click { element: 0 }, -1.0), (NavAction::Set { field: 0, element: 1 }, 0.5)]
        {
            let mut mem = EpisodeMemory::default();
            let s0 = nav.encode(&observation(), &mut mem, true);
            mem.acted(&s0, first);
            let s1 = nav.encode(&observation(), &mut mem, true);
            let second = NavAction::Click { element: 1 };
            eps.push(vec![Transition { state: s0, action: first, reward }, Transition { state: s1, action: second, reward: 1.0 }]);
        }
        let cfg = nav.cfg.clone();
        let dqn = nav.dqn.as_mut().unwrap();
        for ep in &eps {
            dqn.replay.push_episode(ep, 1, cfg.discount, cfg.dqn_reward_clip);
        }
    }

    #[test]
    fn dqn_never_chooses_a_closed_choice_greedy_or_exploring() {
        // ε = 1: every training choice is an exploring one; ε = 0: every one is Q's argmax.
        for eps in [1.0, 0.5, 0.0] {
            let cfg = NavigatorConfig { dqn_epsilon_start: eps, dqn_epsilon_end: eps, ..dqn() };
            let mut nav = Navigator::new(cfg, &Device::flex().autodiff(), 3).unwrap();
            let (s, mut mem) = partly_acted(&mut nav);
            let open = (0..s.choices()).filter(|&i| s.is_open(choice_at(&s, i))).count();
            assert!(open >= 2 && open < s.choices(), "some choices open, some closed");
            let mut seen = HashSet::new();
            for i in 0..300 {
                let a = block_on(nav.act(&s, i % 10 == 0)).unwrap().unwrap();
                assert!(s.is_open(a), "{a:?} was closed (ε = {eps})");
                seen.insert(a);
            }
            if eps == 1.0 {
                assert_eq!(seen.len(), open, "exploring reaches every open choice");
            }
            // Q's argmax is an open choice even when a closed one scores higher.
            let q = block_on(nav.q_values(&s)).unwrap();
            assert_eq!(q.len(), open);
            assert_nothing_left(&mut nav, &s, &mut mem);
        }
    }

    #[test]
    fn a_td_step_lowers_the_batchs_td_loss() {
        for (double, huber) in [(true, true), (false, false)] {
            let cfg = NavigatorConfig { dqn_double: double, dqn_huber: huber, dqn_target_update_period: 1_000, dqn_learning_rate: 1e-2, ..dqn() };
            let mut nav = Navigator::new(cfg, &Device::flex().autodiff(), 7).unwrap();
            fill_replay(&mut nav);
            let batch: Vec<usize> = (0..nav.dqn().unwrap().replay.len()).collect();
            let before = block_on(nav.td_loss(&batch)).unwrap();
            let reported = block_on(nav.td_update(&batch)).unwrap();
            assert!((reported - before).abs() < 1e-5, "the step reports the loss it started from");
            let after = block_on(nav.td_loss(&batch)).unwrap();
            assert!(after < before, "double {double}, huber {huber}: {before} → {after}");
            for _ in 0..30 {
                block_on(nav.td_update(&batch)).unwrap();
            }
            let later = block_on(nav.td_loss(&batch)).unwrap();
            assert!(later < before / 2.0, "{before} → {later}");
            assert_eq!(nav.counters.updates, 31);
        }
    }

    #[test]
    fn the_target_network_follows_the_online_one_every_period() {
        let cfg = NavigatorConfig { dqn_target_update_period: 3, ..dqn() };
        let mut nav = Navigator::new(cfg, &Device::flex().autodiff(), 8).unwrap();
        fill_replay(&mut nav);
        let batch: Vec<usize> = (0..4).collect();
        let mut s = nav.dqn().unwrap().replay.get(0).state.clone();
        s.click_open.iter_mut().for_each(|o| *o = true);
        let p = Padded::new(&[&s]);
        let target_q = |nav: &Navigator| nav.dqn().unwrap().target.q_values(&p).into_data().try_to_vec::<f32>().unwrap();
        let online_q = |nav: &Navigator| nav.model().valid().q_values(&p).into_data().try_to_vec::<f32>().unwrap();
        assert_eq!(target_q(&nav), online_q(&nav), "the target starts as the online network");
        let t0 = target_q(&nav);
        for _ in 0..2 {
            block_on(nav.td_update(&batch)).unwrap();
        }
        assert_eq!(target_q(&nav), t0, "unchanged between copies");
        assert_ne!(online_q(&nav), t0);
        block_on(nav.td_update(&batch)).unwrap();
        assert_eq!(target_q(&nav), online_q(&nav), "copied at update 3");
    }

    #[test]
    fn the_dqn_learner_state_round_trips_and_is_refused_by_the_other_head() {
        let dev = Device::flex().autodiff();
        let mut nav = Navigator::new(dqn(), &dev, 5).unwrap();
        assert_eq!(block_on(nav.optimizer_state()).unwrap(), None, "nothing yet");
        fill_replay(&mut nav);
        let only_replay = block_on(nav.optimizer_state()).unwrap().expect("a replay to keep");
        let batch: Vec<usize> = (0..4).collect();
        block_on(nav.td_update(&batch)).unwrap();
        let bytes = block_on(nav.optimizer_state()).unwrap().unwrap();
        assert!(bytes.len() > only_replay.len(), "Adam's moments join it");

        let mut other = Navigator::new(dqn(), &dev, 5).unwrap();
        other.load_optimizer_state(&bytes).unwrap();
        assert_eq!(other.dqn().unwrap().replay.len(), nav.dqn().unwrap().replay.len());
        // Same weights (same seed, then the saved target and moments): the next steps agree.
        let mut again = Navigator::new(dqn(), &dev, 5).unwrap();
        let ckpt = block_on(nav.save("x", crate::learn::checkpoint::Precision::Full)).unwrap();
        let (mut loaded, _) = Navigator::load(&ckpt, &dev, 0).unwrap();
        loaded.load_optimizer_state(&bytes).unwrap();
        let ours: Vec<f32> = (0..3).map(|_| block_on(nav.td_update(&batch)).unwrap()).collect();
        let theirs: Vec<f32> = (0..3).map(|_| block_on(loaded.td_update(&batch)).unwrap()).collect();
        assert_eq!(ours, theirs);

        let err = Navigator::new(small(), &dev, 5).unwrap().load_optimizer_state(&bytes).unwrap_err();
        assert!(err.contains("DQN"), "{err}");
        let a2c_state = {
            let mut a = Navigator::new(small(), &dev, 5).unwrap();
            let eps = crate::navigator::agent::tests::batch(&mut a);
            block_on(a.update(&eps)).unwrap();
            block_on(a.optimizer_state()).unwrap().unwrap()
        };
        assert!(again.load_optimizer_state(&a2c_state).unwrap_err().contains("A2C"));
        let mut cut = bytes.clone();
        cut.truncate(bytes.len() - 7);
        let err = again.load_optimizer_state(&cut).unwrap_err();
        assert!(err.contains("damaged"), "{err}");
        assert!(again.dqn().unwrap().replay.is_empty(), "a refused state changes nothing");
    }
}
