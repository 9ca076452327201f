//! Lays out OpenAI's `o200k_base` vocabulary for pipewright's token counter
//! (`src/cost/tokens.rs`): the tokens' bytes in rank order, their
//! offsets, and an open-addressing table from bytes to rank, all read in
//! place from the binary at run time, so counting tokens builds nothing and
//! costs no heap. The vocabulary comes from the `bpe-openai` crate.

#![expect(
    clippy::expect_used,
    reason = "a build script fails by panicking, and its message is the error"
)]

#[path = "src/cost/tokens/vocab_hash.rs"]
mod vocab_hash;

use std::path::PathBuf;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/cost/tokens/vocab_hash.rs");
    let bpe = &bpe_openai::o200k_base().bpe;
    let n = bpe.num_tokens();
    let mut bytes = Vec::new();
    let mut offsets = Vec::with_capacity(4 * (n + 1));
    let mut table = vec![0u32; 1 << vocab_hash::TABLE_BITS];
    let mask = table.len() - 1;
    for id in 0..n {
        let rank = u32::try_from(id).expect("fewer than 2^32 tokens");
        let token = bpe.token_bytes(rank);
        offsets.extend_from_slice(&u32::try_from(bytes.len()).expect("small").to_le_bytes());
        bytes.extend_from_slice(token);
        let mut slot = vocab_hash::slot(token);
        while table[slot] != 0 {
            slot = (slot + 1) & mask;
        }
        table[slot] = rank + 1;
    }
    offsets.extend_from_slice(&u32::try_from(bytes.len()).expect("small").to_le_bytes());
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let table: Vec<u8> = table.iter().flat_map(|e| e.to_le_bytes()).collect();
    for (name, data) in [
        ("o200k_tokens.bin", &bytes),
        ("o200k_offsets.bin", &offsets),
        ("o200k_table.bin", &table),
    ] {
        std::fs::write(out.join(name), data).expect("OUT_DIR is writable");
    }
}
