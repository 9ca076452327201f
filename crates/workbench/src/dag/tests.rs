//! Layout, navigation, hit testing and rendered snapshots of the DAG pane.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;

use super::*;
use crate::state::NodeVisual;
use crate::theme::Theme;
use layout::Slot;
use pipewright_engine::file::open::load_str;
use pipewright_engine::run::trace::NodeStatus;

fn load(yaml: &str) -> Composition {
    let loaded = load_str(yaml);
    let p = loaded
        .valid()
        .unwrap_or_else(|| panic!("{yaml}\n{:?}", loaded.diagnostics));
    p.compositions[0].clone()
}

/// A composition from `(id, needs)` pairs, in declaration order.
fn dag(nodes: &[(&str, &[&str])]) -> Composition {
    let mut y = String::from("compositions:\n  - name: t\n    nodes:\n");
    for (id, needs) in nodes {
        y.push_str(&format!("      - id: {id}\n        tool: echo\n"));
        if !needs.is_empty() {
            y.push_str(&format!("        needs: [{}]\n", needs.join(", ")));
        }
    }
    load(&y)
}

fn pipe3() -> Composition {
    load(
        "pipe:\n  - id: find\n    tool: search_users\n  - id: details\n    tool: get_user\n  - id: notify\n    tool: send_email\n",
    )
}

fn diamond() -> Composition {
    dag(&[("a", &[]), ("b", &["a"]), ("c", &["a"]), ("d", &["b", "c"])])
}

/// Six layers of ten, each node fed by two of the layer before, plus a few
/// edges that skip layers.
fn sixty() -> Composition {
    let mut y = String::from("compositions:\n  - name: big\n    nodes:\n");
    for l in 0..6 {
        for j in 0..10 {
            y.push_str(&format!("      - id: n{l}_{j}\n        tool: echo\n"));
            if l > 0 {
                let mut needs = vec![format!("n{}_{j}", l - 1)];
                let other = format!("n{}_{}", l - 1, (j * 3 + 1) % 10);
                if !needs.contains(&other) {
                    needs.push(other);
                }
                if l >= 3 && j % 4 == 0 {
                    needs.push(format!("n0_{}", 9 - j));
                }
                y.push_str(&format!("        needs: [{}]\n", needs.join(", ")));
            }
        }
    }
    load(&y)
}

fn pending(c: &Composition) -> Vec<NodeVisual> {
    vec![NodeVisual::default(); c.nodes.len()]
}

fn render_in(
    c: &Composition,
    l: &DagLayout,
    vis: &[NodeVisual],
    state: &mut DagState,
    w: u16,
    h: u16,
) -> Terminal<TestBackend> {
    let theme = Theme::dark();
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap_or_else(|e| panic!("{e}"));
    term.draw(|f| {
        let view = DagView {
            comp: c,
            layout: l,
            nodes: vis,
            theme: &theme,
            tick: 3,
            focused: true,
        };
        f.render_stateful_widget(view, f.area(), state);
    })
    .unwrap_or_else(|e| panic!("{e}"));
    term
}

fn render(c: &Composition, vis: &[NodeVisual], state: &mut DagState, w: u16, h: u16) -> String {
    let l = DagLayout::new(c);
    render_in(c, &l, vis, state, w, h).backend().to_string()
}

fn idx(c: &Composition, id: &str) -> usize {
    c.index_of(id).unwrap_or_else(|| panic!("no node {id}"))
}

// ---- layout -------------------------------------------------------------

#[test]
fn layers_are_longest_paths() {
    let c = dag(&[("a", &[]), ("b", &["a"]), ("c", &["a", "b"]), ("e", &[])]);
    let l = DagLayout::new(&c);
    assert_eq!(l.layer_of(idx(&c, "a")), 0);
    assert_eq!(l.layer_of(idx(&c, "b")), 1);
    assert_eq!(l.layer_of(idx(&c, "c")), 2, "c's longest path is a→b→c");
    assert_eq!(l.layer_of(idx(&c, "e")), 0);
}

#[test]
fn a_pipe_is_one_straight_row() {
    let c = pipe3();
    let l = DagLayout::new(&c);
    let pos: Vec<_> = (0..3).map(|i| l.position(i)).collect();
    assert!(pos.iter().all(|p| p.1 == 0), "{pos:?}");
    assert!(pos[0].0 < pos[1].0 && pos[1].0 < pos[2].0, "{pos:?}");
    assert_eq!(l.size().1, 1);
}

