//! Any text an operator writes: the HTML it becomes carries no script, frame,
//! style or embedded object, no event handler and no `javascript:`,
//! `vbscript:` or `data:` link, whatever was typed. Text is escaped (`<`
//! becomes `&lt;`), so every `<` left in the output opens markup, and only
//! markup is checked: words that merely read like code are fine.
#![no_main]

use libfuzzer_sys::fuzz_target;
use upstate_core::markdown::{lines_to_html, to_html};

/// Each tag of `html`: its name and its attributes (name, value).
fn tags(html: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        rest = &rest[at + 1..];
        let name: String = rest
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        let mut attrs = Vec::new();
        let mut chars = rest
            .char_indices()
            .skip_while(|(_, c)| !c.is_whitespace() && *c != '>');
        let (mut key, mut value, mut in_value) = (String::new(), String::new(), false);
        let mut end = rest.len();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' if in_value => {
                    attrs.push((key.trim().to_ascii_lowercase(), value.clone()));
                    key.clear();
                    value.clear();
                    in_value = false;
                }
                _ if in_value => value.push(c),
                '=' => {
                    if let Some((_, '"')) = chars.next() {
                        in_value = true;
                    }
                }
                '>' => {
                    end = i;
                    break;
                }
                c if c.is_whitespace() => key.clear(),
                c => key.push(c),
            }
        }
        out.push((name.to_ascii_lowercase(), attrs));
        rest = &rest[end..];
    }
    out
}

fn safe(html: &str) {
    for (name, attrs) in tags(html) {
        assert!(
            ![
                "script", "iframe", "style", "object", "embed", "form", "svg", "math"
            ]
            .contains(&name.as_str()),
            "<{name}> in {html:?}"
        );
        for (key, value) in attrs {
            assert!(
                !key.starts_with("on") && key != "style",
                "{key}= in {html:?}"
            );
            let scheme: String = value
                .chars()
                .filter(|c| !c.is_whitespace() && !c.is_control())
                .collect::<String>()
                .to_ascii_lowercase();
            for bad in ["javascript:", "vbscript:", "data:"] {
                assert!(!scheme.starts_with(bad), "{key}={value:?} in {html:?}");
            }
        }
    }
}

fuzz_target!(|text: &str| {
    safe(&to_html(text));
    safe(&lines_to_html(text));
});
