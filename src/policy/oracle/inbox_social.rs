//! Scripts for the email-inbox and social-media families.
//!
//! The lab's email-inbox pages show one of three views at a time (`#inbox`, `#email-view`,
//! `#compose`); the scripts read which one is visible and act on it. MiniWoB++'s pages build the
//! inbox otherwise (`#main`, `#email`, `#reply`, `#forward`, icons instead of buttons), so they
//! have scripts of their own ([`REAL_SCRIPTS`], picked by the task's source).
//!
//! social-media pages are a feed of posts (the lab's `.post`, MiniWoB++'s `.media`), each with
//! its author's handle (`.handle`, `.username`) and action icons named by class (toggling
//! `.active` in the -all/-some variants); the plain variant also has a `.more` menu whose entries
//! appear only while it is open. One script reads both.

use super::{Entry, button, by_id, click, fill};
use crate::env::{Action, DomNode, Observation};

pub(super) const SCRIPTS: &[Entry] = &[
    ("email-inbox", email_inbox, email_inbox_wrong),
    ("email-inbox-delete", email_inbox, email_inbox_wrong),
    ("email-inbox-nl", email_inbox, email_inbox_wrong),
    ("social-media", social_media, social_media_wrong),
    ("social-media-all", social_media_all, social_media_all_wrong),
    ("social-media-some", social_media_some, social_media_some_wrong),
];

/// Scripts for MiniWoB++'s own email-inbox pages. email-inbox-nl-turk (the lab's email-inbox-nl)
/// is the same inbox asked for in people's words; the page hands over its fields (by, task, to,
/// message) with the utterance, so the same script does its job.
pub(super) const REAL_SCRIPTS: &[Entry] = &[
    ("email-inbox", real_email_inbox, real_email_inbox_wrong),
    ("email-inbox-delete", real_email_inbox, real_email_inbox_wrong),
    ("email-inbox-nl-turk", real_email_inbox, real_email_inbox_wrong),
];

// ------------------------------------------------------------------------------- tree helpers

/// Indices of `root` and everything under it, in document order.
fn subtree(obs: &Observation, root: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(i) = stack.pop() {
        out.push(i);
        stack.extend(obs.dom.nodes[i].children.iter().rev());
    }
    out
}

/// The first node under `root` (inclusive) that matches.
fn find_in(obs: &Observation, root: usize, pred: impl Fn(&DomNode) -> bool) -> Option<&DomNode> {
    subtree(obs, root).into_iter().map(|i| &obs.dom.nodes[i]).find(|n| pred(n))
}

/// Indices of the nodes with class `container` that hold a node with class `label` and text `text`.
fn containers_with(obs: &Observation, container: &str, label: &str, text: &str) -> Vec<usize> {
    (0..obs.dom.nodes.len())
        .filter(|&i| obs.dom.nodes[i].has_class(container))
        .filter(|&i| find_in(obs, i, |n| n.has_class(label) && n.text == text).is_some())
        .collect()
}

fn by_id_index(obs: &Observation, id: &str) -> Option<usize> {
    obs.dom.nodes.iter().position(|n| n.id == id)
}

// ------------------------------------------------------------------------------- email-inbox

/// What to do for `task` on the email from `by`, with the recipient and reply text to use.
struct MailJob<'a> {
    task: &'a str,
    by: &'a str,
    to: String,
    message: String,
}

fn mail_job(obs: &Observation, wrong: bool) -> Option<MailJob<'_>> {
    let ins = &obs.instruction;
    let task = ins.field("task")?;
    let suffix = if wrong { "x" } else { "" };
    Some(MailJob {
        task,
        by: ins.field("by")?,
        to: format!("{}{suffix}", ins.field("to").unwrap_or("")),
        message: format!("{}{suffix}", ins.field("message").unwrap_or("")),
    })
}

