//! The Timing tab's Task block: for a call made as an MCP task, its id, its
//! status (live while it runs, the last one after), the server's status
//! message, whether `tasks/cancel` was sent, and the statuses it went
//! through.

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::inspector::Live;
use crate::theme::Theme;
use pipewright_engine::mcp::human::TaskRecord;
use pipewright_engine::run::trace::NodeRecord;

/// At most this many statuses of a task's history are listed.
const SHOWN_STEPS: usize = 8;

/// The task to show: the live one while the call runs, else the record's
/// (the node's own, or each fan-out iteration's).
fn tasks<'a>(
    record: Option<&'a NodeRecord>,
    live: &'a Live,
) -> Vec<(Option<usize>, &'a TaskRecord)> {
    if live.running
        && let Some(t) = &live.task
    {
        return vec![(None, t)];
    }
    let Some(r) = record else {
        return live.task.iter().map(|t| (None, t)).collect();
    };
    let mut out: Vec<_> = r.extras.task.iter().map(|t| (None, t)).collect();
    out.extend(
        r.iterations
            .iter()
            .filter_map(|it| it.extras.task.as_ref().map(|t| (Some(it.index), t))),
    );
    out
}

fn status_style(status: &str, theme: &Theme) -> Style {
    let color = match status {
        "completed" => theme.ok,
        "failed" => theme.error,
        "cancelled" | "cancel_sent" => theme.warning,
        "input_required" => theme.warning,
        _ => theme.running,
    };
    Style::default().fg(color)
}

