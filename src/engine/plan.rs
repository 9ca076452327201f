//! Before anything is called: the model in; the [`graph`] (order, waves,
//! cycles), the [`dry_run`] plan with resolved arguments and projected cost,
//! and the [`preflight`] verdict against the servers' tool lists out.

pub mod dry_run;
pub mod preflight;
