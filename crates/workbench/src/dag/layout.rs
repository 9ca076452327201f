//! Where every node of a composition sits in the DAG pane, computed once per
//! plan: longest-path layers read left to right, dummy slots carry edges
//! that span several layers, barycenter sweeps reduce crossings, and edges
//! are routed into box-drawing cells kept per row so a frame only touches
//! what it shows.

use pipewright_engine::file::model::Composition;

/// Edge-cell directions; a cell's glyph follows from the union of its bits.
pub(crate) const LEFT: u8 = 1;
pub(crate) const RIGHT: u8 = 2;
pub(crate) const UP: u8 = 4;
pub(crate) const DOWN: u8 = 8;
/// The cell right before a node: an arrowhead.
pub(crate) const ARROW: u8 = 16;

/// Down/up barycenter sweeps tried; the ordering with fewest crossings wins.
const SWEEPS: usize = 8;
/// Columns kept for a fan-out's ` 120/300` (or ` 12/12 ✗3`) after its id.
const PROGRESS_RESERVE: usize = 9;

/// What holds a place in a layer: a node, or a bend point of a long edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// A node, indexed like `Composition::nodes`.
    Node(usize),
    /// A point a long edge passes through.
    Dummy,
}

/// The placed graph: layers, rows, columns and edge cells of one composition.
#[derive(Debug, Clone, Default)]
pub struct DagLayout {
    /// Slots per layer, top to bottom.
    layers: Vec<Vec<Slot>>,
    node_layer: Vec<usize>,
    node_x: Vec<usize>,
    node_y: Vec<usize>,
    /// Columns reserved for the node's text (marker, glyph, id, progress).
    node_width: Vec<usize>,
    children: Vec<Vec<usize>>,
    parents: Vec<Vec<usize>>,
    width: usize,
    height: usize,
    /// Per content row: edge cells `(x, bits)` sorted by x.
    edge_rows: Vec<Vec<(usize, u8)>>,
    /// Per content row: nodes on it, sorted by x.
    node_rows: Vec<Vec<usize>>,
    /// Per slot, the (row, column) edge cells filed under it: for a node,
    /// every edge it starts (chains included) and the last hop of every
    /// edge into it; for a dummy, its own line and the hop into it.
    lit: Vec<Vec<(usize, usize)>>,
    /// Per slot, the slots it is entered from.
    slot_pred: Vec<Vec<usize>>,
    crossings: usize,
}

/// The slot graph: real nodes are slots `0..n`, dummies follow.
struct Slots {
    layer: Vec<usize>,
    succ: Vec<Vec<usize>>,
    pred: Vec<Vec<usize>>,
    /// Slots `0..real` are nodes.
    real: usize,
}

impl Slots {
    /// The node a slot's chain starts from (a node is its own origin).
    fn origin(&self, mut slot: usize) -> usize {
        while slot >= self.real {
            slot = self.pred[slot][0];
        }
        slot
    }
}

