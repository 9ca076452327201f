//! `pipewright man`: manual pages in roff (clap_mangen), one for the program
//! and one per subcommand (`pipewright-run(1)` …).

use std::io::Write as _;
use std::path::PathBuf;

use clap::Args;

/// Arguments of `man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write every page (`pipewright.1`, `pipewright-run.1`, …) into this
    /// directory instead of printing them all on stdout.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Every page of `cmd` (the whole command line) as (file name, roff text).
pub fn pages(mut cmd: clap::Command) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    cmd.build();
    collect(&cmd, "pipewright", &mut out);
    out
}

fn collect(cmd: &clap::Command, name: &str, out: &mut Vec<(String, Vec<u8>)>) {
    let page = cmd
        .clone()
        .display_name(name.to_owned())
        .bin_name(name.replace('-', " "));
    let mut buf = Vec::new();
    if clap_mangen::Man::new(page).render(&mut buf).is_ok() {
        out.push((format!("{name}.1"), buf));
    }
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        collect(sub, &format!("{name}-{}", sub.get_name()), out);
    }
}

/// Prints (or writes) the pages of `cmd`, the whole command line.
pub fn man(args: &ManArgs, cmd: clap::Command) -> u8 {
    let pages = pages(cmd);
    match &args.dir {
        Some(dir) => {
            let res = std::fs::create_dir_all(dir).and_then(|()| {
                pages
                    .iter()
                    .try_for_each(|(name, text)| std::fs::write(dir.join(name), text))
            });
            if let Err(e) = res {
                eprintln!("error: cannot write the pages to {}: {e}", dir.display());
                return pipewright_engine::options::exit::FAILED;
            }
            eprintln!("wrote {} page(s) to {}", pages.len(), dir.display());
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            for (_, text) in &pages {
                let _ = stdout.write_all(text);
            }
        }
    }
    pipewright_engine::options::exit::OK
}
