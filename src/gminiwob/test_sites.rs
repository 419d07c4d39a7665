//! The evaluation sites (5 sites × 4 difficulty levels) and the random-design generator.
//!
//! The sites follow the reference's `test_websites.py` (reference §3.7), levels 0–3 being its
//! difficulty `d` (the CoDE paper plots them as levels 1–4). The reference does not say which of
//! its builders is the paper's "Login" and "Enter Address"; we take the single-page login and
//! address builders, and "Shopping" is its three-page home → login → address site, as in the
//! paper (the only one that spans several pages).

use serde::{Deserialize, Serialize};

use super::design::{Design, MAX_PAGES};
use super::primitive::{PRIMITIVE_COUNT, by_name};
use crate::rng::Rng;

/// The test sites, in the CoDE paper's order (Table 1).
pub const TEST_SITES: [&str; 5] = ["login", "address", "payment", "flight", "shopping"];
/// Difficulty levels 0..LEVELS.
pub const LEVELS: u32 = 4;

fn home(level: u32) -> Vec<&'static str> {
    match level {
        0 => vec!["navbar", "next_login_page"],
        1 => vec!["navbar", "carousel", "next_login_page"],
        2 => vec!["navbar", "carousel", "dealmedia", "next_login_page"],
        _ => vec!["navbar", "inpgroup1", "carousel", "dealmedia", "deck", "footer1", "next_login_page"],
    }
}

fn login(level: u32) -> Vec<&'static str> {
    match level {
        0 => vec!["username", "password"],
        1 => vec!["navbar", "username", "password", "rememberme"],
        2 => vec!["navbar", "username", "password", "rememberme", "stayloggedin", "forgotusername"],
        _ => vec!["navbar", "username", "password", "rememberme", "stayloggedin", "forgotusername", "captcha", "forgotpassowrd"],
    }
}

fn address(level: u32) -> Vec<&'static str> {
    match level {
        0 => vec!["firstname", "lastname"],
        1 => vec!["navbar", "firstname", "lastname", "addressline1"],
        2 => vec!["navbar", "firstname", "lastname", "addressline1", "addressline2", "city"],
        _ => vec!["navbar", "firstname", "lastname", "addressline1", "addressline2", "city", "zipcode", "state"],
    }
}

fn flight(level: u32) -> Vec<&'static str> {
    let mut p = vec!["navbar", "departureairport", "destinationairport"];
    if level >= 1 {
        p.extend(["departuredate", "destinationdate"]);
    }
    if level >= 2 {
        p.extend(["numberofpeople", "cabin"]);
    }
    if level >= 3 {
        p.push("flighttype");
    }
    p.extend(["footer1", "submit"]);
    p
}

fn payment(level: u32) -> Vec<&'static str> {
    let mut p = vec!["navbar", "cc", "fullname"];
    if level >= 1 {
        p.push("ccnumber");
    }
    if level >= 2 {
        p.push("ccexpdate");
    }
    if level >= 3 {
        p.push("cccvv");
    }
    p.extend(["footer1", "submit"]);
    p
}

/// The design of test site `name` at difficulty `level` (0–3), or `None` for an unknown one.
pub fn test_site(name: &str, level: u32) -> Option<Design> {
    if level >= LEVELS {
        return None;
    }
    let pages: Vec<Vec<&str>> = match name {
        "login" => vec![[login(level), vec!["submit"]].concat()],
        "address" => vec![[address(level), vec!["submit"]].concat()],
        "payment" => vec![payment(level)],
        "flight" => vec![flight(level)],
        "shopping" => vec![home(level), [login(level), vec!["next_login"]].concat(), [address(level), vec!["submit"]].concat()],
        _ => return None,
    };
    let entries: Vec<(usize, u32)> = pages
        .iter()
        .enumerate()
        .flat_map(|(page, names)| names.iter().map(move |n| (by_name(n).expect("a known primitive").index, page as u32)))
        .collect();
    Some(Design::from_entries(Some(pages.len() as u32), &entries).expect("test sites are valid designs"))
}