/// The block's lines (empty when the call was not a task); a blank line
/// first, to set it off from the timing lines above.
pub(super) fn lines(record: Option<&NodeRecord>, live: &Live, theme: &Theme) -> Vec<Line<'static>> {
    let dim = Style::default().fg(theme.dim);
    let plain = Style::default().fg(theme.fg);
    let head = Style::default()
        .fg(theme.accent)
        .add_modifier(Modifier::BOLD);
    let pair = |name: &str, value: String, style: Style| {
        Line::from(vec![
            Span::styled(format!("  {name:<10}"), dim),
            Span::styled(value, style),
        ])
    };
    let mut out = Vec::new();
    for (index, t) in tasks(record, live) {
        out.push(Line::default());
        let title = match index {
            Some(i) => format!("Task #{i}"),
            None if live.running => "Task (running)".to_owned(),
            None => "Task".to_owned(),
        };
        out.push(Line::styled(title, head));
        out.push(pair("id", t.id.clone(), plain));
        let status = if t.status.is_empty() {
            "—"
        } else {
            &t.status
        };
        out.push(pair(
            "status",
            status.to_owned(),
            status_style(status, theme),
        ));
        if let Some(m) = &t.message {
            out.push(pair("message", m.clone(), plain));
        }
        let cancel = if t.cancel_sent {
            "tasks/cancel sent"
        } else {
            "not sent"
        };
        let cancel_style = if t.cancel_sent {
            Style::default().fg(theme.warning)
        } else {
            dim
        };
        out.push(pair("cancel", cancel.to_owned(), cancel_style));
        if !t.history.is_empty() {
            out.push(Line::styled(
                format!("  history ({})", t.history.len()),
                dim,
            ));
            // The tab does not scroll: the latest steps, the rest counted.
            let skip = t.history.len().saturating_sub(SHOWN_STEPS);
            if skip > 0 {
                out.push(Line::styled(format!("     … {skip} earlier"), dim));
            }
            for (n, step) in t.history.iter().enumerate().skip(skip) {
                let mut spans = vec![
                    Span::styled(format!("  {:>4}. ", n + 1), dim),
                    Span::styled(step.status.clone(), status_style(&step.status, theme)),
                ];
                if let Some(m) = &step.message {
                    spans.push(Span::styled(format!(" · {m}"), plain));
                }
                out.push(Line::from(spans));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use crate::inspector::{Inspector, Live, Tab};
    use crate::theme::Theme;
    use pipewright_engine::mcp::human::TaskRecord;
    use pipewright_engine::mcp::task::record::TaskStep;
    use pipewright_engine::run::trace::{NodeRecord, NodeStatus};

    const PIPE: &str = "
servers:
  slow:
    command: python3
    args: [-c, 'pass']
pipe:
  - id: research
    server: slow
    tool: deep_research
";

    fn step(status: &str, message: Option<&str>) -> TaskStep {
        TaskStep {
            status: status.into(),
            message: message.map(str::to_owned),
        }
    }

    fn screen(i: &mut Inspector) -> String {
        let mut term = Terminal::new(TestBackend::new(70, 24)).expect("test terminal");
        // Monochrome, as under NO_COLOR: everything must read as text.
        let theme = Theme::dark().monochrome();
        term.draw(|f| i.render(f.area(), f.buffer_mut(), &theme, true))
            .expect("draw");
        term.backend().to_string()
    }

    fn inspector(record: Option<&NodeRecord>, live: Live) -> Inspector {
        let loaded = pipewright_engine::file::open::load_str(PIPE);
        let p = loaded
            .pipeline
            .unwrap_or_else(|| panic!("fixture pipeline: {:?}", loaded.diagnostics));
        let node = p.compositions[0].nodes[0].clone();
        let mut i = Inspector::new();
        i.set_node("research", Some(&node), record, None);
        i.set_live(live);
        i.set_tab(Tab::Timing);
        i
    }

    #[test]
    fn a_task_call_shows_its_task_block_and_the_servers_revision() {
        let mut rec = NodeRecord {
            status: NodeStatus::Cancelled,
            attempts: 1,
            duration_ms: 1500,
            ..NodeRecord::default()
        };
        rec.extras.task = Some(TaskRecord {
            id: "task-7f3".into(),
            status: "cancelled".into(),
            message: Some("stopped by the client".into()),
            cancel_sent: true,
            history: vec![
                step("working", Some("Gathering sources")),
                step("cancel_sent", Some("timed out")),
                step("cancelled", Some("stopped by the client")),
            ],
        });
        let live = Live {
            protocol: Some("2026-07-28".into()),
            ..Live::default()
        };
        let mut i = inspector(Some(&rec), live);
        let text = screen(&mut i);
        assert!(
            text.contains("deep_research @ slow (MCP 2026-07-28)"),
            "{text}"
        );
        assert!(text.contains("Task"), "{text}");
        assert!(text.contains("id        task-7f3"), "{text}");
        assert!(text.contains("status    cancelled"), "{text}");
        assert!(text.contains("message   stopped by the client"), "{text}");
        assert!(text.contains("cancel    tasks/cancel sent"), "{text}");
        assert!(text.contains("history (3)"), "{text}");
        assert!(text.contains("1. working · Gathering sources"), "{text}");
        assert!(text.contains("2. cancel_sent · timed out"), "{text}");
        assert!(
            text.contains("3. cancelled · stopped by the client"),
            "{text}"
        );
    }

    #[test]
    fn a_running_task_shows_its_current_status_and_a_plain_call_no_block() {
        let mut live_task = TaskRecord::default();
        live_task.note(&pipewright_engine::mcp::human::TaskNote {
            task: "task-9".into(),
            status: "input_required".into(),
            message: Some("Need a date".into()),
        });
        let live = Live {
            running: true,
            task: Some(live_task),
            ..Live::default()
        };
        let mut i = inspector(None, live);
        let text = screen(&mut i);
        assert!(text.contains("Task (running)"), "{text}");
        assert!(text.contains("status    input_required"), "{text}");
        assert!(text.contains("cancel    not sent"), "{text}");

        let plain = NodeRecord {
            status: NodeStatus::Ok,
            attempts: 1,
            ..NodeRecord::default()
        };
        let mut i = inspector(Some(&plain), Live::default());
        let text = screen(&mut i);
        assert!(!text.contains("Task"), "{text}");
        assert!(!text.contains("(MCP"), "{text}");
    }
}
