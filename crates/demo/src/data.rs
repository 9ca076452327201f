//! The demo server's fixed, made-up data: a user directory and a package
//! catalogue. Nothing here changes while the server runs.

/// One person in the demo user directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct User {
    pub id: &'static str,
    pub name: &'static str,
    pub email: &'static str,
    pub plan: &'static str,
    pub created: &'static str,
    pub last_login: &'static str,
    pub teams: &'static [&'static str],
}

/// The demo user directory, in id order (the order search results come in).
pub(crate) const USERS: &[User] = &[
    User {
        id: "u1",
        name: "Alice Anders",
        email: "alice@example.com",
        plan: "pro",
        created: "2023-02-14T09:30:00Z",
        last_login: "2025-06-30T08:15:00Z",
        teams: &["platform", "security"],
    },
    User {
        id: "u2",
        name: "Bob Okafor",
        email: "bob.okafor@example.com",
        plan: "free",
        created: "2023-05-02T14:05:00Z",
        last_login: "2025-06-12T17:42:00Z",
        teams: &["support"],
    },
    User {
        id: "u3",
        name: "Carol Nguyen",
        email: "carol@example.org",
        plan: "team",
        created: "2023-08-21T11:00:00Z",
        last_login: "2025-07-01T06:58:00Z",
        teams: &["platform", "data"],
    },
    User {
        id: "u4",
        name: "Dmitri Ivanov",
        email: "dmitri@example.net",
        plan: "enterprise",
        created: "2024-01-09T16:20:00Z",
        last_login: "2025-05-28T10:03:00Z",
        teams: &["data"],
    },
    User {
        id: "u5",
        name: "Alicia Romero",
        email: "alicia.romero@example.com",
        plan: "pro",
        created: "2024-03-17T08:45:00Z",
        last_login: "2025-06-29T21:37:00Z",
        teams: &["design"],
    },
    User {
        id: "u6",
        name: "Frank Li",
        email: "frank.li@example.org",
        plan: "free",
        created: "2024-06-30T19:10:00Z",
        last_login: "2024-12-24T12:00:00Z",
        teams: &[],
    },
    User {
        id: "u7",
        name: "Grace Hopkins",
        email: "grace@example.com",
        plan: "enterprise",
        created: "2024-09-05T07:25:00Z",
        last_login: "2025-07-02T09:11:00Z",
        teams: &["security", "leadership"],
    },
    User {
        id: "u8",
        name: "Hiro Tanaka",
        email: "hiro@example.net",
        plan: "team",
        created: "2025-01-13T13:50:00Z",
        last_login: "2025-06-27T15:26:00Z",
        teams: &["support", "platform"],
    },
];

/// The users whose name or email contains `query` (case-insensitive), in
/// directory order. An empty query matches everyone.
pub(crate) fn search_users(query: &str) -> impl Iterator<Item = &'static User> {
    let query = query.trim().to_lowercase();
    USERS.iter().filter(move |user| {
        user.name.to_lowercase().contains(&query) || user.email.to_lowercase().contains(&query)
    })
}

/// The user with this exact id.
pub(crate) fn user(id: &str) -> Option<&'static User> {
    USERS.iter().find(|user| user.id == id)
}

/// One package in the demo catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Package {
    pub name: &'static str,
    pub version: &'static str,
    pub description: &'static str,
    pub license: &'static str,
    pub stars: u32,
    pub downloads: u32,
    pub keywords: &'static [&'static str],
}

/// The demo package catalogue (made-up names and numbers).
pub(crate) const PACKAGES: &[Package] = &[
    Package {
        name: "mcp-kit",
        version: "1.4.0",
        description: "Building blocks for Model Context Protocol servers",
        license: "MIT",
        stars: 2140,
        downloads: 98_400,
        keywords: &["mcp", "server", "sdk"],
    },
    Package {
        name: "mcp-relay",
        version: "0.8.3",
        description: "Bridge MCP servers between stdio and Streamable HTTP",
        license: "Apache-2.0",
        stars: 930,
        downloads: 41_250,
        keywords: &["mcp", "proxy", "transport"],
    },
    Package {
        name: "mcp-lens",
        version: "0.5.1",
        description: "Inspect and replay MCP traffic from the terminal",
        license: "MIT",
        stars: 610,
        downloads: 12_800,
        keywords: &["mcp", "debugging", "cli"],
    },
    Package {
        name: "mcpdoc",
        version: "0.3.0",
        description: "Generate reference pages from an MCP server's tool list",
        license: "MIT",
        stars: 240,
        downloads: 3_900,
        keywords: &["mcp", "documentation"],
    },
    Package {
        name: "toolpipe",
        version: "2.1.0",
        description: "Chain MCP tool calls into small declarative pipelines",
        license: "MIT OR Apache-2.0",
        stars: 1320,
        downloads: 56_700,
        keywords: &["pipeline", "workflow", "mcp"],
    },
    Package {
        name: "jqlite",
        version: "3.0.2",
        description: "A small jq-compatible JSON query engine",
        license: "MIT",
        stars: 4100,
        downloads: 310_000,
        keywords: &["json", "jq", "query"],
    },
    Package {
        name: "termgrid",
        version: "0.12.0",
        description: "Layout widgets for terminal user interfaces",
        license: "MIT",
        stars: 880,
        downloads: 27_300,
        keywords: &["tui", "terminal", "layout"],
    },
    Package {
        name: "checkmate",
        version: "1.9.0",
        description: "A tiny test framework with table-driven cases",
        license: "BSD-3-Clause",
        stars: 1575,
        downloads: 88_000,
        keywords: &["testing", "test", "framework"],
    },
    Package {
        name: "yamlet",
        version: "0.7.4",
        description: "Strict YAML 1.2 parser that keeps source positions",
        license: "Apache-2.0",
        stars: 455,
        downloads: 19_650,
        keywords: &["yaml", "parser"],
    },
    Package {
        name: "asyncflow",
        version: "1.1.0",
        description: "Structured concurrency primitives and task groups",
        license: "MIT",
        stars: 2300,
        downloads: 120_400,
        keywords: &["async", "concurrency"],
    },
];