impl DagLayout {
    /// Lays out `comp`; cheap enough for a few hundred nodes, and meant to be
    /// kept until the plan changes.
    pub fn new(comp: &Composition) -> DagLayout {
        let n = comp.nodes.len();
        if n == 0 {
            return DagLayout::default();
        }
        let node_layer = longest_path_layers(comp);
        let slots = build_slots(comp, &node_layer);
        let mut order = initial_order(&slots);
        let crossings = reduce_crossings(&slots, &mut order);
        let rows = assign_rows(&slots, &order);

        let node_base: Vec<usize> = comp.nodes.iter().map(|nd| 3 + nd.id.len()).collect();
        let node_width: Vec<usize> = comp
            .nodes
            .iter()
            .zip(&node_base)
            .map(|(nd, b)| {
                b + if nd.for_each.is_some() {
                    PROGRESS_RESERVE
                } else {
                    0
                }
            })
            .collect();
        let layer_w: Vec<usize> = order
            .iter()
            .map(|l| {
                l.iter()
                    .filter(|&&s| s < n)
                    .map(|&s| node_width[s])
                    .max()
                    .unwrap_or(1)
            })
            .collect();

        let mut grid = Grid {
            lit: vec![Vec::new(); slots.layer.len()],
            ..Grid::default()
        };
        let mut layer_x = vec![0usize; order.len()];
        for k in 0..order.len() {
            let x = layer_x[k];
            let gap_start = x + layer_w[k];
            // Dummies draw straight through their layer.
            for &s in &order[k] {
                if s >= n {
                    grid.owners = [slots.origin(s), s];
                    grid.hline(rows[s], x, gap_start - 1);
                }
            }
            if k + 1 == order.len() {
                break;
            }
            let groups = edge_groups(&slots, &order[k], &rows);
            let tracks = assign_tracks(&groups, &rows);
            let n_tracks = tracks.iter().flatten().max().map_or(0, |t| t + 1);
            let next_x = gap_start + if n_tracks == 0 { 3 } else { n_tracks + 4 };
            layer_x[k + 1] = next_x;
            let out_x = |s: usize| {
                if s < n {
                    x + node_base[s] + 1
                } else {
                    gap_start - 1
                }
            };
            let in_x = |t: usize| if t < n { next_x - 1 } else { next_x };
            for (g, track) in groups.iter().zip(&tracks) {
                for &(s, t) in &g.edges {
                    grid.owners = [slots.origin(s), t];
                    match track {
                        None => grid.hline(rows[s], out_x(s), in_x(t)),
                        Some(tr) => {
                            // Per edge; the union is the group's track.
                            let c = gap_start + 2 + tr;
                            grid.hline(rows[s], out_x(s), c);
                            if rows[s] != rows[t] {
                                grid.vline(c, rows[s], rows[t]);
                            }
                            grid.hline(rows[t], c, in_x(t));
                        }
                    }
                    if t < n {
                        grid.add(next_x - 1, rows[t], ARROW);
                    }
                }
            }
        }

        let node_x: Vec<usize> = (0..n).map(|i| layer_x[node_layer[i]]).collect();
        let node_y: Vec<usize> = (0..n).map(|i| rows[i]).collect();
        let height = rows.iter().max().map_or(0, |r| r + 1);
        let mut lit = std::mem::take(&mut grid.lit);
        for cells in &mut lit {
            cells.sort_unstable();
            cells.dedup();
        }
        let width = order
            .len()
            .checked_sub(1)
            .map_or(0, |last| layer_x[last] + layer_w[last]);
        let mut node_rows = vec![Vec::new(); height];
        for i in 0..n {
            node_rows[node_y[i]].push(i);
        }
        for r in &mut node_rows {
            r.sort_by_key(|&i| node_x[i]);
        }
        let layers = order
            .iter()
            .map(|l| {
                l.iter()
                    .map(|&s| if s < n { Slot::Node(s) } else { Slot::Dummy })
                    .collect()
            })
            .collect();
        DagLayout {
            layers,
            node_layer,
            node_x,
            node_y,
            node_width,
            children: comp.children.clone(),
            parents: comp.parents.clone(),
            width,
            height,
            edge_rows: grid.into_rows(height),
            lit,
            slot_pred: slots.pred,
            node_rows,
            crossings,
        }
    }

    /// Number of nodes laid out.
    pub fn len(&self) -> usize {
        self.node_layer.len()
    }

    /// Whether there is nothing to draw.
    pub fn is_empty(&self) -> bool {
        self.node_layer.is_empty()
    }

    /// Every layer's slots, top to bottom.
    pub fn layers(&self) -> &[Vec<Slot>] {
        &self.layers
    }

    /// The layer of node `i`: the longest path from any source to it.
    pub fn layer_of(&self, i: usize) -> usize {
        self.node_layer[i]
    }

