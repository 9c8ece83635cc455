//! `/admin/comments`: the moderation queue of visitors' comments.

use super::{Frame, bridge, page, when};
use crate::form_bridge::Flash;
use maud::{Markup, html};
use upstate_core::CommentStatus;
use upstate_core::comments::Comment;

pub struct CommentsScreen<'a> {
    pub list: &'a [Comment],
    /// The tab shown (None: all).
    pub status: Option<CommentStatus>,
    pub pending: i64,
    /// Whether the `comments` switch is on.
    pub offered: bool,
    pub moderated: bool,
    /// Each page's slug by id, for links to the incident's public page.
    pub slugs: &'a [(i64, String)],
}

fn decide(frame: &Frame, back: &str, c: &Comment, to: CommentStatus, label: &str) -> Markup {
    let done = match to {
        CommentStatus::Approved => "Comment approved: it shows on the incident's page.",
        CommentStatus::Rejected => "Comment rejected: it will not show.",
        CommentStatus::Pending => "Comment back in the queue.",
    };
    html! {
        form.inline method="post" action=(format!("/api/comments/admin/{}", c.id)) {
            (bridge(back, back, Some(done), Some(frame.csrf)))
            input type="hidden" name="_method" value="PATCH";
            input type="hidden" name="status" value=(to.as_str());
            button.secondary type="submit" { (label) span.visually-hidden { " the comment of " (when(c.created_at)) } }
        }
    }
}

pub fn comments(frame: &Frame, flash: Option<&Flash>, s: &CommentsScreen) -> Markup {
    let tab = s.status.map_or("all", CommentStatus::as_str);
    let back = format!("/admin/comments?status={tab}");
    let tabs = [
        ("pending", "Waiting"),
        ("approved", "Shown"),
        ("rejected", "Rejected"),
        ("all", "All"),
    ];
    let slug = |page: i64| {
        s.slugs
            .iter()
            .find(|(id, _)| *id == page)
            .map_or("", |(_, slug)| slug.as_str())
    };
    let body = html! {
        header.top { h1 { "Comments" } }
        @if !s.offered {
            div.alert.notice role="status" {
                "Visitors cannot comment: the “Comments on incidents” feature is off. "
                a href="/admin/settings#h-features" { "Turn it on in Settings" } "."
            }
        }
        p.muted {
            "Visitors comment on incidents from the incident's public page. "
            @if s.moderated { "Comments wait here until someone approves them; rejected ones never show." }
            @else { "Comments show at once (moderation is off in Settings); reject one to hide it." }
            " Comments are shown as plain text."
        }
        nav.tabs aria-label="Comment states" {
            @for (key, label) in tabs {
                a href=(format!("/admin/comments?status={key}")) aria-current=[(key == tab).then_some("page")] {
                    (label) @if key == "pending" && s.pending > 0 { " " span.count { (s.pending) } }
                }
            }
        }
        section.card aria-labelledby="h-list" {
            h2 #h-list { @match s.status {
                Some(CommentStatus::Pending) => { "Waiting for a moderator" },
                Some(CommentStatus::Approved) => { "Shown on incident pages" },
                Some(CommentStatus::Rejected) => { "Rejected" },
                None => { "All comments" },
            } }
            @if s.list.is_empty() { p.empty { "No comments here." } }
            @else { ul.rows.wraps.comments {
                @for c in s.list {
                    li {
                        span {
                            strong { @if c.author.is_empty() { "A visitor" } @else { (c.author) } }
                            " on "
                            a href=(format!("/s/{}/incidents/{}", slug(c.status_page_id), c.incident_id)) { (c.incident_title) }
                            " · " span.muted { (when(c.created_at)) }
                            @if s.status.is_none() {
                                " " @match c.status {
                                    CommentStatus::Pending => span.pill.s-degraded { "Waiting" },
                                    CommentStatus::Approved => span.pill.s-operational { "Shown" },
                                    CommentStatus::Rejected => span.pill.s-major_outage { "Rejected" },
                                }
                            }
                            p.comment-body { (c.body) }
                        }
                        span.actions {
                            @if c.status != CommentStatus::Approved { (decide(frame, &back, c, CommentStatus::Approved, "Approve")) }
                            @if c.status != CommentStatus::Rejected { (decide(frame, &back, c, CommentStatus::Rejected, "Reject")) }
                            form.inline method="post" action=(format!("/api/comments/admin/{}", c.id)) data-confirm="Delete this comment for good?" {
                                (bridge(&back, &back, Some("Comment deleted."), Some(frame.csrf)))
                                input type="hidden" name="_method" value="DELETE";
                                button.secondary.danger type="submit" { "Delete" span.visually-hidden { " the comment of " (when(c.created_at)) } }
                            }
                        }
                    }
                }
            } }
        }
    };
    page(frame, "Comments", flash, body)
}
