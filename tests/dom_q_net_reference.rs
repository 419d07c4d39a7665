//! DOM-Q-Net's options for the authors' code's choices leave the shipped agents as they were:
//! every `agents/*.wlq` loads with the paper's stream depth and goal tokens, and its greedy
//! Q-values on fixed pages are the ones it gave before those options existed.
#![cfg(not(target_arch = "wasm32"))]

use burn::prelude::Device;
use weblab::dom_q_net::DomQNetAgent;
use weblab::dom_q_net::checkpoint::Checkpoint;
use weblab::env::{Environment, Observation};
use weblab::sim::{SIM_TASKS, SimEnv};
use weblab::util::block_on;

fn shipped() -> Vec<(String, Vec<u8>)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/agents");
    let manifest: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(format!("{dir}/manifest.json")).unwrap()).unwrap();
    manifest["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["file"].as_str().unwrap())
        .filter(|file| file.ends_with(".wlq"))
        .map(|file| (file.to_string(), std::fs::read(format!("{dir}/{file}")).unwrap()))
        .collect()
}

/// Fixed pages: the simulator's two tasks at two seeds each.
fn pages() -> Vec<Observation> {
    let mut out = Vec::new();
    for task in SIM_TASKS {
        for seed in [3, 11] {
            out.push(block_on(SimEnv::new(None).reset(&SimEnv::spec(task), seed)).unwrap());
        }
    }
    out
}

/// A fingerprint of an agent's greedy Q-values on `pages`: each page's DOM, token and mode
/// values summed, and the first DOM value.
fn fingerprint(agent: &mut DomQNetAgent, pages: &[Observation]) -> Vec<f32> {
    let mut out = Vec::new();
    for obs in pages {
        let enc = agent.encode(obs);
        let q = block_on(agent.q_values(&enc, false)).unwrap();
        out.push(q.dom[0]);
        out.push(q.dom.iter().sum());
        out.push(q.token.iter().sum());
        out.push(q.mode.iter().sum());
    }
    out
}