#[test]
fn no_edge_goes_backwards() {
    let c = sixty();
    let l = DagLayout::new(&c);
    for (u, kids) in c.children.iter().enumerate() {
        for &v in kids {
            assert!(l.layer_of(u) < l.layer_of(v), "{u}→{v}");
            assert!(l.position(u).0 < l.position(v).0, "{u}→{v} drawn leftwards");
        }
    }
}

#[test]
fn long_edges_get_one_dummy_per_skipped_layer() {
    let c = dag(&[("a", &[]), ("b", &["a"]), ("c", &["b"]), ("d", &["c", "a"])]);
    let l = DagLayout::new(&c);
    assert_eq!(l.dummy_count(), 2);
    for k in [1, 2] {
        assert!(l.layers()[k].contains(&Slot::Dummy), "layer {k}");
    }
    assert!(!l.layers()[0].contains(&Slot::Dummy));
    assert!(!l.layers()[3].contains(&Slot::Dummy));
}

#[test]
fn crossings_are_reduced_on_a_known_crossing() {
    // Declared order puts x above y, but x hangs off b and y off a:
    // drawn as declared the two edges cross.
    let c = dag(&[("a", &[]), ("b", &[]), ("x", &["b"]), ("y", &["a"])]);
    let l = DagLayout::new(&c);
    assert_eq!(l.crossings(), 0);
    let second: Vec<usize> = l.layer_nodes(1).collect();
    assert_eq!(second, vec![idx(&c, "y"), idx(&c, "x")]);
}

#[test]
fn crossings_drop_on_a_bigger_graph() {
    let c = sixty();
    let l = DagLayout::new(&c);
    let declared = layout::declared_order_crossings(&c);
    assert!(
        l.crossings() < declared,
        "reduced {} vs declared {declared}",
        l.crossings()
    );
}

#[test]
fn merges_and_splits_are_drawn_with_junctions() {
    let c = diamond();
    let out = render(&c, &pending(&c), &mut DagState::default(), 40, 5);
    assert!(out.contains('┬') || out.contains('├'), "split:\n{out}");
    assert!(out.contains('┘') || out.contains('┤'), "merge:\n{out}");
}

// ---- navigation ---------------------------------------------------------

#[test]
fn keys_walk_the_diamond() {
    let c = diamond();
    let l = DagLayout::new(&c);
    let mut s = DagState::default();
    s.move_right(&l);
    assert_eq!(
        s.selected,
        Some(idx(&c, "a")),
        "first move selects a source"
    );
    s.move_right(&l);
    assert_eq!(s.selected, Some(idx(&c, "b")), "nearest child by row");
    s.move_down(&l);
    assert_eq!(s.selected, Some(idx(&c, "c")));
    s.move_down(&l);
    assert_eq!(s.selected, Some(idx(&c, "c")), "bottom of the layer stays");
    s.move_right(&l);
    assert_eq!(s.selected, Some(idx(&c, "d")));
    s.move_right(&l);
    assert_eq!(s.selected, Some(idx(&c, "d")), "a sink stays");
    s.move_left(&l);
    assert_eq!(s.selected, Some(idx(&c, "b")), "parent nearest in row");
    s.move_up(&l);
    assert_eq!(s.selected, Some(idx(&c, "b")), "top of the layer stays");
    s.move_left(&l);
    assert_eq!(s.selected, Some(idx(&c, "a")));
}

#[test]
fn moving_right_without_children_goes_to_the_next_layer() {
    let c = dag(&[("a", &[]), ("lonely", &[]), ("b", &["a"])]);
    let l = DagLayout::new(&c);
    let mut s = DagState::default();
    s.select(Some(idx(&c, "lonely")));
    s.move_right(&l);
    assert_eq!(s.selected, Some(idx(&c, "b")));
}

#[test]
fn a_stale_selection_is_replaced() {
    let c = pipe3();
    let l = DagLayout::new(&c);
    let mut s = DagState::default();
    s.select(Some(99));
    s.move_down(&l);
    assert_eq!(s.selected, Some(0));
}

// ---- hit testing and scrolling ------------------------------------------

