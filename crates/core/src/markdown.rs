//! Markdown written by operators, as HTML safe to put in a page: rendered by
//! pulldown-cmark, then cleaned by ammonia (no scripts, no event handlers, no
//! styles; links get `rel="noopener noreferrer"`). HTML typed into the text
//! is shown as the text it is: `point DNS to <your-lb-host>` keeps its
//! words, and `<script>` is visible, never run. Pure, so `cargo fuzz` can
//! check those promises on any text.

use pulldown_cmark::{Event, Tag, TagEnd};

/// Text as HTML, paragraphs as Markdown makes them.
pub fn to_html(text: &str) -> String {
    render(text, false)
}

/// As `to_html`, but a line break the operator typed stays a line break
/// (status updates are written as lines, not as paragraphs).
pub fn lines_to_html(text: &str) -> String {
    render(text, true)
}

fn render(text: &str, keep_lines: bool) -> String {
    let events = pulldown_cmark::Parser::new(text).map(|e| match e {
        Event::SoftBreak if keep_lines => Event::HardBreak,
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        Event::Start(Tag::HtmlBlock) => Event::Start(Tag::Paragraph),
        Event::End(TagEnd::HtmlBlock) => Event::End(TagEnd::Paragraph),
        other => other,
    });
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events);
    ammonia::clean(&html)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_html_is_text() {
        let html = lines_to_html("point DNS to <your-lb-host> **now**\n<script>alert(1)</script>");
        assert!(html.contains("point DNS to &lt;your-lb-host&gt;"), "{html}");
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
        assert!(html.contains("<strong>now</strong>"), "{html}");
        let block = to_html("<div onclick=\"x()\">hi</div>\n\nafter");
        assert!(
            block.contains("&lt;div onclick=") && !block.contains("<div"),
            "{block}"
        );
        assert!(!to_html("[x](javascript:alert(1))").contains("javascript"));
    }
}
