//! What a durable run costs over a local one, per node and per run.
//!
//! Starts a Restate server (`tests/durable/node_modules/.bin/restate-server`,
//! `npm ci --prefix tests/durable`) on free loopback ports with a temporary
//! data directory, and one `pipewright worker` serving two files: a chain
//! of 1 demo `echo` node and a chain of 41. Then, in rounds (the order of
//! the four runs reversed every other round), times the whole command
//! `pipewright run FILE --no-save` locally and with `--on restate://…`.
//! Per round, the durable cost of one node is
//! `((durable 41 - durable 1) - (local 41 - local 1)) / 40`, and the fixed
//! cost of a durable run is `durable 1 - local 1`; printed as the median,
//! min and max over the rounds.
//!
//! `cargo build --release && cargo bench --bench durable [-- --pairs N]`
//! (N rounds, 10 by default; `PIPEWRIGHT_BIN` picks another binary).

#[path = "common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const LONG: usize = 41;

/// A process this bench started, stopped when the bench ends however it
/// ends: SIGTERM, up to 15 s to go, then SIGKILL. With `group`, the whole
/// process group it leads (the npm `restate-server` is a node script that
/// starts the real server as its child).
struct Stopped {
    child: Child,
    group: bool,
}

impl Stopped {
    fn signal(&self, sig: &str) -> bool {
        let pid = self.child.id();
        let target = if self.group {
            format!("-{pid}")
        } else {
            pid.to_string()
        };
        Command::new("kill")
            .args([sig, "--", &target])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        self.signal("-TERM");
        let until = Instant::now() + Duration::from_secs(15);
        while Instant::now() < until {
            let _ = self.child.try_wait();
            // `kill -0` fails once no process of the group (or the pid) is left.
            if !self.signal("-0") {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        self.signal("-KILL");
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// The status code of `GET path` on 127.0.0.1:port, if it answers.
fn http_status(port: u16, path: &str) -> Option<u16> {
    let mut s = TcpStream::connect_timeout(
        &format!("127.0.0.1:{port}").parse().ok()?,
        Duration::from_secs(1),
    )
    .ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut head = [0u8; 12];
    s.read_exact(&mut head).ok()?;
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}

fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// A chain of `n` demo `echo` nodes, one after the other.
fn chain(n: usize) -> String {
    let mut out = String::from("pipe:\n");
    for i in 0..n {
        out.push_str(&format!(
            "  - id: n{i}\n    tool: echo\n    args: {{ message: \"node {i}\" }}\n"
        ));
    }
    out
}

/// The environment every pipewright process of the bench runs in.
fn isolated(cmd: &mut Command, home: &Path) {
    cmd.env("PIPEWRIGHT_DATA_DIR", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("xdg-data"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env_remove("PIPEWRIGHT_RESTATE_ADMIN");
}

/// Wall time of one `pipewright run`, or why it failed.
fn timed(bin: &Path, home: &Path, file: &Path, on: Option<(&str, &str)>) -> Result<f64, String> {
    let mut cmd = Command::new(bin);
    cmd.arg("run").arg(file).arg("--no-save");
    if let Some((ingress, admin)) = on {
        cmd.args(["--on", ingress, "--restate-admin", admin]);
    }
    isolated(&mut cmd, home);
    let start = Instant::now();
    let out = cmd.output().expect("the binary runs");
    let took = start.elapsed().as_secs_f64();
    if !out.status.success() {
        return Err(format!(
            "`pipewright run {}{}` failed ({}):\n{}",
            file.display(),
            if on.is_some() { " --on …" } else { "" },
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(took)
}

/// Median, min and max.
fn stats(v: &[f64]) -> (f64, f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    let median = if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    };
    (median, s[0], s[n - 1])
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let restate_bin = root.join("tests/durable/node_modules/.bin/restate-server");
    if !restate_bin.exists() {
        println!(
            "durable bench skipped: no Restate server at {}; install it with `npm ci --prefix tests/durable`",
            restate_bin.display()
        );
        return;
    }
    // The processes it starts are stopped when `bench` returns, also on an error.
    if let Err(e) = bench(&restate_bin, common::pairs(10).max(1)) {
        eprintln!("{e}");
        std::process::exit(1);
    }
}

/// Starts Restate and a worker, times the rounds, prints the table.
fn bench(restate_bin: &Path, rounds: usize) -> Result<(), String> {
    let bin = common::release_bin();
    let dir = tempfile::tempdir().expect("temp dir");
    let home = dir.path().join("home");
    let one = dir.path().join("one.yml");
    let long = dir.path().join("forty-one.yml");
    std::fs::write(&one, chain(1)).expect("write");
    std::fs::write(&long, chain(LONG)).expect("write");

    // Restate, on its own free ports and data directory.
    let (ingress, admin, pgsql, fabric, worker_port) = (
        free_port(),
        free_port(),
        free_port(),
        free_port(),
        free_port(),
    );
    let restate_log = dir.path().join("restate.log");
    let log = std::fs::File::create(&restate_log).expect("log file");
    let restate = Stopped {
        child: Command::new(restate_bin)
            .arg("--no-logo")
            .env(
                "RESTATE_INGRESS__BIND_ADDRESS",
                format!("127.0.0.1:{ingress}"),
            )
            .env("RESTATE_ADMIN__BIND_ADDRESS", format!("127.0.0.1:{admin}"))
            .env(
                "RESTATE_ADMIN__QUERY_ENGINE__PGSQL_BIND_ADDRESS",
                format!("127.0.0.1:{pgsql}"),
            )
            .env("RESTATE_BIND_ADDRESS", format!("127.0.0.1:{fabric}"))
            .env(
                "RESTATE_ADVERTISED_ADDRESS",
                format!("http://127.0.0.1:{fabric}"),
            )
            .env("RESTATE_LISTEN_MODE", "tcp")
            .env("RESTATE_BASE_DIR", dir.path().join("restate"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log file"))
            .stderr(log)
            .process_group(0)
            .spawn()
            .expect("restate-server starts"),
        group: true,
    };
    let started = Instant::now();
    while http_status(admin, "/health") != Some(200)
        || http_status(ingress, "/restate/health") != Some(200)
    {
        if started.elapsed() > Duration::from_secs(60) {
            return Err(format!(
                "Restate was not healthy after 60 s; its log:\n{}",
                tail(&restate_log)
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!(
        "Restate healthy in {:.1} s (ingress {ingress}, admin {admin})",
        started.elapsed().as_secs_f64()
    );

    // One worker serving both files, registered with that Restate.
    let admin_url = format!("http://127.0.0.1:{admin}");
    let mut cmd = Command::new(&bin);
    cmd.arg("worker")
        .arg(&one)
        .arg(&long)
        .args(["--listen", &format!("127.0.0.1:{worker_port}")])
        .args(["--restate", &admin_url, "--name", "bench"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    isolated(&mut cmd, &home);
    let mut child = cmd.spawn().expect("pipewright worker starts");
    let stderr = child.stderr.take().expect("piped stderr");
    let worker = Stopped {
        child,
        group: false,
    };
    let (tx, rx) = mpsc::channel::<String>();
    // Reads the worker's stderr to its end, so the pipe never fills.
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut said = Vec::new();
    let started = Instant::now();
    loop {
        let left = Duration::from_secs(60).saturating_sub(started.elapsed());
        match rx.recv_timeout(left) {
            Ok(line) if line.starts_with("registered with") => break,
            Ok(line) => said.push(line),
            Err(_) => {
                return Err(format!(
                    "the worker did not register within 60 s; it said:\n{}\nRestate's log:\n{}",
                    said.join("\n"),
                    tail(&restate_log)
                ));
            }
        }
    }
    drop(rx);
    eprintln!(
        "worker registered in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let target = format!("restate://127.0.0.1:{ingress}");
    let on = Some((target.as_str(), admin_url.as_str()));
    // Warm the binary, the demo server and the worker's first invocation.
    for file in [&one, &long] {
        timed(&bin, &home, file, None)?;
        timed(&bin, &home, file, on)?;
    }
    let (mut l1, mut l41, mut d1, mut d41) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let mut order = [0, 1, 2, 3];
        if round % 2 == 1 {
            order.reverse();
        }
        for which in order {
            match which {
                0 => l1.push(timed(&bin, &home, &one, None)?),
                1 => l41.push(timed(&bin, &home, &long, None)?),
                2 => d1.push(timed(&bin, &home, &one, on)?),
                _ => d41.push(timed(&bin, &home, &long, on)?),
            }
        }
    }
    let per_node: Vec<f64> = (0..rounds)
        .map(|i| ((d41[i] - d1[i]) - (l41[i] - l1[i])) / (LONG - 1) as f64)
        .collect();
    let fixed: Vec<f64> = (0..rounds).map(|i| d1[i] - l1[i]).collect();

    let ms = |v: &[f64]| {
        let (med, min, max) = stats(v);
        format!("{:>9.2} {:>9.2} {:>9.2}", med * 1e3, min * 1e3, max * 1e3)
    };
    println!("durable vs local `pipewright run`, demo echo chains, {rounds} rounds (ms)");
    println!("{:<34} {:>9} {:>9} {:>9}", "", "median", "min", "max");
    println!("{:<34} {}", "local, 1 node", ms(&l1));
    println!("{:<34} {}", format!("local, {LONG} nodes"), ms(&l41));
    println!("{:<34} {}", "durable, 1 node", ms(&d1));
    println!("{:<34} {}", format!("durable, {LONG} nodes"), ms(&d41));
    println!("{:<34} {}", "durable overhead per node", ms(&per_node));
    println!("{:<34} {}", "durable overhead per run (1 node)", ms(&fixed));
    drop(worker);
    drop(restate);
    Ok(())
}