#[test]
fn hit_maps_cells_to_nodes_in_the_rendered_area() {
    let c = diamond();
    let l = DagLayout::new(&c);
    let vis = pending(&c);
    let mut s = DagState::default();
    let theme = Theme::dark();
    let mut buf = Buffer::empty(Rect::new(0, 0, 60, 12));
    let area = Rect::new(5, 3, 40, 6);
    DagView {
        comp: &c,
        layout: &l,
        nodes: &vis,
        theme: &theme,
        tick: 0,
        focused: false,
    }
    .render(area, &mut buf, &mut s);
    let cc = idx(&c, "c");
    let (x, y) = l.position(cc);
    // Inner area starts one cell inside the border.
    let (col, row) = (6 + x as u16, 4 + y as u16);
    assert_eq!(s.hit(&l, col + 3, row), Some(cc), "on c's id");
    assert_eq!(buf[(col + 3, row)].symbol(), "c");
    assert_eq!(s.hit(&l, 5, 3), None, "border");
    assert_eq!(s.hit(&l, 0, 0), None, "outside");
    let gap = 6 + (x + l.node_width(cc)) as u16 + 1;
    assert_eq!(s.hit(&l, gap, row), None, "edge cell");
}

#[test]
fn the_selection_is_scrolled_into_view_and_wheel_scrolling_sticks() {
    let c = sixty();
    let l = DagLayout::new(&c);
    let vis = pending(&c);
    let mut s = DagState::default();
    let last = idx(&c, "n5_9");
    s.select(Some(last));
    let term = render_in(&c, &l, &vis, &mut s, 40, 10);
    assert!(s.scroll_x > 0 && s.scroll_y > 0, "{s:?}");
    let (x, y) = l.position(last);
    let col = (1 + x - s.scroll_x) as u16;
    let row = (1 + y - s.scroll_y) as u16;
    assert_eq!(s.hit(&l, col + 3, row), Some(last));
    assert_eq!(term.backend().buffer()[(col + 3, row)].symbol(), "n");

    s.scroll_by(-1000, -1000);
    assert_eq!((s.scroll_x, s.scroll_y), (0, 0));
    render_in(&c, &l, &vis, &mut s, 40, 10);
    assert_eq!(
        (s.scroll_x, s.scroll_y),
        (0, 0),
        "not pulled back to the selection"
    );
    s.scroll_by(10_000, 10_000);
    let (w, h) = l.size();
    assert_eq!(
        (s.scroll_x, s.scroll_y),
        (w - 38, h - 8),
        "clamped to content"
    );
}

#[test]
fn the_selected_node_is_highlighted_and_breakpoints_are_red() {
    let c = pipe3();
    let l = DagLayout::new(&c);
    let mut vis = pending(&c);
    vis[1].breakpoint = true;
    let mut s = DagState::default();
    s.select(Some(2));
    let term = render_in(&c, &l, &vis, &mut s, 50, 3);
    let theme = Theme::dark();
    let buf = term.backend().buffer();
    let (x2, _) = l.position(2);
    assert_eq!(buf[(1 + x2 as u16 + 3, 1)].bg, theme.selection_bg);
    let (x1, _) = l.position(1);
    let mark = &buf[(1 + x1 as u16, 1)];
    assert_eq!(mark.symbol(), "●");
    assert_eq!(mark.fg, theme.breakpoint);
    let (x0, _) = l.position(0);
    assert_ne!(buf[(1 + x0 as u16 + 3, 1)].bg, theme.selection_bg);
}

// ---- snapshots ----------------------------------------------------------

#[test]
fn snapshot_pipe_of_three() {
    let c = pipe3();
    let mut vis = pending(&c);
    vis[0].status = NodeStatus::Ok;
    vis[1].status = NodeStatus::Running;
    let mut s = DagState::default();
    s.select(Some(1));
    insta::assert_snapshot!(render(&c, &vis, &mut s, 44, 3));
}

#[test]
fn snapshot_diamond() {
    let c = diamond();
    let mut vis = pending(&c);
    vis[0].status = NodeStatus::Ok;
    vis[1].status = NodeStatus::Ok;
    vis[2].status = NodeStatus::Failed;
    vis[3].status = NodeStatus::Skipped;
    insta::assert_snapshot!(render(&c, &vis, &mut DagState::default(), 36, 4));
}

#[test]
fn snapshot_fan_out_progress() {
    let c = load(include_str!("../../../../examples/fan-out.yml"));
    let mut vis = pending(&c);
    vis[0].status = NodeStatus::Ok;
    vis[1].status = NodeStatus::Running;
    vis[1].progress = Some((3, 10));
    insta::assert_snapshot!(render(&c, &vis, &mut DagState::default(), 48, 3));
}

