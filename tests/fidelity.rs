//! Fidelity to the reference systems' documents: each test is named after
//! the sentence of the reference it checks, and runs the real binary
//! against the built-in demo server.

#[path = "fidelity/discord.rs"]
mod discord;
