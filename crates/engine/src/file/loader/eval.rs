//! A composition's `eval:` block: the judged metrics (each with its
//! `threshold` and settings), a rubric's weighted criteria or decision tree,
//! and the judge `provider:` (its key only as `${env.X}`).

use super::*;
use crate::file::keys::{
    CRITERION_KEYS, EVAL_KEYS, EVAL_METRICS, JUDGE_KEYS, MCP_USE_KEYS, RUBRIC_KEYS,
    TASK_COMPLETION_KEYS, THRESHOLD_KEYS, TREE_KEYS,
};
use crate::file::model::eval::{
    Criterion, DEFAULT_THRESHOLD, EvalSpec, JudgeDecl, MetricKind, MetricSpec, Rubric, TreeNode,
};

/// A decision tree nests at most this deep (a real rubric is a few levels).
const MAX_TREE_DEPTH: usize = 16;
/// A decision tree has at most this many questions (each is asked in one
/// prompt).
const MAX_TREE_QUESTIONS: usize = 64;
/// A flat rubric has at most this many criteria.
const MAX_CRITERIA: usize = 64;

impl Loader<'_> {
    /// The `eval:` block: each metric with its settings (an unknown metric
    /// is an error naming the five), and the judge `provider:`.
    pub(super) fn eval(&mut self, v: &YNode) -> EvalSpec {
        let mut out = EvalSpec::default();
        let Some(pairs) = v.as_map() else {
            self.err(
                v.span,
                format!(
                    "`eval` must be a mapping of metrics, found {}",
                    v.type_name()
                ),
            );
            return out;
        };
        let mut seen: Vec<String> = Vec::new();
        for (k, val) in pairs {
            let Some(key) = k.key_text() else {
                self.err(k.span, "keys of `eval` must be plain names");
                continue;
            };
            if seen.contains(&key) {
                self.err(k.span, format!("duplicate key `{key}` in `eval`"));
                continue;
            }
            seen.push(key.clone());
            if key == "provider" {
                out.provider = self.judge_decl(val, "`eval.provider`");
                continue;
            }
            if !EVAL_KEYS.contains(&key.as_str()) {
                let known = EVAL_METRICS.join(", ");
                let hint = match suggest(&key, EVAL_KEYS.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`? The metrics are: {known}"),
                    None => format!("the metrics are: {known} (and `provider` names the judge)"),
                };
                self.err_hint(k.span, format!("unknown eval metric `{key}`"), hint);
                continue;
            }
            if let Some(m) = self.metric(&key, k, val) {
                out.metrics.push(m);
            }
        }
        out
    }

    /// One metric: `null` or `{}` takes the defaults.
    fn metric(&mut self, name: &str, key: &YNode, v: &YNode) -> Option<MetricSpec> {
        let what = format!("`eval.{name}`");
        let allowed = match name {
            "rubric" => RUBRIC_KEYS,
            "mcp_task_completion" => TASK_COMPLETION_KEYS,
            "mcp_use" => MCP_USE_KEYS,
            _ => THRESHOLD_KEYS,
        };
        let pairs = if matches!(v.kind, YKind::Null) {
            Vec::new()
        } else {
            self.mapping(v, allowed, &what)?
        };
        let get = |k: &str| {
            pairs
                .iter()
                .find(|(key, _, _)| key == k)
                .map(|(_, _, v)| *v)
        };
        let threshold = match get("threshold") {
            Some(t) => self.unit(t, &format!("`eval.{name}.threshold`"))?,
            None => DEFAULT_THRESHOLD,
        };
        let kind = match name {
            "rubric" => MetricKind::Rubric(self.rubric(v, get("criteria"), get("tree"))?),
            "mcp_task_completion" => MetricKind::TaskCompletion {
                task: get("task").and_then(|t| self.name(t, "`eval.mcp_task_completion.task`")),
            },
            "mcp_use" => MetricKind::McpUse {
                expect: get("expect")
                    .map_or_else(Vec::new, |e| self.string_list(e, "`eval.mcp_use.expect`")),
            },
            "argument_correctness" => MetricKind::ArgumentCorrectness,
            _ => MetricKind::PlanQuality,
        };
        Some(MetricSpec {
            kind,
            threshold,
            span: key.span,
        })
    }

    /// A number from 0 to 1 (a threshold, a weight's share, a leaf score).
    fn unit(&mut self, v: &YNode, what: &str) -> Option<f64> {
        let n = self.number(v, what)?;
        if n > 1.0 {
            self.err_hint(
                v.span,
                format!("{what} must be between 0 and 1, found `{n}`"),
                "scores run from 0 (worst) to 1 (best)",
            );
            return None;
        }
        Some(n)
    }

    fn rubric(
        &mut self,
        v: &YNode,
        criteria: Option<&YNode>,
        tree: Option<&YNode>,
    ) -> Option<Rubric> {
        match (criteria, tree) {
            (Some(c), None) => self.criteria(c).map(Rubric::Criteria),
            (None, Some(t)) => {
                let mut questions = 0;
                let node = self.tree_node(t, 0, &mut questions)?;
                if !matches!(node, TreeNode::Question { .. }) {
                    self.err_hint(
                        t.span,
                        "`eval.rubric.tree` must start with a `question`",
                        "write `tree: {question: …, options: {yes: …, no: …}}`",
                    );
                    return None;
                }
                Some(Rubric::Tree(node))
            }
            (Some(_), Some(t)) => {
                self.err(t.span, "`eval.rubric` takes `criteria` or `tree`, not both");
                None
            }
            (None, None) => {
                self.err_hint(
                    v.span,
                    "`eval.rubric` needs `criteria` or a decision `tree`",
                    "e.g. `criteria: [{ name: \"covers the query\", weight: 1.0 }]`",
                );
                None
            }
        }
    }

    fn criteria(&mut self, v: &YNode) -> Option<Vec<Criterion>> {
        let Some(items) = v.as_seq() else {
            self.err(
                v.span,
                format!(
                    "`eval.rubric.criteria` must be a list, found {}",
                    v.type_name()
                ),
            );
            return None;
        };
        if items.is_empty() {
            self.err(v.span, "`eval.rubric.criteria` is empty");
            return None;
        }
        if items.len() > MAX_CRITERIA {
            self.err(
                v.span,
                format!(
                    "`eval.rubric.criteria` has {} criteria; a rubric takes at most {MAX_CRITERIA}",
                    items.len()
                ),
            );
            return None;
        }
        let mut out: Vec<Criterion> = Vec::new();
        for item in items {
            let c = if let YKind::Str(..) = item.kind {
                self.name(item, "a criterion").map(|name| Criterion {
                    name,
                    weight: 1.0,
                    description: None,
                })
            } else {
                self.criterion(item)
            };
            let Some(c) = c else { continue };
            if out.iter().any(|o| o.name.eq_ignore_ascii_case(&c.name)) {
                self.err(item.span, format!("duplicate criterion `{}`", c.name));
                continue;
            }
            out.push(c);
        }
        if !out.is_empty() && out.iter().all(|c| c.weight == 0.0) {
            self.err(
                v.span,
                "every criterion of `eval.rubric` weighs 0: give one a weight",
            );
            return None;
        }
        (out.len() == items.len()).then_some(out)
    }

    fn criterion(&mut self, v: &YNode) -> Option<Criterion> {
        let pairs = self.mapping(v, CRITERION_KEYS, "a criterion")?;
        let get = |k: &str| {
            pairs
                .iter()
                .find(|(key, _, _)| key == k)
                .map(|(_, _, v)| *v)
        };
        let Some(name) = get("name").and_then(|n| self.name(n, "a criterion's `name`")) else {
            if get("name").is_none() {
                self.err_hint(
                    v.span,
                    "a criterion needs a `name`",
                    "e.g. `{ name: \"covers the query\", weight: 1.0 }`",
                );
            }
            return None;
        };
        let weight = match get("weight") {
            Some(w) => self.number(w, "a criterion's `weight`")?,
            None => 1.0,
        };
        let description = get("description").and_then(|d| self.string(d, "`description`"));
        Some(Criterion {
            name,
            weight,
            description,
        })
    }

    /// A tree node: `{question, options}`, `{score, label?}` or a bare
    /// score.
    fn tree_node(&mut self, v: &YNode, depth: usize, questions: &mut usize) -> Option<TreeNode> {
        if depth > MAX_TREE_DEPTH {
            self.err(
                v.span,
                format!("`eval.rubric.tree` nests deeper than {MAX_TREE_DEPTH} questions"),
            );
            return None;
        }
        if matches!(v.kind, YKind::Int(_) | YKind::Float(_)) {
            let score = self.unit(v, "a leaf's score")?;
            return Some(TreeNode::Leaf { score, label: None });
        }
        let pairs = self.mapping(v, TREE_KEYS, "a node of `eval.rubric.tree`")?;
        let get = |k: &str| {
            pairs
                .iter()
                .find(|(key, _, _)| key == k)
                .map(|(_, _, v)| *v)
        };
        match (get("question"), get("score")) {
            (Some(q), None) => {
                let question = self.name(q, "a tree's `question`")?;
                *questions += 1;
                if *questions > MAX_TREE_QUESTIONS {
                    self.err(
                        q.span,
                        format!("`eval.rubric.tree` asks more than {MAX_TREE_QUESTIONS} questions"),
                    );
                    return None;
                }
                let Some(opts) = get("options") else {
                    self.err_hint(
                        v.span,
                        format!("question `{question}` has no `options`"),
                        "e.g. `options: {yes: {score: 1}, no: {score: 0}}`",
                    );
                    return None;
                };
                let Some(pairs) = opts.as_map() else {
                    self.err(
                        opts.span,
                        format!("`options` must be a mapping, found {}", opts.type_name()),
                    );
                    return None;
                };
                if pairs.len() < 2 {
                    self.err(
                        opts.span,
                        format!("question `{question}` needs at least two options"),
                    );
                    return None;
                }
                let mut options: Vec<(String, TreeNode)> = Vec::new();
                let mut ok = true;
                for (k, child) in pairs {
                    let Some(label) = k.key_text() else {
                        self.err(k.span, "an option's label must be a plain name");
                        ok = false;
                        continue;
                    };
                    if options.iter().any(|(l, _)| l.eq_ignore_ascii_case(&label)) {
                        self.err(k.span, format!("duplicate option `{label}`"));
                        ok = false;
                        continue;
                    }
                    match self.tree_node(child, depth + 1, questions) {
                        Some(n) => options.push((label, n)),
                        None => ok = false,
                    }
                }
                ok.then_some(TreeNode::Question { question, options })
            }
            (None, Some(s)) => {
                if let Some(o) = get("options") {
                    self.err(o.span, "a leaf with a `score` has no `options`");
                    return None;
                }
                let score = self.unit(s, "a leaf's `score`")?;
                let label = get("label").and_then(|l| self.string(l, "a leaf's `label`"));
                Some(TreeNode::Leaf { score, label })
            }
            (Some(_), Some(s)) => {
                self.err(
                    s.span,
                    "a node of `eval.rubric.tree` is a `question` or a leaf `score`, not both",
                );
                None
            }
            (None, None) => {
                self.err_hint(
                    v.span,
                    "a node of `eval.rubric.tree` needs a `question` or a `score`",
                    "a question: `{question: …, options: {…}}`; a leaf: `{score: 0.5}` or `0.5`",
                );
                None
            }
        }
    }

    /// `eval.provider:` (an OpenAI-compatible chat-completions endpoint).
    fn judge_decl(&mut self, v: &YNode, what: &str) -> Option<JudgeDecl> {
        let pairs = self.mapping(v, JUDGE_KEYS, what)?;
        let mut out = JudgeDecl::default();
        let (mut url, mut model) = (false, false);
        for (key, _, val) in pairs {
            let field = format!("{}.{key}`", what.trim_end_matches('`'));
            match &*key {
                "url" => {
                    out.url = self.name(val, &field)?;
                    url = true;
                }
                "model" => {
                    out.model = self.name(val, &field)?;
                    model = true;
                }
                "api_key" => {
                    let text = self.string(val, &field)?;
                    if !is_env_reference(&text) {
                        self.err_secret(
                            val.span,
                            format!(
                                "{field} must be a reference such as `${{env.OPENAI_API_KEY}}`"
                            ),
                            "a key written in the file would be committed and shared with it",
                        );
                        return None;
                    }
                    out.api_key = Some(text);
                }
                "timeout" => out.timeout = Some(self.duration(val, &field)?),
                "max_tokens" => out.max_tokens = Some(self.count(val, &field)?.max(1)),
                "temperature" => out.temperature = Some(self.number(val, &field)?),
                _ => out.retries = Some(self.count(val, &field)?.min(10) as u32),
            }
        }
        if !url || !model {
            let missing = if url { "model" } else { "url" };
            self.err_hint(
                v.span,
                format!("{what} needs `{missing}`"),
                "e.g. `provider: { url: \"https://api.openai.com/v1\", model: gpt-4o-mini, api_key: \"${env.OPENAI_API_KEY}\" }`",
            );
            return None;
        }
        Some(out)
    }
}

/// True when `text` is exactly one `${env.NAME}` reference.
fn is_env_reference(text: &str) -> bool {
    reference::parse_template(text).is_ok_and(|t| {
        t.single_ref()
            .is_some_and(|r| matches!(r.root, Root::Env(_)) && r.path.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use crate::file::model::eval::{MetricKind, Rubric, TreeNode};
    use crate::file::open::load_str;

    fn eval_of(block: &str) -> (crate::file::model::EvalSpec, Vec<String>) {
        let text = format!(
            "compositions:\n  - name: c\n    nodes:\n      - {{ id: a, tool: echo, args: {{ message: hi }} }}\n    eval:\n{block}"
        );
        let loaded = load_str(&text);
        let errors = loaded
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| format!("{}:{} {}", d.span.start.line, d.span.start.col, d.message))
            .collect();
        let spec = loaded
            .pipeline
            .map(|p| p.compositions[0].eval.clone())
            .unwrap_or_default();
        (spec, errors)
    }

    #[test]
    fn the_mcptest_judged_block_loads_with_its_thresholds() {
        let (spec, errors) = eval_of(
            "      mcp_task_completion: { threshold: 0.8 }\n      mcp_use: { threshold: 0.7 }\n      rubric:\n        criteria:\n          - { name: \"covers query\", weight: 1.0 }\n",
        );
        assert!(errors.is_empty(), "{errors:?}");
        let names: Vec<&str> = spec.names().collect();
        assert_eq!(names, ["mcp_task_completion", "mcp_use", "rubric"]);
        assert_eq!(spec.metrics[0].threshold, 0.8);
        assert_eq!(spec.metrics[2].threshold, 0.5, "the default");
        let MetricKind::Rubric(Rubric::Criteria(c)) = &spec.metrics[2].kind else {
            panic!("{:?}", spec.metrics[2]);
        };
        assert_eq!(c[0].name, "covers query");
    }

    #[test]
    fn a_decision_tree_loads_with_bare_scores_and_labels() {
        let (spec, errors) = eval_of(
            "      rubric:\n        threshold: 0.6\n        tree:\n          question: Does it name a package?\n          options:\n            yes:\n              question: Is it relevant?\n              options: { yes: 1, no: { score: 0.4, label: off-topic } }\n            no: 0\n",
        );
        assert!(errors.is_empty(), "{errors:?}");
        let MetricKind::Rubric(Rubric::Tree(t)) = &spec.metrics[0].kind else {
            panic!("{:?}", spec.metrics[0]);
        };
        assert_eq!(t.questions().len(), 2);
        let TreeNode::Question { options, .. } = t else {
            panic!("{t:?}")
        };
        assert_eq!(options[0].0, "yes");
        assert_eq!(
            options[1].1,
            TreeNode::Leaf {
                score: 0.0,
                label: None
            }
        );
    }

    #[test]
    fn bad_blocks_are_errors_at_their_place() {
        for (block, want) in [
            (
                "      rubric: { threshold: 1.5, criteria: [a] }\n",
                "between 0 and 1",
            ),
            (
                "      rubric: {}\n",
                "needs `criteria` or a decision `tree`",
            ),
            (
                "      rubric: { criteria: [a], tree: { question: q, options: { a: 1, b: 0 } } }\n",
                "not both",
            ),
            (
                "      rubric: { tree: { question: q, options: { a: 1 } } }\n",
                "at least two options",
            ),
            (
                "      rubric: { tree: { score: 1 } }\n",
                "must start with a `question`",
            ),
            (
                "      rubric: { criteria: [{ name: a, wieght: 2 }] }\n",
                "unknown key `wieght` in a criterion",
            ),
            (
                "      rubric: { criteria: [a, A] }\n",
                "duplicate criterion",
            ),
            (
                "      plan_quality: { threshold: 0.5, task: x }\n",
                "unknown key `task`",
            ),
            (
                "      provider: { url: \"http://127.0.0.1:9/v1\", model: m, api_key: sk-123456 }\n",
                "must be a reference such as `${env.OPENAI_API_KEY}`",
            ),
            (
                "      provider: { url: \"http://127.0.0.1:9/v1\" }\n",
                "needs `model`",
            ),
            (
                "      helpfulness: {}\n",
                "unknown eval metric `helpfulness`",
            ),
        ] {
            let (_, errors) = eval_of(block);
            assert!(
                errors.iter().any(|e| e.contains(want)),
                "{block}: {errors:?}"
            );
            assert!(
                errors
                    .iter()
                    .all(|e| e.starts_with("6:") || e.starts_with("7:")),
                "{errors:?}"
            );
        }
    }

    #[test]
    fn a_provider_and_empty_metrics_load() {
        let (spec, errors) = eval_of(
            "      provider: { url: \"http://127.0.0.1:9/v1\", model: m, api_key: \"${env.K}\", timeout: 5s, retries: 0 }\n      plan_quality:\n      argument_correctness: {}\n",
        );
        assert!(errors.is_empty(), "{errors:?}");
        let p = spec.provider.unwrap_or_else(|| panic!("a provider"));
        assert_eq!(p.model, "m");
        assert_eq!(p.retries, Some(0));
        assert_eq!(p.timeout, Some(std::time::Duration::from_secs(5)));
        assert_eq!(spec.metrics.len(), 2);
    }
}