#[test]
fn a_fan_out_with_failed_iterations_says_how_many() {
    let c = load(include_str!("../../../../examples/fan-out.yml"));
    let mut vis = pending(&c);
    vis[0].status = NodeStatus::Ok;
    vis[1].status = NodeStatus::Failed;
    vis[1].progress = Some((10, 10));
    vis[1].failed_iterations = 3;
    let out = render(&c, &vis, &mut DagState::default(), 60, 3);
    assert!(out.contains("10/10 ✗3"), "{out}");
}

#[test]
fn snapshot_mixed_statuses() {
    let c = dag(&[
        ("src", &[]),
        ("ok", &["src"]),
        ("failed", &["src"]),
        ("skipped", &["failed"]),
        ("stale", &["ok"]),
        ("running", &["ok"]),
        ("mocked", &["src"]),
        ("brk", &["mocked"]),
        ("sink", &["stale", "running", "skipped", "brk"]),
    ]);
    let mut vis = pending(&c);
    let set = |vis: &mut Vec<NodeVisual>, id: &str, s: NodeStatus| vis[idx(&c, id)].status = s;
    set(&mut vis, "src", NodeStatus::Ok);
    set(&mut vis, "ok", NodeStatus::Ok);
    set(&mut vis, "failed", NodeStatus::Failed);
    set(&mut vis, "skipped", NodeStatus::Skipped);
    set(&mut vis, "stale", NodeStatus::Stale);
    set(&mut vis, "running", NodeStatus::Running);
    set(&mut vis, "mocked", NodeStatus::Ok);
    vis[idx(&c, "mocked")].mocked = true;
    vis[idx(&c, "brk")].breakpoint = true;
    vis[idx(&c, "brk")].paused_before = true;
    vis[idx(&c, "sink")].breakpoint = true;
    insta::assert_snapshot!(render(&c, &vis, &mut DagState::default(), 60, 8));
}

#[test]
fn snapshot_sixty_nodes_scrolled_to_the_selection() {
    let c = sixty();
    let vis = pending(&c);
    let mut s = DagState::default();
    s.select(Some(idx(&c, "n4_7")));
    insta::assert_snapshot!(render(&c, &vis, &mut s, 48, 12));
}

#[test]
fn snapshot_sixty_nodes_top_left() {
    let c = sixty();
    let vis = pending(&c);
    insta::assert_snapshot!(render(&c, &vis, &mut DagState::default(), 48, 12));
}

#[test]
fn long_edges_from_one_source_share_their_dummies() {
    let c = dag(&[
        ("hub", &[]),
        ("a", &["hub"]),
        ("b", &["a"]),
        ("c", &["b", "hub"]),
        ("d", &["c", "hub"]),
    ]);
    let l = DagLayout::new(&c);
    // hub→c skips layers 1 and 2; hub→d reuses them and adds layer 3.
    assert_eq!(l.dummy_count(), 3);
    let out = render(&c, &pending(&c), &mut DagState::default(), 60, 4);
    let body: String = out.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(
        body.matches('▶').count(),
        4,
        "one arrowhead per target:\n{out}"
    );
    let bus = out.lines().nth(2).unwrap_or_default();
    assert!(
        bus.contains('┴') && bus.contains('┘'),
        "the bus rises to c and d:\n{out}"
    );
}

// ---- properties over random DAGs ------------------------------------------

/// A DAG of `n` nodes where node i needs the earlier nodes picked by `picks`.
fn random_dag(n: usize, picks: &[(usize, usize)]) -> Composition {
    let mut needs: Vec<Vec<String>> = vec![Vec::new(); n];
    for &(a, b) in picks {
        let (lo, hi) = (a.min(b) % n, a.max(b) % n);
        let p = format!("n{lo}");
        if lo < hi && !needs[hi].contains(&p) {
            needs[hi].push(p);
        }
    }
    let mut y = String::from("compositions:\n  - name: r\n    nodes:\n");
    for (i, nd) in needs.iter().enumerate() {
        y.push_str(&format!("      - id: n{i}\n        tool: echo\n"));
        if !nd.is_empty() {
            y.push_str(&format!("        needs: [{}]\n", nd.join(", ")));
        }
    }
    load(&y)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    #[test]
    fn random_dags_lay_out_without_overlaps(
        n in 1usize..24,
        picks in proptest::collection::vec((0usize..24, 0usize..24), 0..40),
    ) {
        let c = random_dag(n, &picks);
        let l = DagLayout::new(&c);
        let (w, h) = l.size();
        for (u, kids) in c.children.iter().enumerate() {
            for &v in kids {
                proptest::prop_assert!(l.layer_of(u) < l.layer_of(v));
            }
        }
        for i in 0..n {
            let (x, y) = l.position(i);
            proptest::prop_assert!(x + l.node_width(i) <= w && y < h);
            // No edge cell under a node's text, no other node on its cells.
            let text = 3 + c.nodes[i].id.len();
            proptest::prop_assert!(l.edge_cells(y, x, x + text).is_empty(), "edge over n{}", i);
            for j in 0..n {
                if j != i && l.position(j).1 == y {
                    let xj = l.position(j).0;
                    proptest::prop_assert!(xj + l.node_width(j) <= x || xj >= x + l.node_width(i));
                }
            }
            proptest::prop_assert_eq!(l.node_at(x + 3, y), Some(i));
        }
        // Rendering into a pane smaller than the content never panics.
        let mut s = DagState::default();
        s.select(Some(n - 1));
        render(&c, &pending(&c), &mut s, 30, 8);
        s.scroll_by(7, 3);
        render(&c, &pending(&c), &mut s, 30, 8);
    }
}