    /// The nodes of layer `k`, top to bottom, dummies left out.
    pub fn layer_nodes(&self, k: usize) -> impl Iterator<Item = usize> + '_ {
        self.layers
            .get(k)
            .into_iter()
            .flatten()
            .filter_map(|s| match s {
                Slot::Node(i) => Some(*i),
                Slot::Dummy => None,
            })
    }

    /// Dummy slots inserted for edges that skip layers.
    pub fn dummy_count(&self) -> usize {
        self.layers
            .iter()
            .flatten()
            .filter(|s| **s == Slot::Dummy)
            .count()
    }

    /// Edge crossings left between adjacent layers after reduction.
    pub fn crossings(&self) -> usize {
        self.crossings
    }

    /// Content size in cells: (columns, rows).
    pub fn size(&self) -> (usize, usize) {
        (self.width, self.height)
    }

    /// Top-left content cell of node `i`.
    pub fn position(&self, i: usize) -> (usize, usize) {
        (self.node_x[i], self.node_y[i])
    }

    /// Columns reserved for node `i`'s text.
    pub fn node_width(&self, i: usize) -> usize {
        self.node_width[i]
    }

    /// Nodes node `i` waits for.
    pub fn parents(&self, i: usize) -> &[usize] {
        &self.parents[i]
    }

    /// Nodes that wait for node `i`.
    pub fn children(&self, i: usize) -> &[usize] {
        &self.children[i]
    }

    /// Edge cells of content row `y` with x in `from..to`, sorted by x.
    pub(crate) fn edge_cells(&self, y: usize, from: usize, to: usize) -> &[(usize, u8)] {
        let Some(row) = self.edge_rows.get(y) else {
            return &[];
        };
        let a = row.partition_point(|(x, _)| *x < from);
        let b = row.partition_point(|(x, _)| *x < to);
        &row[a..b]
    }

    /// Nodes whose top-left is on content row `y`, sorted by x.
    pub(crate) fn row_nodes(&self, y: usize) -> &[usize] {
        self.node_rows.get(y).map_or(&[], Vec::as_slice)
    }

    /// Edge cells `(row, column)` of node `i`'s own edges, sorted: what it
    /// starts, and every edge into it followed back through its dummies.
    pub(crate) fn edges_of(&self, i: usize) -> Vec<(usize, usize)> {
        let Some(own) = self.lit.get(i) else {
            return Vec::new();
        };
        let mut cells = own.clone();
        let n = self.len();
        for &p in &self.slot_pred[i] {
            let mut d = p;
            while d >= n {
                cells.extend_from_slice(&self.lit[d]);
                d = self.slot_pred[d][0];
            }
        }
        cells.sort_unstable();
        cells.dedup();
        cells
    }

    /// The node covering content cell (x, y).
    pub fn node_at(&self, x: usize, y: usize) -> Option<usize> {
        self.row_nodes(y)
            .iter()
            .copied()
            .find(|&i| x >= self.node_x[i] && x < self.node_x[i] + self.node_width[i])
    }
}

/// Layer of each node: 0 for sources, else one more than its deepest parent.
fn longest_path_layers(comp: &Composition) -> Vec<usize> {
    let n = comp.nodes.len();
    let mut layer = vec![0usize; n];
    let mut done = vec![false; n];
    for &v in &comp.order {
        layer[v] = comp.parents[v]
            .iter()
            .filter(|&&p| done[p])
            .map(|&p| layer[p] + 1)
            .max()
            .unwrap_or(0);
        done[v] = true;
    }
    layer
}

/// Splits every edge spanning more than one layer into a chain of dummies.
fn build_slots(comp: &Composition, layer: &[usize]) -> Slots {
    let n = comp.nodes.len();
    let mut s = Slots {
        layer: layer.to_vec(),
        succ: vec![Vec::new(); n],
        pred: vec![Vec::new(); n],
        real: n,
    };
    for (u, kids) in comp.children.iter().enumerate() {
        // One chain of dummies per source, shared by all its long edges, so
        // a node many others need draws as one bus, not a line per child.
        let mut chain: Vec<usize> = Vec::new();
        for &v in kids {
            if layer[v] <= layer[u] {
                continue; // not a forward edge; a validated plan has none
            }
            let mut prev = u;
            for (step, l) in (layer[u] + 1..layer[v]).enumerate() {
                let d = match chain.get(step) {
                    Some(&d) => d,
                    None => {
                        let d = s.layer.len();
                        s.layer.push(l);
                        s.succ.push(Vec::new());
                        s.pred.push(vec![prev]);
                        s.succ[prev].push(d);
                        chain.push(d);
                        d
                    }
                };
                prev = d;
            }
            s.succ[prev].push(v);
            s.pred[v].push(prev);
        }
    }
    s
}

