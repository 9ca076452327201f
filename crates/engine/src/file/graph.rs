//! The graph of a composition: edges from `needs` (or step order in a pipe),
//! the checks only the whole graph shows, topological order and waves.

use std::collections::HashMap;

use crate::diag::{Diagnostic, Span, suggest};
use crate::file::model::{Composition, Kind, OutputSpec};
use crate::lang::reference::Root;

/// Fills in `parents`, `children`, `order` and `waves` of `comp`, pushing a
/// diagnostic for every graph problem. With a cycle, `order` holds the nodes
/// outside it and `waves` is empty.
pub fn build(comp: &mut Composition, diags: &mut Vec<Diagnostic>) {
    let n = comp.nodes.len();
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(n);
    for (i, node) in comp.nodes.iter().enumerate() {
        if let Some(&first) = index.get(node.id.as_str()) {
            diags.push(Diagnostic::error(
                node.id_span,
                format!(
                    "duplicate id `{}` (first defined at line {})",
                    node.id, comp.nodes[first].id_span.start.line
                ),
            ));
        } else {
            index.insert(node.id.as_str(), i);
        }
    }
    let ids = || comp.nodes.iter().map(|n| n.id.as_str());

    let mut parents: Vec<Vec<usize>> = vec![Vec::new(); n];
    match comp.kind {
        Kind::Pipe => {
            for (i, p) in parents.iter_mut().enumerate().skip(1) {
                p.push(i - 1);
            }
        }
        Kind::Dag => {
            for (i, node) in comp.nodes.iter().enumerate() {
                for need in &node.needs {
                    match index.get(need.id.as_str()) {
                        Some(&p) if p == i => diags.push(Diagnostic::error(
                            need.span,
                            format!("node `{}` needs itself", node.id),
                        )),
                        Some(&p) => parents[i].push(p),
                        None => {
                            let d = Diagnostic::error(
                                need.span,
                                format!("node `{}` needs unknown node `{}`", node.id, need.id),
                            );
                            diags.push(match suggest(&need.id, ids()) {
                                Some(s) => d.with_hint(format!("did you mean `{s}`?")),
                                None => d,
                            });
                        }
                    }
                }
            }
        }
    }

    // References: to known nodes, inside `needs` (DAG) or earlier (pipe).
    for (i, node) in comp.nodes.iter().enumerate() {
        let in_fan_out = node.for_each.is_some();
        for site in node.refs() {
            let span = Span::at(site.pos);
            // Displayed only in a message: most references have none.
            let text = &site.reference;
            match &site.reference.root {
                Root::Item if !in_fan_out || site.at == "for_each" => {
                    diags.push(
                        Diagnostic::error(
                            span,
                            format!("`{text}` is used outside a `for_each` node"),
                        )
                        .with_hint("`${item}` is the current element of the node's own `for_each`"),
                    );
                }
                // An undo reads the output of the node it undoes.
                Root::Node(id) if site.at.starts_with("compensate") && *id == node.id => {}
                Root::Node(id) => {
                    let Some(&target) = index.get(id.as_str()) else {
                        let d = Diagnostic::error(
                            span,
                            format!(
                                "`{text}` in node `{}` refers to unknown node `{id}`",
                                node.id
                            ),
                        );
                        diags.push(match suggest(id, ids()) {
                            Some(s) => d.with_hint(format!("did you mean `{s}`?")),
                            None => d,
                        });
                        continue;
                    };
                    match comp.kind {
                        // A parent in `needs` that no reference reads
                        // only orders the two, which is what `needs` is for.
                        Kind::Dag if node.needs.iter().any(|need| need.id == *id) => {}
                        Kind::Dag => {
                            let what = if site.at == "for_each" {
                                format!(
                                    "`for_each` parent `{id}` of node `{}` is not in its `needs`",
                                    node.id
                                )
                            } else {
                                format!(
                                    "`{text}` refers to `{id}`, which is not in the `needs` of node `{}`",
                                    node.id
                                )
                            };
                            diags.push(
                                Diagnostic::error(span, what)
                                    .with_hint(format!("add `{id}` to `needs`")),
                            );
                        }
                        Kind::Pipe if target >= i => {
                            let when = if target == i {
                                "is this step itself"
                            } else {
                                "runs later"
                            };
                            diags.push(
                                Diagnostic::error(
                                    span,
                                    format!(
                                        "`{text}` in step `{}` refers to step `{id}`, which {when}",
                                        node.id
                                    ),
                                )
                                .with_hint("a pipe step can only read the output of earlier steps"),
                            );
                        }
                        Kind::Pipe => {}
                    }
                }
                _ => {}
            }
        }
        if comp.kind == Kind::Dag {
            let when_text = node
                .when
                .as_ref()
                .filter(|w| w.subject.is_none())
                .map(|w| w.source.as_str());
            // `.parents` holds the `needs` only: any other id reads null.
            if let (Some(w), Some(span)) = (when_text, node.when.as_ref().map(|w| w.span)) {
                let mut warned: Vec<&str> = Vec::new();
                for (at, _) in w.match_indices("parents.") {
                    let rest = &w[at + "parents.".len()..];
                    let end = rest
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                        .unwrap_or(rest.len());
                    let id = &rest[..end];
                    if !id.is_empty()
                        && !node.needs.iter().any(|n| n.id == id)
                        && !warned.contains(&id)
                    {
                        warned.push(id);
                        let hint = if index.contains_key(id) {
                            format!("add `{id}` to `needs`")
                        } else {
                            "there is no node by that name".to_owned()
                        };
                        diags.push(
                            Diagnostic::warning(
                                span,
                                format!(
                                    "`when` reads `.parents.{id}`, but `{id}` is not in the `needs` of `{}`, so it is always null",
                                    node.id
                                ),
                            )
                            .with_hint(hint),
                        );
                    }
                }
            }
        }
    }

    // Topological order (Kahn; declaration order breaks ties) and waves.
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, ps) in parents.iter().enumerate() {
        for &p in ps {
            children[p].push(i);
        }
    }
    let mut indegree: Vec<usize> = parents.iter().map(Vec::len).collect();
    let mut depth = vec![0usize; n];
    let mut ready: std::collections::BTreeSet<usize> =
        (0..n).filter(|&i| indegree[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = ready.pop_first() {
        order.push(i);
        for &c in &children[i] {
            depth[c] = depth[c].max(depth[i] + 1);
            indegree[c] -= 1;
            if indegree[c] == 0 {
                ready.insert(c);
            }
        }
    }
    let mut waves: Vec<Vec<usize>> = Vec::new();
    if order.len() < n {
        if let Some(cycle) = find_cycle(&parents, &indegree) {
            let names: Vec<&str> = cycle.iter().map(|&i| comp.nodes[i].id.as_str()).collect();
            let first = cycle[0];
            let span = comp.nodes[first]
                .needs
                .iter()
                .find(|need| comp.nodes[cycle[1 % cycle.len()]].id == need.id)
                .map_or(comp.nodes[first].id_span, |need| need.span);
            diags.push(
                Diagnostic::error(
                    span,
                    format!("cycle in `needs`: {} → {}", names.join(" → "), names[0]),
                )
                .with_hint("remove one of these `needs` entries"),
            );
        }
    } else {
        for &i in &order {
            if waves.len() <= depth[i] {
                waves.resize_with(depth[i] + 1, Vec::new);
            }
            waves[depth[i]].push(i);
        }
    }

    // Output and reachability.
    if let Some(OutputSpec::Node { id, span }) = &comp.output
        && !index.contains_key(id.as_str())
    {
        let d = Diagnostic::error(*span, format!("`output` names unknown node `{id}`"));
        diags.push(match suggest(id, ids()) {
            Some(s) => d.with_hint(format!("did you mean `{s}`?")),
            None => d,
        });
    }
    let mut never = vec![false; n];
    for &i in &order {
        let node = &comp.nodes[i];
        let constant_false = node
            .when
            .as_ref()
            .is_some_and(|w| w.subject.is_none() && matches!(w.source.trim(), "false" | "null"));
        if constant_false {
            never[i] = true;
            diags.push(Diagnostic::warning(
                node.when.as_ref().map_or(node.id_span, |w| w.span),
                format!("node `{}` never runs: its `when` is always false", node.id),
            ));
        } else if comp.kind == Kind::Dag
            && let Some(&p) = parents[i].iter().find(|&&p| never[p])
        {
            never[i] = true;
            diags.push(Diagnostic::warning(
                node.id_span,
                format!(
                    "node `{}` is unreachable: it needs `{}`, which never runs",
                    node.id, comp.nodes[p].id
                ),
            ));
        }
    }
    if let Some(OutputSpec::Node { id, .. }) = &comp.output
        && let Some(&out) = index.get(id.as_str())
        && comp.kind == Kind::Dag
        && order.len() == n
    {
        // A node that feeds nothing and is not the output is probably
        // forgotten; a tool with side effects is the exception the author
        // can confirm by reading the warning.
        for (i, node) in comp.nodes.iter().enumerate() {
            if i != out && children[i].is_empty() && node.mock.is_some() {
                diags.push(Diagnostic::warning(
                    node.id_span,
                    format!("mocked node `{}` feeds no other node and is not the `output`; it has no effect", node.id),
                ));
            }
        }
    }

    comp.parents = parents;
    comp.children = children;
    comp.order = order;
    comp.waves = waves;
}

/// A cycle among the nodes left with a positive in-degree, as node indices
/// in dependency order.
fn find_cycle(parents: &[Vec<usize>], indegree: &[usize]) -> Option<Vec<usize>> {
    let start = (0..parents.len()).find(|&i| indegree[i] > 0)?;
    // Walk parents that are still in the cyclic part until a node repeats.
    let mut seen: HashMap<usize, usize> = HashMap::new();
    let mut path = Vec::new();
    let mut cur = start;
    loop {
        if let Some(&at) = seen.get(&cur) {
            let mut cycle: Vec<usize> = path[at..].to_vec();
            cycle.reverse();
            return Some(cycle);
        }
        seen.insert(cur, path.len());
        path.push(cur);
        cur = *parents[cur].iter().find(|&&p| indegree[p] > 0)?;
    }
}
