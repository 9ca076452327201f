//! Running a plan: a [`session`] takes commands from a driver and reports
//! [`events`]; [`exec`] runs one node; [`budget`] gates each dispatch;
//! [`cassette`] records or replays calls; [`durable`] journals them; [`trace`] is what a run leaves
//! behind, and [`store`] keeps it in the data directory.

pub(crate) mod budget;
pub mod cassette;
pub mod diff;
pub mod durable;
pub mod events;
pub mod exec;
pub mod otlp;
pub mod session;
pub mod store;
pub mod trace;