/// Layers filled in slot order, then one downward barycenter pass.
fn initial_order(s: &Slots) -> Vec<Vec<usize>> {
    let depth = s.layer.iter().max().map_or(0, |m| m + 1);
    let mut order = vec![Vec::new(); depth];
    for (slot, &l) in s.layer.iter().enumerate() {
        order[l].push(slot);
    }
    for k in 1..depth {
        sort_by_barycenter(&mut order, k, k - 1, &s.pred);
    }
    order
}

/// Alternating down and up sweeps; keeps the best ordering seen.
fn reduce_crossings(s: &Slots, order: &mut Vec<Vec<usize>>) -> usize {
    let mut best = order.clone();
    let mut best_c = total_crossings(s, order);
    for sweep in 0..SWEEPS {
        if best_c == 0 {
            break;
        }
        let depth = order.len();
        if sweep % 2 == 0 {
            for k in 1..depth {
                sort_by_barycenter(order, k, k - 1, &s.pred);
            }
        } else {
            for k in (0..depth.saturating_sub(1)).rev() {
                sort_by_barycenter(order, k, k + 1, &s.succ);
            }
        }
        let c = total_crossings(s, order);
        if c < best_c {
            best_c = c;
            best = order.clone();
        }
    }
    *order = best;
    best_c
}

/// Reorders layer `k` by the mean position of each slot's neighbours in
/// layer `fixed`; slots without neighbours keep their place.
fn sort_by_barycenter(order: &mut [Vec<usize>], k: usize, fixed: usize, nbrs: &[Vec<usize>]) {
    let mut pos = std::collections::HashMap::new();
    for (p, &slot) in order[fixed].iter().enumerate() {
        pos.insert(slot, p as f64);
    }
    let mut keyed: Vec<(f64, usize, usize)> = order[k]
        .iter()
        .enumerate()
        .map(|(p, &slot)| {
            let ps: Vec<f64> = nbrs[slot]
                .iter()
                .filter_map(|x| pos.get(x))
                .copied()
                .collect();
            let bary = if ps.is_empty() {
                p as f64
            } else {
                ps.iter().sum::<f64>() / ps.len() as f64
            };
            (bary, p, slot)
        })
        .collect();
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    order[k] = keyed.into_iter().map(|(_, _, slot)| slot).collect();
}

/// Crossings between every pair of adjacent layers.
fn total_crossings(s: &Slots, order: &[Vec<usize>]) -> usize {
    let mut pos = vec![0usize; s.layer.len()];
    for l in order {
        for (p, &slot) in l.iter().enumerate() {
            pos[slot] = p;
        }
    }
    let mut total = 0;
    for l in order.iter().take(order.len().saturating_sub(1)) {
        let mut edges: Vec<(usize, usize)> = l
            .iter()
            .flat_map(|&u| s.succ[u].iter().map(move |&v| (u, v)))
            .map(|(u, v)| (pos[u], pos[v]))
            .collect();
        edges.sort_unstable();
        total += inversions(edges.iter().map(|e| e.1));
    }
    total
}

/// Pairs i < j with `v[i] > v[j]`, counted with a Fenwick tree: edges sorted
/// by source position cross exactly when their targets are inverted.
fn inversions(v: impl Iterator<Item = usize>) -> usize {
    let v: Vec<usize> = v.collect();
    let size = v.iter().max().map_or(0, |m| m + 1);
    let mut tree = vec![0usize; size + 1];
    let mut total = 0;
    for (seen, &x) in v.iter().enumerate() {
        // Earlier values <= x.
        let mut at_most = 0;
        let mut i = x + 1;
        while i > 0 {
            at_most += tree[i];
            i &= i - 1;
        }
        total += seen - at_most;
        let mut i = x + 1;
        while i <= size {
            tree[i] += 1;
            i += i & i.wrapping_neg();
        }
    }
    total
}

