//! Before anything is called: the model in; the [`dry_run`] plan with
//! resolved arguments, projected cost and the budget verdict, and the
//! [`preflight`] verdict against the servers' tool lists out; the judge's
//! calls for `eval:` are added to a plan by [`judging`].

pub mod dry_run;
pub mod judging;
pub mod preflight;
pub mod text;
