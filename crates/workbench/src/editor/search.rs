//! Finding text in the buffer: plain (not regex) matching, case-insensitive
//! unless the query has a capital letter ("smart case").

/// A compiled query.
#[derive(Debug, Clone)]
pub struct Needle {
    chars: Vec<char>,
    ignore_case: bool,
}

impl Needle {
    /// `None` for an empty query.
    pub fn new(query: &str) -> Option<Needle> {
        if query.is_empty() {
            return None;
        }
        Some(Needle {
            chars: query.chars().collect(),
            ignore_case: !query.chars().any(char::is_uppercase),
        })
    }

    /// The length of a match in characters.
    pub fn len(&self) -> usize {
        self.chars.len()
    }

    fn eq(&self, a: char, b: char) -> bool {
        if self.ignore_case {
            a == b || a.to_lowercase().eq(b.to_lowercase())
        } else {
            a == b
        }
    }

    /// Character columns where matches start in `line` (non-overlapping).
    pub fn find_all(&self, line: &str) -> Vec<usize> {
        let hay: Vec<char> = line.chars().collect();
        let n = self.chars.len();
        let mut out = Vec::new();
        let mut i = 0;
        while i + n <= hay.len() {
            if (0..n).all(|k| self.eq(hay[i + k], self.chars[k])) {
                out.push(i);
                i += n;
            } else {
                i += 1;
            }
        }
        out
    }

    /// How many matches the whole buffer has, and the 1-based index of the
    /// one starting at `at` (row, col) if any.
    pub fn count(&self, lines: &[String], at: (usize, usize)) -> (usize, Option<usize>) {
        let mut total = 0;
        let mut index = None;
        for (r, l) in lines.iter().enumerate() {
            for c in self.find_all(l) {
                total += 1;
                if (r, c) == at {
                    index = Some(total);
                }
            }
        }
        (total, index)
    }

    /// The next match strictly after `from` (or before it when `back`),
    /// wrapping around the buffer's end.
    pub fn next(
        &self,
        lines: &[String],
        from: (usize, usize),
        back: bool,
    ) -> Option<(usize, usize)> {
        let n = lines.len();
        if n == 0 {
            return None;
        }
        for step in 0..=n {
            let r = if back {
                (from.0 + n - step % n) % n
            } else {
                (from.0 + step) % n
            };
            let hits = self.find_all(&lines[r]);
            // The cursor's own row is looked at twice: the part past the
            // cursor first, the part before it after wrapping around.
            let wanted = |c: &usize| match (step, back) {
                (0, false) => *c > from.1,
                (0, true) => *c < from.1,
                (s, false) if s == n => *c <= from.1,
                (s, true) if s == n => *c >= from.1,
                _ => true,
            };
            let pick = if back {
                hits.into_iter().rev().find(wanted)
            } else {
                hits.into_iter().find(wanted)
            };
            if let Some(c) = pick {
                return Some((r, c));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn smart_case() {
        let lower = Needle::new("tool").unwrap();
        assert_eq!(lower.find_all("tool: Tool TOOL"), vec![0, 6, 11]);
        let upper = Needle::new("Tool").unwrap();
        assert_eq!(upper.find_all("tool: Tool TOOL"), vec![6]);
        assert!(Needle::new("").is_none());
    }

    #[test]
    fn steps_forward_and_back_with_wrap() {
        let l = lines(&["a x", "x", "b x x"]);
        let n = Needle::new("x").unwrap();
        assert_eq!(n.next(&l, (0, 0), false), Some((0, 2)));
        assert_eq!(n.next(&l, (0, 2), false), Some((1, 0)));
        assert_eq!(n.next(&l, (2, 4), false), Some((0, 2)), "wraps");
        assert_eq!(n.next(&l, (2, 4), true), Some((2, 2)));
        assert_eq!(n.next(&l, (1, 0), true), Some((0, 2)));
        assert_eq!(n.next(&l, (0, 2), true), Some((2, 4)), "wraps back");
        assert_eq!(n.count(&l, (2, 2)), (4, Some(3)));
    }

    #[test]
    fn a_single_match_is_found_again_from_itself() {
        let l = lines(&["only x here"]);
        let n = Needle::new("x").unwrap();
        assert_eq!(n.next(&l, (0, 5), false), Some((0, 5)));
        assert_eq!(n.next(&l, (0, 5), true), Some((0, 5)));
    }
}