/// A row per slot: each slot sits level with the mean of its predecessors
/// when free, else just below the slot above it, so chains run straight;
/// empty rows are then removed.
fn assign_rows(s: &Slots, order: &[Vec<usize>]) -> Vec<usize> {
    let mut row = vec![0usize; s.layer.len()];
    for l in order {
        let mut next_free = 0usize;
        for &slot in l {
            let preds = &s.pred[slot];
            let want = if preds.is_empty() {
                next_free
            } else {
                let sum: usize = preds.iter().map(|&p| row[p]).sum();
                sum / preds.len()
            };
            let r = want.max(next_free);
            row[slot] = r;
            next_free = r + 1;
        }
    }
    // Rows no slot landed on would show as blank bands: close them up.
    let mut used: Vec<usize> = row.clone();
    used.sort_unstable();
    used.dedup();
    for r in &mut row {
        *r = used.partition_point(|&u| u < *r);
    }
    row
}

/// Edges of one gap that share a vertical track: a split (one source, many
/// targets) or a merge (many sources, one target).
struct Group {
    edges: Vec<(usize, usize)>,
    top: usize,
    bottom: usize,
}

fn edge_groups(s: &Slots, layer: &[usize], rows: &[usize]) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    let mut by_target: std::collections::HashMap<usize, usize> = Default::default();
    for &u in layer {
        if s.succ[u].len() > 1 {
            groups.push(Group {
                edges: s.succ[u].iter().map(|&v| (u, v)).collect(),
                top: 0,
                bottom: 0,
            });
            continue;
        }
        for &v in &s.succ[u] {
            if s.pred[v].len() > 1 {
                let g = *by_target.entry(v).or_insert_with(|| {
                    groups.push(Group {
                        edges: Vec::new(),
                        top: 0,
                        bottom: 0,
                    });
                    groups.len() - 1
                });
                groups[g].edges.push((u, v));
            } else {
                groups.push(Group {
                    edges: vec![(u, v)],
                    top: 0,
                    bottom: 0,
                });
            }
        }
    }
    for g in &mut groups {
        let ys = g.edges.iter().flat_map(|&(u, v)| [rows[u], rows[v]]);
        g.top = ys.clone().min().unwrap_or(0);
        g.bottom = ys.max().unwrap_or(0);
    }
    groups
}

/// A track per group that bends. Groups whose rows overlap (ends included)
/// get different tracks so lines never join by accident, and on any row the
/// group leaving a source sits left of the groups arriving at a target, so
/// an outgoing run never runs into an incoming one.
fn assign_tracks(groups: &[Group], rows: &[usize]) -> Vec<Option<usize>> {
    let bends: Vec<usize> = (0..groups.len())
        .filter(|&g| groups[g].top != groups[g].bottom)
        .collect();
    // before[b]: groups that must sit left of b.
    let mut before: Vec<Vec<usize>> = vec![Vec::new(); groups.len()];
    for &a in &bends {
        for &b in &bends {
            let clash = a != b
                && groups[a]
                    .edges
                    .iter()
                    .any(|&(u, _)| groups[b].edges.iter().any(|&(_, v)| rows[u] == rows[v]));
            if clash {
                before[b].push(a);
            }
        }
    }
    // Kahn's order, ties by span; a cycle (crossing edges) is broken by span.
    let mut left: Vec<usize> = bends.clone();
    left.sort_by_key(|&g| (groups[g].top, groups[g].bottom));
    let mut placed = vec![false; groups.len()];
    let mut out: Vec<Option<usize>> = vec![None; groups.len()];
    let mut busy: Vec<Vec<(usize, usize)>> = Vec::new();
    while !left.is_empty() {
        let pick = left
            .iter()
            .position(|&g| before[g].iter().all(|&a| placed[a]))
            .unwrap_or(0);
        let g = left.remove(pick);
        let min_t = before[g]
            .iter()
            .filter_map(|&a| out[a])
            .map(|t| t + 1)
            .max()
            .unwrap_or(0);
        let (top, bottom) = (groups[g].top, groups[g].bottom);
        let free = |spans: &Vec<(usize, usize)>| spans.iter().all(|&(t, b)| b < top || t > bottom);
        let t = (min_t..busy.len())
            .find(|&t| free(&busy[t]))
            .unwrap_or_else(|| {
                busy.resize(busy.len().max(min_t) + 1, Vec::new());
                busy.len() - 1
            });
        busy[t].push((top, bottom));
        out[g] = Some(t);
        placed[g] = true;
    }
    out
}