/// What each shipped agent gave on [`pages`] before the stream depth and goal-token options
/// existed (recorded with the code of commit fe1a824); click-link's are its retrained agent's
/// (trained on the lab's and the real page, da5a15e), recorded at be90c27; agents shipped later,
/// as the test printed them when they were added (multitask-19, multitask-typing, multitask-11, multitask-20: 2026-12-07).
const BEFORE: &[(&str, &[f32])] = &[
    (
        "click-link.wlq",
        &[
            0.87691826,
            3.0030317,
            0.4159103,
            -0.13546087,
            0.16374287,
            2.289507,
            0.08391979,
            -0.12149072,
            0.4060132,
            1.6643105,
            0.65958476,
            -0.1111206,
            0.24922162,
            1.6842766,
            0.75222325,
            -0.07037519,
        ],
    ),
    (
        "click-test-2.wlq",
        &[
            0.5236418,
            2.5784955,
            0.42055237,
            -0.020294167,
            0.13599247,
            2.04939,
            0.46132964,
            0.07629083,
            0.41135678,
            0.8506656,
            0.8055905,
            0.0075061284,
            0.25045723,
            1.0654998,
            1.0444984,
            0.037938215,
        ],
    ),
    (
        "click-button-sequence.wlq",
        &[
            0.14542069,
            1.612742,
            -0.07770559,
            -0.090211265,
            0.09373619,
            1.5796633,
            0.20329362,
            -0.056638114,
            0.16893634,
            0.5985397,
            0.2151812,
            -0.10941833,
            0.36465833,
            0.7865468,
            0.313088,
            -0.09255931,
        ],
    ),
    (
        "click-tab-2.wlq",
        &[
            0.7695006,
            2.5193512,
            0.28897896,
            -0.13528523,
            0.35487446,
            3.1915555,
            0.23173493,
            -0.15373665,
            0.31949657,
            1.1828915,
            0.32262993,
            -0.17266671,
            0.33412975,
            1.8705127,
            0.13715181,
            -0.16723698,
        ],
    ),
    (
        "navigate-tree.wlq",
        &[
            0.8461008,
            4.169609,
            0.43380332,
            -0.078358464,
            0.7164818,
            4.5359316,
            0.2130973,
            -0.05915758,
            0.6644019,
            2.376638,
            0.5370568,
            -0.016629059,
            0.69231945,
            3.1367254,
            0.70249563,
            -0.028309483,
        ],
    ),
    (
        "focus-text-2.wlq",
        &[
            0.18250671,
            0.6376434,
            0.8683602,
            0.22889142,
            0.013405569,
            0.98427653,
            0.77117324,
            0.2154833,
            -0.07664133,
            0.24474987,
            1.1472938,
            0.19145218,
            -0.12526348,
            0.32391602,
            1.500325,
            0.20884423,
        ],
    ),
    (
        "enter-text-dynamic.wlq",
        &[
            0.3573914,
            1.621851,
            0.51657677,
            -0.07309392,
            0.24188656,
            1.3866442,
            0.36349195,
            -0.11669794,
            0.24205202,
            0.9926955,
            0.885528,
            -0.11783978,
            0.40795773,
            1.4489282,
            2.3384888,
            -0.04391196,
        ],
    ),
    (
        "email-inbox-delete.wlq",
        &[
            0.2911606,
            1.4485054,
            -0.40924037,
            -0.08676787,
            0.28417712,
            1.8681958,
            -0.26218465,
            -0.08732127,
            0.17106663,
            0.5888859,
            0.052310266,
            -0.10672556,
            0.19512257,
            0.9157741,
            -0.2417568,
            -0.09096295,
        ],
    ),
    (
        "click-widget.wlq",
        &[
            -0.056754738,
            -0.37697822,
            0.5330181,
            -0.050536286,
            -0.009739071,
            -0.3277729,
            0.51224536,
            -0.04564315,
            0.021898597,
            -0.24229807,
            1.0997087,
            -0.08140249,
            0.027996749,
            -0.23778826,
            1.0139378,
            -0.07539669,
        ],
    ),
    (
        "click-option.wlq",
        &[
            0.1337246,
            0.6425695,
            0.46220532,
            -0.058753833,
            0.2031318,
            1.585985,
            0.4253956,
            -0.01863454,
            0.32068256,
            0.72269976,
            1.267783,
            -0.04767996,
            0.16076377,
            0.721182,
            1.1415302,
            -0.043458737,
        ],
    ),
    (
        "click-checkboxes.wlq",
        &[
            0.41473347,
            0.9600126,
            0.9898125,
            -0.11288573,
            0.12480958,
            1.4892416,
            0.8845326,
            -0.11407353,
            0.18901712,
            0.81609493,
            0.72548765,
            -0.14154229,
            0.09276934,
            1.023155,
            0.9714613,
            -0.13960466,
        ],
    ),
    (
        "enter-password.wlq",
        &[
            -0.030147724,
            0.33745107,
            2.3249888,
            -0.13559848,
            0.12016498,
            0.61753845,
            1.790924,
            -0.13247687,
            0.13393974,
            0.70367324,
            3.3549523,
            -0.13882446,
            -0.09893593,
            0.5389062,
            2.2101798,
            -0.13882446,
        ],
    ),
    (
        "click-test.wlq",
        &[
            0.41897932, 2.5673578, 1.5917373, 0.28317735, 0.39045274, 2.3670843, 1.7147101, 0.3967262, 0.43555743, 0.87218225, 2.2723548, 0.3508895,
            0.36923885, 1.260568, 2.6094637, 0.32269922,
        ],
    ),
    (
        "focus-text.wlq",
        &[
            0.43019664,
            2.3855994,
            0.445769,
            -0.063442275,
            0.32531023,
            2.270193,
            0.5622211,
            0.11063233,
            0.26683795,
            1.1101019,
            0.89936274,
            0.055695206,
            0.37743703,
            1.4575105,
            0.80754,
            0.06770499,
        ],
    ),
    (
        "click-tab.wlq",
        &[
            0.41396338,
            1.5881622,
            0.11410357,
            -0.115677826,
            0.24156766,
            1.877275,
            0.09982266,
            -0.115650445,
            0.20429403,
            0.88089156,
            -0.09208438,
            -0.09344691,
            0.26170328,
            1.0663257,
            -0.004603643,
            -0.113119245,
        ],
    ),
    (
        "click-dialog.wlq",
        &[
            0.4374976, 2.5459607, 0.872926, 0.09527099, 0.46630022, 3.1508577, 0.942257, 0.08328758, 0.3763489, 1.1781896, 1.4144574, 0.15209703,
            0.39384595, 1.5807711, 1.4290676, 0.15620768,
        ],
    ),
    (
        "enter-text.wlq",
        &[
            0.114090905,
            1.1843941,
            1.0879624,
            -0.021892846,
            -0.006912783,
            1.0153552,
            1.8992953,
            0.075467974,
            0.1227023,
            0.7082472,
            -0.091489136,
            -0.12115261,
            0.12432821,
            1.1997519,
            0.8636013,
            -0.016080756,
        ],
    ),
    (
        "click-button.wlq",
        &[
            0.7782634,
            2.8343537,
            -0.050942708,
            -0.111161545,
            0.1414124,
            2.8638487,
            -0.009515464,
            -0.12852412,
            0.9456231,
            2.6939776,
            0.5297058,
            -0.14601178,
            0.82131404,
            3.5901217,
            0.55046445,
            -0.14628741,
        ],
    ),
    (
        "multitask-9.wlq",
        &[
            -0.041961074,
            0.23422554,
            0.6509033,
            0.21634442,
            -0.049379356,
            -0.022322245,
            0.85419995,
            0.21550104,
            0.1548514,
            0.3204977,
            -0.25873494,
            0.22455023,
            0.17823681,
            0.52999043,
            0.13085717,
            0.21611415,
        ],
    ),
    (
        "multitask-19.wlq",
        &[
            0.5864693, 2.4524183, 1.0912057, 0.35387185, 0.35116598, 2.8089128, 1.1122293, 0.34571338, 0.30313846, 0.32102582, 0.8918081, 0.31960747,
            0.34541428, 1.0947472, 0.9210254, 0.32859302,
        ],
    ),
    (
        "multitask-11.wlq",
        &[
            0.046484582,
            0.44631085,
            1.1627711,
            0.1910553,
            0.06395454,
            0.5080727,
            1.0686883,
            0.19090588,
            0.13464355,
            0.18628162,
            0.4754914,
            0.1910553,
            0.13464355,
            0.30249956,
            1.0898793,
            0.1910553,
        ],
    ),
    (
        "multitask-typing.wlq",
        &[
            0.14917305,
            1.5473129,
            0.98142785,
            0.051912345,
            0.22342156,
            1.4921093,
            0.93323153,
            0.025170803,
            0.380506,
            1.1116227,
            0.80411005,
            0.037450947,
            0.35089168,
            1.3715775,
            0.5764243,
            0.033128045,
        ],
    ),
    (
        "multitask-20.wlq",
        &[
            0.635086,
            2.902708,
            0.8657633,
            0.22991323,
            0.553574,
            3.6464863,
            0.99688315,
            0.24315876,
            0.32633892,
            0.9416681,
            -0.58284545,
            0.19944781,
            0.37383088,
            1.4495292,
            -1.4715807,
            0.20733137,
        ],
    ),
];