/// Carries out a job from whichever view is showing. `row_sender` picks the inbox row to act on.
fn do_mail_job(obs: &Observation, job: &MailJob, row_sender: impl Fn(&str) -> bool) -> Option<Action> {
    if let Some(_compose) = by_id(obs, "compose") {
        let send = by_id(obs, "send").map(click);
        return match job.task {
            "forward" => fill(by_id(obs, "compose-to")?, &job.to).or(send),
            "reply" => fill(by_id(obs, "compose-body")?, &job.message).or(send),
            _ => by_id(obs, "close-compose").map(click),
        };
    }
    if let Some(_view) = by_id(obs, "email-view") {
        if !row_sender(&by_id(obs, "view-sender")?.text) {
            return by_id(obs, "back").map(click);
        }
        let id = match job.task {
            "forward" => "forward",
            "reply" => "reply",
            "star" => "view-star",
            _ => "view-trash",
        };
        return by_id(obs, id).map(click);
    }
    let row = (0..obs.dom.nodes.len())
        .filter(|&i| obs.dom.nodes[i].has_class("email"))
        .find(|&i| find_in(obs, i, |n| n.has_class("sender") && row_sender(&n.text)).is_some())?;
    let target = match job.task {
        "star" => find_in(obs, row, |n| n.has_class("star")),
        "delete" => find_in(obs, row, |n| n.has_class("trash")),
        _ => find_in(obs, row, |n| n.has_class("sender")),
    };
    target.map(click)
}

/// Finds the email by its sender, then forwards, replies, stars or deletes it.
fn email_inbox(obs: &Observation) -> Option<Action> {
    let job = mail_job(obs, false)?;
    do_mail_job(obs, &job, |s| s == job.by)
}

/// Stars or deletes an email from someone else; forwards to a misspelt recipient; replies with a
/// changed text.
fn email_inbox_wrong(obs: &Observation) -> Option<Action> {
    let job = mail_job(obs, true)?;
    if matches!(job.task, "star" | "delete") { do_mail_job(obs, &job, |s| s != job.by) } else { do_mail_job(obs, &job, |s| s == job.by) }
}

// ------------------------------------------------------------------------------- MiniWoB++'s email-inbox
// Inbox `#main` of `.email-thread` rows (`.email-sender`, icons `.star` and `.trash`); an opened
// email `#email` with `#close-email`, the same icons, and `.email-reply` / `.email-forward`;
// `#reply` (`#reply-text`, `#send-reply`) and `#forward` (`.forward-sender`, `#send-forward`).
// Starring or deleting works from the inbox row itself.

fn do_real_mail_job(obs: &Observation, job: &MailJob, row_sender: impl Fn(&str) -> bool) -> Option<Action> {
    if by_id(obs, "forward").is_some() {
        let to = obs.dom.nodes.iter().find(|n| n.has_class("forward-sender"))?;
        return fill(to, &job.to).or_else(|| by_id(obs, "send-forward").map(click));
    }
    if by_id(obs, "reply").is_some() {
        return fill(by_id(obs, "reply-text")?, &job.message).or_else(|| by_id(obs, "send-reply").map(click));
    }
    if let Some(view) = by_id_index(obs, "email") {
        if !row_sender(&find_in(obs, view, |n| n.has_class("email-sender"))?.text) {
            return by_id(obs, "close-email").map(click);
        }
        let class = match job.task {
            "forward" => "email-forward",
            "reply" => "email-reply",
            "star" => "star",
            _ => "trash",
        };
        return find_in(obs, view, |n| n.has_class(class)).map(click);
    }
    let row = (0..obs.dom.nodes.len())
        .filter(|&i| obs.dom.nodes[i].has_class("email-thread"))
        .find(|&i| find_in(obs, i, |n| n.has_class("email-sender") && row_sender(&n.text)).is_some())?;
    let class = match job.task {
        "star" => "star",
        "delete" => "trash",
        _ => "email-sender",
    };
    find_in(obs, row, |n| n.has_class(class)).map(click)
}

fn real_email_inbox(obs: &Observation) -> Option<Action> {
    let job = mail_job(obs, false)?;
    do_real_mail_job(obs, &job, |s| s == job.by)
}

/// As [`email_inbox_wrong`]: the other sender's row, a misspelt recipient, a changed reply.
fn real_email_inbox_wrong(obs: &Observation) -> Option<Action> {
    let job = mail_job(obs, true)?;
    if matches!(job.task, "star" | "delete") { do_real_mail_job(obs, &job, |s| s != job.by) } else { do_real_mail_job(obs, &job, |s| s == job.by) }
}

// ------------------------------------------------------------------------------- social-media