/// Edge cells being painted: (row, column, bits), merged at the end; each
/// cell is also filed under the slots whose edge it draws.
#[derive(Default)]
struct Grid {
    cells: Vec<(usize, usize, u8)>,
    /// Slots the cells being painted are filed under.
    owners: [usize; 2],
    lit: Vec<Vec<(usize, usize)>>,
}

impl Grid {
    fn add(&mut self, x: usize, y: usize, bits: u8) {
        self.cells.push((y, x, bits));
        let [a, b] = self.owners;
        if let Some(cells) = self.lit.get_mut(a) {
            cells.push((y, x));
        }
        if let Some(cells) = self.lit.get_mut(b).filter(|_| b != a) {
            cells.push((y, x));
        }
    }

    fn hline(&mut self, y: usize, x0: usize, x1: usize) {
        let (a, b) = (x0.min(x1), x0.max(x1));
        if a == b {
            self.add(a, y, LEFT | RIGHT);
            return;
        }
        self.add(a, y, RIGHT);
        for x in a + 1..b {
            self.add(x, y, LEFT | RIGHT);
        }
        self.add(b, y, LEFT);
    }

    fn vline(&mut self, x: usize, y0: usize, y1: usize) {
        let (a, b) = (y0.min(y1), y0.max(y1));
        self.add(x, a, DOWN);
        for y in a + 1..b {
            self.add(x, y, UP | DOWN);
        }
        self.add(x, b, UP);
    }

    fn into_rows(mut self, height: usize) -> Vec<Vec<(usize, u8)>> {
        self.cells.sort_unstable_by_key(|c| (c.0, c.1));
        let mut rows: Vec<Vec<(usize, u8)>> = vec![Vec::new(); height];
        for (y, x, bits) in self.cells {
            let Some(row) = rows.get_mut(y) else { continue };
            match row.last_mut() {
                Some((lx, b)) if *lx == x => *b |= bits,
                _ => row.push((x, bits)),
            }
        }
        rows
    }
}

/// The box-drawing glyph of an edge cell.
pub(crate) fn edge_glyph(bits: u8) -> &'static str {
    if bits & ARROW != 0 {
        return "▶";
    }
    let h = bits & (LEFT | RIGHT) != 0;
    match (
        bits & LEFT != 0,
        bits & RIGHT != 0,
        bits & UP != 0,
        bits & DOWN != 0,
    ) {
        (true, true, true, true) => "┼",
        (true, true, true, false) => "┴",
        (true, true, false, true) => "┬",
        (true, false, true, true) => "┤",
        (false, true, true, true) => "├",
        (false, true, false, true) => "┌",
        (true, false, false, true) => "┐",
        (false, true, true, false) => "└",
        (true, false, true, false) => "┘",
        _ if h => "─",
        _ => "│",
    }
}

/// Crossings when every layer keeps declaration order: the baseline the
/// sweeps must beat.
#[cfg(test)]
pub(crate) fn declared_order_crossings(comp: &Composition) -> usize {
    let slots = build_slots(comp, &longest_path_layers(comp));
    let depth = slots.layer.iter().max().map_or(0, |m| m + 1);
    let mut order = vec![Vec::new(); depth];
    for (slot, &l) in slots.layer.iter().enumerate() {
        order[l].push(slot);
    }
    total_crossings(&slots, &order)
}

#[cfg(test)]
mod tests {
    use super::inversions;

    #[test]
    fn inversions_match_a_pairwise_count() {
        let v = [3usize, 0, 2, 2, 5, 1, 4, 0];
        let mut pairwise = 0;
        for i in 0..v.len() {
            for j in i + 1..v.len() {
                if v[i] > v[j] {
                    pairwise += 1;
                }
            }
        }
        assert_eq!(inversions(v.iter().copied()), pairwise);
        assert_eq!(inversions(std::iter::empty()), 0);
    }
}