#[test]
fn shipped_agents_load_and_act_as_before() {
    let pages = pages();
    let shipped = shipped();
    let mut unrecorded = Vec::new();
    for (file, bytes) in &shipped {
        if !BEFORE.iter().any(|(f, _)| f == file) {
            let ckpt = Checkpoint::from_bytes(bytes).unwrap_or_else(|e| panic!("{file}: {e}"));
            let mut agent = DomQNetAgent::from_checkpoint(ckpt, &Device::flex()).unwrap();
            unrecorded.push(format!("(\"{file}\", &{:?}),", fingerprint(&mut agent, &pages)));
        }
    }
    assert!(unrecorded.is_empty(), "agents with no record: add them to BEFORE:\n{}", unrecorded.join("\n"));
    assert_eq!(shipped.len(), BEFORE.len(), "an agent was removed: drop its record");
    for (file, bytes) in shipped {
        let ckpt = Checkpoint::from_bytes(&bytes).unwrap_or_else(|e| panic!("{file}: {e}"));
        let mut agent = DomQNetAgent::from_checkpoint(ckpt, &Device::flex()).unwrap();
        let default = weblab::dom_q_net::DqnConfig::default();
        assert_eq!(agent.cfg.stream_hidden_layers, default.stream_hidden_layers, "{file}: the paper's Q streams");
        assert!(!agent.cfg.normalize_goal_tokens, "{file}: goal tokens as the utterance has them");
        let now = fingerprint(&mut agent, &pages);
        let before = BEFORE.iter().find(|(f, _)| *f == file).unwrap_or_else(|| panic!("no record of {file}")).1;
        for (i, (a, b)) in now.iter().zip(before).enumerate() {
            assert!((a - b).abs() <= 1e-4 * (1.0 + b.abs()), "{file}, value {i}: {a} now, {b} before");
        }
    }
}

/// The reference code's preset, shrunk (buffer, batch) so it runs in a moment.
fn small_reference() -> weblab::dom_q_net::DqnConfig {
    weblab::dom_q_net::DqnConfig {
        batch_size: 8,
        replay_capacity: 200,
        learning_starts: 8,
        seed: 5,
        ..weblab::dom_q_net::DqnConfig::reference_code()
    }
}

#[test]
fn a_reference_code_agent_trains_and_its_checkpoint_brings_it_back() {
    use weblab::dom_q_net::train::{Control, TrainEvent, train};
    let dev = Device::flex().autodiff();
    let mut agent = DomQNetAgent::new(small_reference(), &dev).unwrap();
    let tasks: Vec<_> = SIM_TASKS.iter().map(|t| SimEnv::spec(t)).collect();
    let mut envs: Vec<SimEnv> = SIM_TASKS.iter().map(|_| SimEnv::new(Some(8))).collect();
    let mut losses = Vec::new();
    block_on(train(&mut agent, &mut envs, &tasks, 60, 5, |ev| {
        if let TrainEvent::Update { stats, .. } = ev {
            losses.push(stats.loss);
        }
        Control::Continue
    }))
    .unwrap();
    assert!(losses.len() > 40 && losses.iter().all(|l| l.is_finite()), "{losses:?}");

    let pages = pages();
    let before = fingerprint(&mut agent, &pages);
    let bytes = block_on(agent.save(&["sim-click".into(), "sim-type".into()])).unwrap();
    let mut loaded = DomQNetAgent::from_checkpoint(Checkpoint::from_bytes(&bytes).unwrap(), &Device::flex()).unwrap();
    assert_eq!(loaded.cfg, small_reference(), "depth, goal normalisation and the rest come back");
    assert_eq!(fingerprint(&mut loaded, &pages), before, "the deeper streams' weights came back");
}
