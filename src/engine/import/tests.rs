//! Tests of the Fibe and Discord imports.
