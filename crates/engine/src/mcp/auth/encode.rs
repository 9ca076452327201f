//! The encodings OAuth requests need: Base64 (JWT and HTTP Basic) and
//! `application/x-www-form-urlencoded` values.

/// Base64 of `bytes` with the URL-safe alphabet and no padding (JWT), or
/// the standard alphabet with padding (HTTP Basic).
pub fn base64(bytes: &[u8], url_safe: bool) -> String {
    let abc: &[u8; 64] = if url_safe {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    } else {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    };
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(abc[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
        if !url_safe {
            for _ in chunk.len()..3 {
                out.push('=');
            }
        }
    }
    out
}

/// `application/x-www-form-urlencoded` encoding of one value.
pub(crate) fn form_encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                (b as char).to_string()
            }
            b' ' => "+".to_owned(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648() {
        assert_eq!(base64(b"foobar", false), "Zm9vYmFy");
        assert_eq!(base64(b"fooba", false), "Zm9vYmE=");
        assert_eq!(base64(b"foob", false), "Zm9vYg==");
        assert_eq!(base64(&[0xfb, 0xff], true), "-_8");
        assert_eq!(base64(&[0xfb, 0xff], false), "+/8=");
    }

    #[test]
    fn form_values_are_encoded() {
        assert_eq!(form_encode("a b+c/d=é"), "a+b%2Bc%2Fd%3D%C3%A9");
        assert_eq!(form_encode("rt-AZaz09-._*"), "rt-AZaz09-._*");
    }
}
