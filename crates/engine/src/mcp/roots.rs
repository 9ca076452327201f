//! The directories pipewright offers to servers that ask `roots/list`, as
//! `file://` URIs.

use std::path::Path;

/// A directory the client offers to servers that ask `roots/list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    pub name: Option<String>,
}

impl Root {
    /// The root for a local directory, named after its last component.
    pub fn from_path(path: &Path) -> Self {
        Self {
            uri: file_uri(path),
            name: path.file_name().map(|n| n.to_string_lossy().into_owned()),
        }
    }
}

/// A `file://` URI for a local path, percent-encoding what needs it.
fn file_uri(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let mut uri = String::from("file://");
    if !text.starts_with('/') {
        uri.push('/');
    }
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/:".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_are_percent_encoded() {
        assert_eq!(
            file_uri(Path::new("/home/a b/ü")),
            "file:///home/a%20b/%C3%BC"
        );
        let root = Root::from_path(Path::new("/work/project"));
        assert_eq!(root.uri, "file:///work/project");
        assert_eq!(root.name.as_deref(), Some("project"));
    }
}