/// The package with this exact name.
pub(crate) fn package(name: &str) -> Option<&'static Package> {
    PACKAGES.iter().find(|package| package.name == name)
}

/// One package matched by [`search_packages`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Hit {
    pub package: &'static Package,
    pub score: f64,
}

/// Packages matching `query`, best first.
///
/// The score has a base that says how the query matched (the whole name 1.0,
/// the start of the name 0.9, inside the name 0.8, every word of the query in
/// the name, description or keywords 0.6, an empty query 0.5) plus a small
/// popularity term (stars / 100 000, at most 0.09), rounded to three decimals.
/// Ties go to the name in alphabetical order.
pub(crate) fn search_packages(query: &str) -> Vec<Hit> {
    let query = query.trim().to_lowercase();
    let words: Vec<&str> = query.split_whitespace().collect();
    let mut hits: Vec<Hit> = PACKAGES
        .iter()
        .filter_map(|package| {
            let base = match_base(package, &query, &words)?;
            let popularity = f64::from(package.stars.min(9_000)) / 100_000.0;
            let score = ((base + popularity) * 1000.0).round() / 1000.0;
            Some(Hit { package, score })
        })
        .collect();
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.package.name.cmp(b.package.name))
    });
    hits
}

fn match_base(package: &Package, query: &str, words: &[&str]) -> Option<f64> {
    if query.is_empty() {
        return Some(0.5);
    }
    let name = package.name;
    if name == query {
        return Some(1.0);
    }
    if name.starts_with(query) {
        return Some(0.9);
    }
    if name.contains(query) {
        return Some(0.8);
    }
    let description = package.description.to_lowercase();
    let found = |word: &&str| {
        name.contains(word)
            || description.contains(word)
            || package
                .keywords
                .iter()
                .any(|keyword| keyword.contains(word))
    };
    words.iter().all(found).then_some(0.6)
}

/// The README of a package, as Markdown.
pub(crate) fn readme(package: &Package) -> String {
    let Package {
        name,
        version,
        description,
        license,
        keywords,
        ..
    } = package;
    format!(
        "# {name}\n\n{description}.\n\n## Install\n\n    demo-pkg add {name}@{version}\n\n\
         ## Keywords\n\n{}\n\n## License\n\n{license}\n",
        keywords.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_search_is_case_insensitive_on_name_and_email() {
        let ids = |query| search_users(query).map(|u| u.id).collect::<Vec<_>>();
        assert_eq!(ids("alice"), ["u1"]);
        assert_eq!(ids("ALI"), ["u1", "u5"]);
        assert_eq!(ids("example.net"), ["u4", "u8"]);
        assert_eq!(ids("").len(), USERS.len());
        assert!(ids("nobody").is_empty());
    }

    #[test]
    fn user_ids_are_unique() {
        for (i, u) in USERS.iter().enumerate() {
            assert_eq!(user(u.id), Some(&USERS[i]));
        }
    }

    #[test]
    fn package_search_ranks_name_matches_first() {
        let names = |query| {
            search_packages(query)
                .iter()
                .map(|hit| hit.package.name)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names("mcp"),
            ["mcp-kit", "mcp-relay", "mcp-lens", "mcpdoc", "toolpipe"]
        );
        assert_eq!(names("jqlite"), ["jqlite"]);
        assert_eq!(names("Test Framework"), ["checkmate"]);
        assert!(names("rubric").is_empty());
        assert_eq!(names("  ").len(), PACKAGES.len());
    }

    #[test]
    fn package_scores_are_rounded_and_deterministic() {
        let hits = search_packages("mcp");
        assert_eq!(hits[0].score, 0.921);
        assert_eq!(hits, search_packages("mcp"));
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    }

    #[test]
    fn readme_starts_with_a_heading() {
        let body = readme(&PACKAGES[0]);
        assert!(body.starts_with("# mcp-kit\n"));
        assert!(body.contains("License"));
    }
}