/// The papers' Domain Randomization: k ~ U{0..K−1}, then each of N slots draws a primitive
/// uniformly from the 40 plus SKIP and a page uniformly from 0..=k; the page count is the highest
/// page used plus one (`auto_num_pages`). The papers leave K and N unstated; the defaults follow
/// the reference's own random samplers (K up to 4 pages, up to ~28 primitives).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RandomDesign {
    /// K: most pages.
    pub max_pages: u32,
    /// N: primitive slots (each may come out SKIP).
    pub slots: u32,
}

impl Default for RandomDesign {
    fn default() -> Self {
        RandomDesign { max_pages: 4, slots: 24 }
    }
}

impl RandomDesign {
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=MAX_PAGES).contains(&self.max_pages) {
            return Err(format!("max_pages must be 1 to {MAX_PAGES}, not {}", self.max_pages));
        }
        if !(1..=super::design::MAX_PLACED as u32).contains(&self.slots) {
            return Err(format!("slots must be 1 to {}, not {}", super::design::MAX_PLACED, self.slots));
        }
        Ok(())
    }

    pub fn sample(&self, rng: &mut Rng) -> Design {
        let k = rng.below(self.max_pages.max(1) as usize) as u32;
        let entries: Vec<(usize, u32)> = (0..self.slots).map(|_| (rng.below(PRIMITIVE_COUNT + 1), rng.below(k as usize + 1) as u32)).collect();
        Design::from_entries(None, &entries).expect("random designs stay within the caps")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(d: &Design, page: u32) -> Vec<&'static str> {
        d.on_page(page).map(|p| p.primitive().name).collect()
    }

    #[test]
    fn every_site_and_level_exists_and_grows_with_the_level() {
        for site in TEST_SITES {
            let mut last = 0;
            for level in 0..LEVELS {
                let d = test_site(site, level).unwrap_or_else(|| panic!("{site} level {level}"));
                let (active, passive) = d.counts();
                assert!(active > 0, "{site}/{level} has fields");
                assert!(active + passive >= last, "{site} shrinks at level {level}");
                last = active + passive;
            }
        }
        assert!(test_site("login", 4).is_none() && test_site("checkout", 0).is_none());
    }

    #[test]
    fn sites_match_the_reference_lists() {
        let s = test_site("shopping", 3).unwrap();
        assert_eq!(s.pages(), 3);
        assert_eq!(names(&s, 0), ["navbar", "inpgroup1", "carousel", "dealmedia", "deck", "footer1", "next_login_page"]);
        assert_eq!(names(&s, 1).last(), Some(&"next_login"));
        assert_eq!(names(&s, 2).last(), Some(&"submit"));
        assert_eq!(s.profile_keys().len(), 12, "login 5 + address 7 fields, as CoDE's Table 1");
        let l = test_site("login", 0).unwrap();
        assert_eq!((l.pages(), names(&l, 0)), (1, vec!["username", "password", "submit"]));
        let f = test_site("flight", 3).unwrap();
        assert_eq!(f.profile_keys().len(), 7);
        let p = test_site("payment", 3).unwrap();
        assert_eq!(p.profile_keys().len(), 5);
        let a = test_site("address", 3).unwrap();
        assert_eq!(a.profile_keys().len(), 7);
    }

    #[test]
    fn random_designs_are_valid_varied_and_reproducible() {
        let sampler = RandomDesign::default();
        let mut r1 = Rng::new(5);
        let mut r2 = Rng::new(5);
        let a: Vec<Design> = (0..200).map(|_| sampler.sample(&mut r1)).collect();
        let b: Vec<Design> = (0..200).map(|_| sampler.sample(&mut r2)).collect();
        assert_eq!(a, b);
        let pages: std::collections::HashSet<u32> = a.iter().map(|d| d.pages()).collect();
        assert!(pages.len() >= 3, "page counts vary: {pages:?}");
        assert!(a.iter().all(|d| d.pages() <= sampler.max_pages && d.placed().len() <= sampler.slots as usize));
        assert!(RandomDesign { max_pages: 0, slots: 3 }.validate().is_err());
        assert!(RandomDesign { max_pages: 2, slots: 1000 }.validate().is_err());
    }
}