/// The posts by `user`: the lab's `.post` with its `.handle`, or MiniWoB++'s `.media` with its
/// `.username`.
fn posts_by(obs: &Observation, user: &str) -> Vec<usize> {
    let mut posts = containers_with(obs, "post", "handle", user);
    posts.extend(containers_with(obs, "media", "username", user));
    posts
}

/// Every post of the feed.
fn all_posts(obs: &Observation) -> Vec<usize> {
    (0..obs.dom.nodes.len()).filter(|&i| obs.dom.nodes[i].has_class("post") || obs.dom.nodes[i].has_class("media")).collect()
}

/// The class of the icon behind an action name, or `None` for entries of the "more" menu.
fn icon_class(name: &str) -> Option<&'static str> {
    match name {
        "Reply" => Some("reply"),
        "Retweet" => Some("retweet"),
        "Like" => Some("like"),
        "Share" => Some("share"),
        _ => None,
    }
}

/// A post's icon of one class: the lab's `.act` icons, MiniWoB++'s plain spans (its menu entries
/// are list items, and one of them shares the class `share`).
fn icon<'a>(obs: &'a Observation, post: usize, class: &str) -> Option<&'a DomNode> {
    find_in(obs, post, |n| n.has_class(class) && (n.has_class("act") || n.tag == "SPAN"))
}

/// An entry of a post's open menu: the lab's `.menu-item`, or MiniWoB++'s list item ("Mute
/// @user" for "Mute").
fn menu_entry<'a>(obs: &'a Observation, post: usize, name: &str) -> Option<&'a DomNode> {
    let named = |t: &str| t == name || t.strip_prefix(name).is_some_and(|rest| rest.starts_with(' '));
    find_in(obs, post, |n| (n.has_class("menu-item") || n.tag == "LI") && named(&n.text))
}

/// Clicks the named action on a post by the named user, opening the post's menu first if needed.
fn social_media(obs: &Observation) -> Option<Action> {
    let user = obs.instruction.field("user")?;
    let name = obs.instruction.field("button")?;
    let posts = posts_by(obs, user);
    match icon_class(name) {
        Some(class) => icon(obs, *posts.first()?, class).map(click),
        None => posts.iter().find_map(|&p| menu_entry(obs, p, name)).or_else(|| icon(obs, *posts.first()?, "more")).map(click),
    }
}

/// Clicks another action on the named user's post.
fn social_media_wrong(obs: &Observation) -> Option<Action> {
    let user = obs.instruction.field("user")?;
    let other = if icon_class(obs.instruction.field("button")?) == Some("reply") { "like" } else { "reply" };
    icon(obs, *posts_by(obs, user).first()?, other).map(click)
}

/// Turns the named action on for posts by the named user until `amount` of them have it (all when
/// `amount` is `None`); with `extra`, also on one post by someone else. Then presses Submit.
fn toggle_posts(obs: &Observation, amount: Option<usize>, extra: bool) -> Option<Action> {
    let user = obs.instruction.field("user")?;
    let class = icon_class(obs.instruction.field("button")?)?;
    let mine = posts_by(obs, user);
    let active = |p: usize| icon(obs, p, class).is_some_and(|n| n.has_class("active"));
    let want = amount.unwrap_or(mine.len());
    if mine.iter().filter(|&&p| active(p)).count() < want {
        return mine.iter().find(|&&p| !active(p)).and_then(|&p| icon(obs, p, class)).map(click);
    }
    if extra {
        let others: Vec<usize> = all_posts(obs).into_iter().filter(|i| !mine.contains(i)).collect();
        if !others.iter().any(|&p| active(p)) {
            return icon(obs, *others.first()?, class).map(click);
        }
    }
    button(obs, "Submit").map(click)
}

fn amount(obs: &Observation) -> Option<usize> {
    obs.instruction.field("amount")?.parse().ok()
}

fn social_media_all(obs: &Observation) -> Option<Action> {
    toggle_posts(obs, None, false)
}

/// Also marks one post by another user.
fn social_media_all_wrong(obs: &Observation) -> Option<Action> {
    toggle_posts(obs, None, true)
}

fn social_media_some(obs: &Observation) -> Option<Action> {
    toggle_posts(obs, Some(amount(obs)?), false)
}