/// Foreground colours of content row `y` (pane at the origin, no scroll).
fn row_fg(term: &Terminal<TestBackend>, y: u16) -> Vec<(String, ratatui::style::Color)> {
    let buf = term.backend().buffer();
    (0..buf.area.width)
        .map(|x| {
            let c = &buf[(x, y + 1)];
            (c.symbol().to_string(), c.fg)
        })
        .collect()
}

#[test]
fn the_selected_nodes_edges_are_lit_and_no_others() {
    let c = dag(&[
        ("hub", &[]),
        ("a", &["hub"]),
        ("b", &["a"]),
        ("c", &["b", "hub"]),
        ("d", &["c", "hub"]),
    ]);
    let l = DagLayout::new(&c);
    let accent = Theme::dark().accent;
    let lit_cols = |sel: &str| -> Vec<usize> {
        let mut s = DagState::default();
        s.select(Some(idx(&c, sel)));
        let term = render_in(&c, &l, &pending(&c), &mut s, 60, 4);
        row_fg(&term, 1)
            .iter()
            .enumerate()
            .filter(|(_, (sym, fg))| *fg == accent && sym != " ")
            .map(|(x, _)| x)
            .collect()
    };
    // Row 1 is the hub's bus. With c selected the bus is lit up to where
    // it rises to c, not on to d; with d selected it is lit all along.
    let for_c = lit_cols("c");
    let for_d = lit_cols("d");
    let for_a = lit_cols("a");
    assert!(!for_c.is_empty(), "c's bus is lit");
    assert!(for_d.len() > for_c.len(), "c {for_c:?} vs d {for_d:?}");
    assert!(for_c.iter().all(|x| for_d.contains(x)));
    assert!(for_a.is_empty(), "a has no edge on the bus: {for_a:?}");
}

#[test]
fn keys_turn_into_effects_for_the_app() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let key = |c| KeyEvent::new(c, KeyModifiers::NONE);
    let c = pipe3();
    let l = DagLayout::new(&c);
    let mut s = DagState::default();
    s.select(Some(0));
    assert_eq!(
        s.on_key(key(KeyCode::Char('l')), Some(&l)),
        DagEffect::Select(Some(1))
    );
    assert_eq!(s.selected, Some(1));
    assert_eq!(
        s.on_key(key(KeyCode::Char('h')), Some(&l)),
        DagEffect::Select(Some(0))
    );
    // At the first node, left moves nowhere: taken, nothing to show.
    assert_eq!(s.on_key(key(KeyCode::Left), Some(&l)), DagEffect::Stay);
    assert_eq!(s.on_key(key(KeyCode::Enter), Some(&l)), DagEffect::Inspect);
    assert_eq!(s.on_key(key(KeyCode::Char('i')), Some(&l)), DagEffect::Edit);
    assert_eq!(
        s.on_key(key(KeyCode::Char('z')), Some(&l)),
        DagEffect::Ignored
    );
    // No graph (a new or broken file): Enter and `i` edit, letters hint.
    assert_eq!(s.on_key(key(KeyCode::Enter), None), DagEffect::Edit);
    assert_eq!(s.on_key(key(KeyCode::Char('x')), None), DagEffect::NoPlan);
    assert_eq!(s.on_key(key(KeyCode::Down), None), DagEffect::Stay);
}
