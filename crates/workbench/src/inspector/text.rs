//! Small formatting helpers of the inspector: durations, costs, counts and
//! one-line excerpts.

/// `850 ms`, `1.20 s`, `2m 03s`.
pub fn duration_text(ms: u64) -> String {
    match ms {
        0..=999 => format!("{ms} ms"),
        1_000..=59_999 => format!("{:.2} s", ms as f64 / 1000.0),
        _ => format!("{}m {:02}s", ms / 60_000, (ms / 1000) % 60),
    }
}

/// `$0.0012`; costs are small, so four decimals below a dollar.
pub fn cost_text(usd: f64) -> String {
    if usd < 1.0 {
        format!("${usd:.4}")
    } else {
        format!("${usd:.2}")
    }
}

/// `1,234,567`.
pub fn count_text(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The first line of `s`, cut to 200 characters, with `…` when anything was
/// left out.
pub fn one_line(s: &str) -> String {
    let first = s.lines().next().unwrap_or("");
    let mut out: String = first.chars().take(200).collect();
    if out.len() < s.trim_end().len() {
        out.push('…');
    }
    out
}

/// Which call an attempt was: `iteration 2/4 · attempt 1/3`, or
/// `attempt 1/3` for a node's own call.
pub fn attempt_name(
    call: &pipewright_engine::run::trace::AttemptRecord,
    iterations: usize,
) -> String {
    let attempt = format!("attempt {}/{}", call.attempt, call.of.max(call.attempt));
    match call.iteration {
        Some(i) => format!("iteration {}/{} · {attempt}", i + 1, iterations.max(i + 1)),
        None => attempt,
    }
}

/// The time of day of an RFC 3339 stamp (`12:00:01.234`), or the stamp.
pub fn time_of_day(stamp: &str) -> String {
    match stamp.split_once('T') {
        Some((_, t)) => t
            .trim_end_matches('Z')
            .split('+')
            .next()
            .unwrap_or(t)
            .chars()
            .take(12)
            .collect(),
        None => stamp.to_owned(),
    }
}

/// How an attempt ended, in a line: `ok`, `failed: TIMEOUT: …`.
pub fn attempt_outcome(call: &pipewright_engine::run::trace::AttemptRecord) -> String {
    let mut out = call.status.as_str().to_owned();
    if let Some(code) = &call.error_code {
        out.push_str(&format!(": {code}"));
    }
    if let Some(e) = &call.error {
        out.push_str(&format!(": {}", one_line(e)));
    }
    out
}

/// The label of an attempt's exchange in the Raw tab:
/// `── iteration 2/4 · attempt 1/3 · started 12:00:01.234 · 1.50 s · ok ──`.
pub fn attempt_label(
    call: &pipewright_engine::run::trace::AttemptRecord,
    iterations: usize,
) -> String {
    let started = call
        .started_at
        .as_deref()
        .map(|s| format!(" · started {}", time_of_day(s)))
        .unwrap_or_default();
    format!(
        "── {}{started} · {} · {} ──",
        attempt_name(call, iterations),
        duration_text(call.duration_ms),
        attempt_outcome(call)
    )
}

/// The Raw tab's text: each attempt's exchange under a line that says
/// which call and attempt it was, when it started, how long it took and
/// how it ended; none for a run saved before attempts were kept.
pub fn raw_text(rec: &pipewright_engine::run::trace::NodeRecord) -> Option<String> {
    if rec.calls.is_empty() {
        return None;
    }
    let mut out = String::new();
    for (n, call) in rec.calls.iter().enumerate() {
        if n > 0 {
            out.push_str("\n\n");
        }
        out.push_str(&attempt_label(call, rec.iterations.len()));
        out.push('\n');
        let wire = pipewright_engine::run::trace::attempt_messages(rec, call);
        out.push_str(&serde_json::to_string_pretty(&wire).unwrap_or_else(|e| e.to_string()));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(duration_text(850), "850 ms");
        assert_eq!(duration_text(1_200), "1.20 s");
        assert_eq!(duration_text(123_000), "2m 03s");
        assert_eq!(cost_text(0.0012), "$0.0012");
        assert_eq!(cost_text(12.5), "$12.50");
        assert_eq!(count_text(1_234_567), "1,234,567");
        assert_eq!(count_text(12), "12");
        assert_eq!(one_line("boom\nstack"), "boom…");
        assert_eq!(one_line("boom"), "boom");
    }
}
