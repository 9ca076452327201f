//! Contrast as WCAG 2 measures it: the relative luminance of a colour and
//! the ratio of two; and a colour moved toward black or white until it
//! reads against a background (AA asks 4.5:1 for text, 3:1 for borders).

/// A colour as red, green and blue.
pub type Rgb = (u8, u8, u8);

/// WCAG's relative luminance, 0 (black) to 1 (white).
pub fn luminance((r, g, b): Rgb) -> f64 {
    let channel = |c: u8| {
        let c = f64::from(c) / 255.0;
        if c <= 0.039_28 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)
}

/// The contrast ratio of two colours, 1 to 21.
pub fn ratio(a: Rgb, b: Rgb) -> f64 {
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

/// `fg` as it is when it reads at `min` against `bg`, else moved toward
/// black (on a light background) or white (on a dark one) in small steps
/// until it does, keeping its hue as far as it can.
pub fn readable(fg: Rgb, bg: Rgb, min: f64) -> Rgb {
    let light_bg = luminance(bg) > 0.18;
    let mut c = fg;
    for step in 1..=100u16 {
        if ratio(c, bg) >= min {
            return c;
        }
        let t = f64::from(step) / 100.0;
        let toward = |x: u8| {
            let x = f64::from(x);
            let y = if light_bg {
                x * (1.0 - t)
            } else {
                x + (255.0 - x) * t
            };
            // In 0..=255 by construction.
            y.round().clamp(0.0, 255.0) as u8
        };
        c = (toward(fg.0), toward(fg.1), toward(fg.2));
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_match_wcag() {
        assert!((ratio((0, 0, 0), (255, 255, 255)) - 21.0).abs() < 1e-9);
        assert!((ratio((255, 255, 255), (255, 255, 255)) - 1.0).abs() < 1e-9);
        // GitHub's grey on white, as measured by the issue: 2.75:1.
        assert!((ratio((0x95, 0x9d, 0xa5), (255, 255, 255)) - 2.75).abs() < 0.01);
    }

    #[test]
    fn a_faint_colour_is_moved_until_it_reads_and_a_readable_one_kept() {
        let white = (255, 255, 255);
        let faint = (0x95, 0x9d, 0xa5);
        let moved = readable(faint, white, 4.5);
        assert!(ratio(moved, white) >= 4.5, "{moved:?}");
        assert!(moved.0 < faint.0 && moved.2 < faint.2, "darker on white");
        let dark_bg = (0x2b, 0x30, 0x3b);
        let comment = (0x65, 0x73, 0x7e);
        let lifted = readable(comment, dark_bg, 4.5);
        assert!(ratio(lifted, dark_bg) >= 4.5, "{lifted:?}");
        assert!(lifted.0 > comment.0, "lighter on a dark background");
        assert_eq!(readable((0, 0, 0), white, 4.5), (0, 0, 0));
    }
}
