//! A composition's `eval:` block as loaded: which judged metrics grade a
//! run, their thresholds and settings, and the judge provider the block
//! names (if any). `engine::eval` reads it to grade a trace.

use std::time::Duration;

use crate::diag::Span;

/// The score a metric passes at when the file sets no `threshold`.
pub const DEFAULT_THRESHOLD: f64 = 0.5;

/// The `eval:` block: its metrics in file order and its `provider:`.
#[derive(Debug, Clone, Default)]
pub struct EvalSpec {
    /// A judge declared for this composition (`eval.provider`).
    pub provider: Option<JudgeDecl>,
    pub metrics: Vec<MetricSpec>,
}

impl EvalSpec {
    pub fn is_empty(&self) -> bool {
        self.metrics.is_empty()
    }

    /// The metric names, in file order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.metrics.iter().map(MetricSpec::name)
    }
}

/// One metric with its pass mark.
#[derive(Debug, Clone)]
pub struct MetricSpec {
    pub kind: MetricKind,
    /// A score at or above it passes (0 to 1).
    pub threshold: f64,
    /// Where the metric is written (its key).
    pub span: Span,
}

impl MetricSpec {
    /// The metric's name as the file writes it.
    pub fn name(&self) -> &'static str {
        match &self.kind {
            MetricKind::Rubric(_) => "rubric",
            MetricKind::TaskCompletion { .. } => "mcp_task_completion",
            MetricKind::McpUse { .. } => "mcp_use",
            MetricKind::ArgumentCorrectness => "argument_correctness",
            MetricKind::PlanQuality => "plan_quality",
        }
    }
}

/// The five metrics and what each is told beyond the run.
#[derive(Debug, Clone)]
pub enum MetricKind {
    Rubric(Rubric),
    /// `task:` states the task when the composition's `description` is not
    /// enough.
    TaskCompletion {
        task: Option<String>,
    },
    /// `expect:` names tools the run must have called (checked without a
    /// model).
    McpUse {
        expect: Vec<String>,
    },
    ArgumentCorrectness,
    PlanQuality,
}

/// What a rubric grades by.
#[derive(Debug, Clone)]
pub enum Rubric {
    /// Weighted criteria, each scored 0 to 1; the score is their weighted
    /// mean.
    Criteria(Vec<Criterion>),
    /// A decision tree: the judge answers its questions, pipewright walks
    /// it to a leaf, whose score is the score.
    Tree(TreeNode),
}

/// One criterion of a flat rubric.
#[derive(Debug, Clone, PartialEq)]
pub struct Criterion {
    pub name: String,
    pub weight: f64,
    pub description: Option<String>,
}

/// A node of a rubric's decision tree.
#[derive(Debug, Clone, PartialEq)]
pub enum TreeNode {
    /// A question and the node each answer leads to, in file order.
    Question {
        question: String,
        options: Vec<(String, TreeNode)>,
    },
    /// Where a path ends: its score, and a name for it.
    Leaf { score: f64, label: Option<String> },
}

impl TreeNode {
    /// Every question of the tree, depth first, each with its number
    /// (`q1`, `q2` …) as the judge is asked them.
    pub fn questions(&self) -> Vec<(&str, &[(String, TreeNode)])> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(n) = stack.pop() {
            if let TreeNode::Question { question, options } = n {
                out.push((question.as_str(), options.as_slice()));
                for (_, child) in options.iter().rev() {
                    stack.push(child);
                }
            }
        }
        out
    }
}

/// An OpenAI-compatible chat-completions endpoint to judge with, as
/// written (strings may hold `${env.X}` and `${var.X}`).
#[derive(Clone, PartialEq, Default)]
pub struct JudgeDecl {
    pub url: String,
    pub model: String,
    /// A secret: only `${env.X}` is accepted in a file.
    pub api_key: Option<String>,
    pub timeout: Option<Duration>,
    /// The most tokens the judge may write in one reply.
    pub max_tokens: Option<u64>,
    pub temperature: Option<f64>,
    /// How often a call refused with 429 or a 5xx is tried again.
    pub retries: Option<u32>,
}

impl std::fmt::Debug for JudgeDecl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JudgeDecl")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "…"))
            .field("timeout", &self.timeout)
            .field("max_tokens", &self.max_tokens)
            .field("temperature", &self.temperature)
            .field("retries", &self.retries)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_are_numbered_depth_first_in_file_order() {
        let leaf = |s: f64| TreeNode::Leaf {
            score: s,
            label: None,
        };
        let tree = TreeNode::Question {
            question: "a".into(),
            options: vec![
                (
                    "yes".into(),
                    TreeNode::Question {
                        question: "b".into(),
                        options: vec![("yes".into(), leaf(1.0)), ("no".into(), leaf(0.5))],
                    },
                ),
                (
                    "no".into(),
                    TreeNode::Question {
                        question: "c".into(),
                        options: vec![("yes".into(), leaf(0.2)), ("no".into(), leaf(0.0))],
                    },
                ),
            ],
        };
        let q: Vec<&str> = tree.questions().iter().map(|(q, _)| *q).collect();
        assert_eq!(q, ["a", "b", "c"]);
    }
}
