//! A response-time chart as inline SVG, drawn on the server: no chart
//! library, no script, nothing to download. The public page and the admin
//! monitor screen both use it, each with its own words.

use maud::{Markup, PreEscaped, html};
use upstate_core::Timestamp;
use upstate_core::measurements::{Figures, Point};

const W: f64 = 600.0;
const H: f64 = 64.0;

/// The chart's words (in the reader's language on the public page).
pub struct ChartText<'a> {
    /// Its heading, like "Response time, last 24 hours".
    pub title: &'a str,
    /// What is shown without points.
    pub empty: &'a str,
    /// "average", "95th percentile".
    pub avg: &'a str,
    pub p95: &'a str,
    /// The left and right ends of the time axis.
    pub start: &'a str,
    pub end: &'a str,
}

/// The chart of `points` (each a span of `span_ms`) from `from` to `to`:
/// the average as a line, the 95th percentile as a band above it, a gap
/// where there were no checks; the figures of the whole window beside it.
pub fn response_chart(
    points: &[Point],
    span_ms: i64,
    from: Timestamp,
    to: Timestamp,
    text: &ChartText,
    f: &Figures,
) -> Markup {
    let with_latency: Vec<&Point> = points
        .iter()
        .filter(|p| p.figures.avg_ms.is_some())
        .collect();
    if with_latency.is_empty() {
        return html! {
            figure.rt {
                figcaption { strong { (text.title) } }
                p.rt-empty { (text.empty) }
            }
        };
    }
    let top = with_latency
        .iter()
        .filter_map(|p| p.figures.p95_ms.max(p.figures.avg_ms))
        .max()
        .unwrap_or(1);
    let top = nice_ceiling(top);
    let width = (to.millis() - from.millis()).max(1) as f64;
    let x = |at: Timestamp| {
        ((at.millis() + span_ms / 2 - from.millis()) as f64 / width * W).clamp(0.0, W)
    };
    let y = |ms: i64| H - (ms as f64 / top as f64 * H).clamp(0.0, H);
    // Runs of consecutive spans; a missing span breaks the line.
    let mut runs: Vec<Vec<&Point>> = Vec::new();
    for p in &with_latency {
        match runs.last_mut() {
            Some(run)
                if run
                    .last()
                    .is_some_and(|l| p.at.millis() - l.at.millis() <= span_ms) =>
            {
                run.push(p)
            }
            _ => runs.push(vec![p]),
        }
    }
    let mut svg = String::new();
    for run in &runs {
        let line: Vec<String> = run
            .iter()
            .map(|p| format!("{:.1},{:.1}", x(p.at), y(p.figures.avg_ms.unwrap_or(0))))
            .collect();
        let band: Vec<String> = run
            .iter()
            .map(|p| format!("{:.1},{:.1}", x(p.at), y(p.figures.p95_ms.unwrap_or(0))))
            .chain(
                run.iter()
                    .rev()
                    .map(|p| format!("{:.1},{:.1}", x(p.at), y(p.figures.avg_ms.unwrap_or(0)))),
            )
            .collect();
        if run.len() == 1 {
            let (cx, cy) = (x(run[0].at), y(run[0].figures.avg_ms.unwrap_or(0)));
            svg.push_str(&format!(
                r#"<circle class="avg-dot" cx="{cx:.1}" cy="{cy:.1}" r="2.5"/>"#
            ));
        } else {
            svg.push_str(&format!(
                r#"<polygon class="p95" points="{}"/>"#,
                band.join(" ")
            ));
            svg.push_str(&format!(
                r#"<polyline class="avg" points="{}"/>"#,
                line.join(" ")
            ));
        }
    }
    let label = format!(
        "{}: {} {} ms, {} {} ms",
        text.title,
        text.avg,
        f.avg_ms.unwrap_or(0),
        text.p95,
        f.p95_ms.unwrap_or(0)
    );
    html! {
        figure.rt {
            figcaption {
                strong { (text.title) }
                span.rt-figures {
                    span.k-avg { (text.avg) " " b { (f.avg_ms.unwrap_or(0)) " ms" } }
                    " · "
                    span.k-p95 { (text.p95) " " b { (f.p95_ms.unwrap_or(0)) " ms" } }
                }
            }
            div.rt-plot {
                span.rt-top aria-hidden="true" { (top) " ms" }
                svg viewBox=(format!("0 0 {W} {H}")) preserveAspectRatio="none" role="img" aria-label=(label) {
                    line.grid x1="0" y1="0.5" x2=(W) y2="0.5" {}
                    line.grid x1="0" y1=(H / 2.0) x2=(W) y2=(H / 2.0) {}
                    line.axis x1="0" y1=(H - 0.5) x2=(W) y2=(H - 0.5) {}
                    (PreEscaped(svg))
                }
            }
            p.rt-axis aria-hidden="true" { span { (text.start) } span { (text.end) } }
        }
    }
}

/// A round number at or above `ms` for the top of the axis.
fn nice_ceiling(ms: i64) -> i64 {
    let ms = ms.max(1);
    let mut step = 1;
    while step * 10 <= ms {
        step *= 10;
    }
    [1, 2, 5, 10]
        .iter()
        .map(|m| m * step)
        .find(|v| *v >= ms)
        .unwrap_or(step * 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_tops_are_round() {
        assert_eq!(nice_ceiling(0), 1);
        assert_eq!(nice_ceiling(7), 10);
        assert_eq!(nice_ceiling(130), 200);
        assert_eq!(nice_ceiling(480), 500);
        assert_eq!(nice_ceiling(501), 1000);
    }
}