/// Also marks one post by another user.
fn social_media_some_wrong(obs: &Observation) -> Option<Action> {
    toggle_posts(obs, Some(amount(obs)?), true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{DomGraph, Field, Instruction, NodeValue, Rect};

    fn node(r: u32, parent: Option<usize>, tag: &str, id: &str, classes: &[&str], text: &str) -> DomNode {
        DomNode {
            r#ref: r,
            parent,
            children: Vec::new(),
            tag: tag.into(),
            text: text.into(),
            value: NodeValue::None,
            id: id.into(),
            classes: classes.iter().map(|c| c.to_string()).collect(),
            rect: Rect { left: 0.0, top: 0.0, width: 10.0, height: 10.0 },
            focused: false,
            tampered: false,
            options: Vec::new(),
            ..DomNode::default()
        }
    }

    fn graph(mut nodes: Vec<DomNode>) -> DomGraph {
        for i in 0..nodes.len() {
            if let Some(p) = nodes[i].parent {
                nodes[p].children.push(i);
            }
        }
        let g = DomGraph { nodes, truncated: 0 };
        g.validate().unwrap();
        g
    }

    fn fields(pairs: &[(&str, &str)]) -> Instruction {
        Instruction::new("x", pairs.iter().map(|(k, v)| Field { key: k.to_string(), value: v.to_string() }).collect())
    }

    /// A feed of two posts: @a (node 1) and @b (node 6), each with a like and a reply icon.
    fn feed(a_liked: bool) -> DomGraph {
        let like_a: &[&str] = if a_liked { &["act", "like", "active"] } else { &["act", "like"] };
        graph(vec![
            node(1, None, "BODY", "", &[], ""),
            node(2, Some(0), "DIV", "", &["post"], ""),
            node(3, Some(1), "SPAN", "", &["handle"], "@a"),
            node(4, Some(1), "SPAN", "", &["act", "reply"], ""),
            node(5, Some(1), "SPAN", "", like_a, ""),
            node(6, Some(0), "DIV", "", &["post"], ""),
            node(7, Some(5), "SPAN", "", &["handle"], "@b"),
            node(8, Some(5), "SPAN", "", &["act", "reply"], ""),
            node(9, Some(5), "SPAN", "", &["act", "like"], ""),
            node(10, Some(0), "BUTTON", "", &[], "Submit"),
        ])
    }

    #[test]
    fn social_scripts_pick_posts_by_handle() {
        let ins = fields(&[("user", "@a"), ("button", "Like"), ("submit", "Submit")]);
        let obs = Observation { instruction: ins.clone(), dom: feed(false), ..Default::default() };
        assert_eq!(social_media(&obs), Some(Action::Click(5)));
        assert_eq!(social_media_wrong(&obs), Some(Action::Click(4)));
        assert_eq!(social_media_all(&obs), Some(Action::Click(5)));
        let done = Observation { instruction: ins, dom: feed(true), ..Default::default() };
        assert_eq!(social_media_all(&done), Some(Action::Click(10)));
        assert_eq!(social_media_all_wrong(&done), Some(Action::Click(9)));
    }

    #[test]
    fn email_script_opens_the_right_row() {
        let dom = graph(vec![
            node(1, None, "BODY", "", &[], ""),
            node(2, Some(0), "DIV", "inbox", &["view"], ""),
            node(3, Some(1), "DIV", "", &["email"], ""),
            node(4, Some(2), "SPAN", "", &["sender"], "Ann"),
            node(5, Some(2), "SPAN", "", &["icon", "trash"], ""),
            node(6, Some(1), "DIV", "", &["email"], ""),
            node(7, Some(5), "SPAN", "", &["sender"], "Bo"),
            node(8, Some(5), "SPAN", "", &["icon", "trash"], ""),
        ]);
        let reply =
            Observation { instruction: fields(&[("task", "reply"), ("by", "Bo"), ("message", "hi")]), dom: dom.clone(), ..Default::default() };
        assert_eq!(email_inbox(&reply), Some(Action::Click(7)));
        let delete = Observation { instruction: fields(&[("task", "delete"), ("by", "Bo")]), dom, ..Default::default() };
        assert_eq!(email_inbox(&delete), Some(Action::Click(8)));
        assert_eq!(email_inbox_wrong(&delete), Some(Action::Click(5)));
    }
}
