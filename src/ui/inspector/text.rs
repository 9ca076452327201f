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
