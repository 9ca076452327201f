//! Durable runs at load: many runs submitted at once to one worker, and to
//! three workers behind HAProxy, on one Restate node.
//!
//! Each setup starts its own Restate server (`npm ci --prefix
//! tests/durable`) on free loopback ports with a fresh data directory, and
//! its workers, each serving two files: a chain of 5 demo `echo` nodes and
//! a chain of 1. The bench then sends N runs of the 5-node chain to
//! Restate's ingress at once (one thread each, released together, each a
//! `POST /Pipewright/ID/run/send`, then a
//! `GET …/attach` that answers with the finished run, both retried on a
//! reset connection), then N runs of the 1-node chain the same way. Per setup it prints
//! runs per second, the p50 and p99 of each run's end-to-end latency
//! (submitted to answered), and the workers' peak memory (`VmHWM`).
//!
//! The overhead per node is machine time at load: `(T5 - T1) / (N * 4)`,
//! with `T5` and `T1` the wall time of the N 5-node and N 1-node runs; the
//! same for local runs (`pipewright run FILE --no-save`, `--local-jobs` at a
//! time, `--local-runs` of each), subtracted.
//!
//! `cargo build --release && cargo bench --bench durable_load [-- --runs N
//! --pairs R --local-runs M --local-jobs J]` (N 1000, R 1, M 100, J 4 by
//! default; R rounds, the setups in alternating order; `PIPEWRIGHT_BIN` picks
//! another binary). HAProxy must be on PATH (or /usr/sbin) for the
//! three-worker setup; without it that setup is skipped and said so.

#[path = "common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Barrier, mpsc};
use std::time::{Duration, Instant};

/// A process this bench started, stopped when dropped: SIGTERM to it (or
/// its process group), up to 15 s to go, then SIGKILL.
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

    /// Its peak resident memory in MiB (`VmHWM`), while it runs.
    fn peak_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        self.signal("-TERM");
        let until = Instant::now() + Duration::from_secs(15);
        while Instant::now() < until {
            let _ = self.child.try_wait();
            if !self.signal("-0") {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        self.signal("-KILL");
        let _ = self.child.wait();
    }
}

fn flag(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// One HTTP/1.1 request (connection closed after it): status and body.
fn http(port: u16, method: &str, path: &str, body: &str) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(900)))?;
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut out = String::new();
    s.read_to_string(&mut out)?;
    let status = out
        .get(9..12)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("not an HTTP answer: {out:.200}")))?;
    let body = out.split_once("\r\n\r\n").map_or("", |(_, b)| b).to_owned();
    Ok((status, body))
}

fn healthy(port: u16, path: &str) -> bool {
    http(port, "GET", path, "").is_ok_and(|(s, _)| s == 200)
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

struct Restate {
    _proc: Stopped,
    ingress: u16,
    admin: u16,
    _dir: tempfile::TempDir,
}

fn restate(bin: &Path) -> Result<Restate, String> {
    let dir = tempfile::tempdir().expect("temp dir");
    let (ingress, admin, pgsql, fabric) = (free_port(), free_port(), free_port(), free_port());
    let log_path = dir.path().join("restate.log");
    let log = std::fs::File::create(&log_path).expect("log file");
    let proc = Stopped {
        child: Command::new(bin)
            .arg("--no-logo")
            .env_remove("RESTATE_CONFIG")
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
    while !healthy(admin, "/health") || !healthy(ingress, "/restate/health") {
        if started.elapsed() > Duration::from_secs(60) {
            return Err(format!(
                "Restate was not healthy after 60 s; its log:\n{}",
                tail(&log_path)
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(Restate {
        _proc: proc,
        ingress,
        admin,
        _dir: dir,
    })
}

/// `pipewright worker FILES… --listen PORT --restate ADMIN --name NAME
/// EXTRA…`, once it said it registered (or listens, with `--no-register`).
fn worker(
    bin: &Path,
    home: &Path,
    files: &[&Path],
    port: u16,
    admin: u16,
    name: &str,
    extra: &[&str],
) -> Result<Stopped, String> {
    let mut cmd = Command::new(bin);
    cmd.arg("worker")
        .args(files)
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(["--restate", &format!("http://127.0.0.1:{admin}")])
        .args(["--name", name])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    isolated(&mut cmd, home);
    let mut child = cmd.spawn().expect("pipewright worker starts");
    let stderr = child.stderr.take().expect("piped stderr");
    let w = Stopped {
        child,
        group: false,
    };
    let (tx, rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let ready = if extra.contains(&"--no-register") {
        format!("worker {name} listening on")
    } else {
        "registered with".to_owned()
    };
    let mut said = Vec::new();
    let started = Instant::now();
    loop {
        let left = Duration::from_secs(60).saturating_sub(started.elapsed());
        match rx.recv_timeout(left) {
            Ok(line) if line.starts_with(&ready) => return Ok(w),
            Ok(line) => said.push(line),
            Err(_) => {
                return Err(format!(
                    "worker {name} was not ready within 60 s; it said:\n{}",
                    said.join("\n")
                ));
            }
        }
    }
}

fn haproxy(dir: &Path, workers: &[(&str, u16)]) -> Result<(Stopped, u16), String> {
    let port = free_port();
    let mut cfg = format!(
        "global\n    maxconn 4096\n\n\
         defaults\n    mode http\n    timeout connect 5s\n    timeout client 10m\n    timeout server 10m\n\n\
         frontend pipewright_workers\n    bind 127.0.0.1:{port} proto h2\n    default_backend workers\n\n\
         backend workers\n    balance roundrobin\n"
    );
    for (name, p) in workers {
        cfg.push_str(&format!("    server {name} 127.0.0.1:{p} proto h2\n"));
    }
    let path = dir.join("haproxy.cfg");
    std::fs::write(&path, &cfg).expect("write haproxy.cfg");
    let proc = Stopped {
        child: Command::new(haproxy_bin().ok_or("haproxy is not installed")?)
            .arg("-db")
            .arg("-f")
            .arg(&path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("haproxy does not start: {e}"))?,
        group: false,
    };
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if started.elapsed() > Duration::from_secs(30) {
            return Err("haproxy did not listen within 30 s".into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok((proc, port))
}

fn haproxy_bin() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|d| d.join("haproxy"))
        .find(|p| p.is_file())
}

/// What N runs at once took: the wall time and each run's latency (s).
struct Load {
    wall: f64,
    latencies: Vec<f64>,
}

/// `f`, again (after 50 ms, 100 ms, …) while it fails to connect or read,
/// up to 20 times.
fn again(mut f: impl FnMut() -> std::io::Result<(u16, String)>) -> std::io::Result<(u16, String)> {
    let mut tries = 0;
    loop {
        match f() {
            Err(_) if tries < 20 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(50 * tries));
            }
            other => return other,
        }
    }
}

/// Submits run `id` (`POST /Pipewright/ID/run/send`) and attaches to it
/// until it ends (`GET /restate/workflow/Pipewright/ID/attach`): the
/// finished run's status and body. Both are retried when the connection
/// is reset or refused (a thousand connections at once can overflow a
/// listen queue): a send for an id Restate already holds is accepted
/// again, and attaching twice is harmless.
fn submit(ingress: u16, id: &str, body: &str) -> std::io::Result<(u16, String)> {
    let path = format!("/Pipewright/{id}/run/send");
    let (status, text) = again(|| http(ingress, "POST", &path, body))?;
    if !(200..300).contains(&status) {
        return Ok((status, text));
    }
    let path = format!("/restate/workflow/Pipewright/{id}/attach");
    again(|| http(ingress, "GET", &path, ""))
}

/// Sends `n` runs of `tool` to the ingress at once and waits for them all.
fn at_once(ingress: u16, tool: &str, sha: &str, n: usize, tag: &str) -> Result<Load, String> {
    let stamp = time::OffsetDateTime::now_utc();
    let prefix = format!(
        "{:04}{:02}{:02}-{:02}{:02}{:02}-{tag}",
        stamp.year(),
        u8::from(stamp.month()),
        stamp.day(),
        stamp.hour(),
        stamp.minute(),
        stamp.second()
    );
    let go = Barrier::new(n + 1);
    let body = format!(r#"{{"tool":"{tool}","args":{{}},"file_sha256":"{sha}"}}"#);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let (go, body, prefix) = (&go, &body, &prefix);
                std::thread::Builder::new()
                    .stack_size(128 * 1024)
                    .spawn_scoped(scope, move || {
                        go.wait();
                        let start = Instant::now();
                        let id = format!("{prefix}{i:05x}");
                        let answer = submit(ingress, &id, body);
                        (start.elapsed().as_secs_f64(), answer)
                    })
                    .expect("a submitting thread")
            })
            .collect();
        go.wait();
        let start = Instant::now();
        let mut latencies = Vec::with_capacity(n);
        let mut failed = Vec::new();
        for h in handles {
            let (took, answer) = h.join().expect("a submitting thread");
            match answer {
                Ok((200, body)) if body.contains("\"completed\"") => latencies.push(took),
                Ok((status, body)) => failed.push(format!("{status} {body:.300}")),
                Err(e) => failed.push(e.to_string()),
            }
        }
        let wall = start.elapsed().as_secs_f64();
        if let Some(first) = failed.first() {
            return Err(format!(
                "{} of {n} runs failed; the first: {first}",
                failed.len()
            ));
        }
        Ok(Load { wall, latencies })
    })
}

fn percentile(v: &[f64], p: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let i = ((s.len() as f64 * p).ceil() as usize).clamp(1, s.len()) - 1;
    s[i]
}

fn sha256(path: &Path) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(std::fs::read(path).expect("read")))
}

/// One setup's figures.
struct Figures {
    five: Load,
    one: Load,
    peak_mib: Vec<f64>,
}

struct Files {
    one: PathBuf,
    five: PathBuf,
}

/// Restate, `workers` workers (behind HAProxy when more than one), N runs
/// of each chain.
fn setup(
    bins: (&Path, &Path),
    files: &Files,
    home: &Path,
    workers: usize,
    n: usize,
) -> Result<Figures, String> {
    let (bin, restate_bin) = bins;
    let r = restate(restate_bin)?;
    let paths = [files.five.as_path(), files.one.as_path()];
    let ports: Vec<u16> = (0..workers).map(|_| free_port()).collect();
    let names: Vec<String> = (1..=workers).map(|i| format!("w{i}")).collect();
    let mut procs = Vec::new();
    let mut _lb = None;
    if workers == 1 {
        procs.push(worker(bin, home, &paths, ports[0], r.admin, "w1", &[])?);
    } else {
        let pairs: Vec<(&str, u16)> = names
            .iter()
            .map(String::as_str)
            .zip(ports.clone())
            .collect();
        let (lb, lb_port) = haproxy(home, &pairs)?;
        _lb = Some(lb);
        for i in 1..workers {
            procs.push(worker(
                bin,
                home,
                &paths,
                ports[i],
                r.admin,
                &names[i],
                &["--no-register"],
            )?);
        }
        let advertise = format!("http://127.0.0.1:{lb_port}");
        procs.push(worker(
            bin,
            home,
            &paths,
            ports[0],
            r.admin,
            &names[0],
            &["--advertise", &advertise],
        )?);
    }
    let (sha5, sha1) = (sha256(&files.five), sha256(&files.one));
    // Warm every worker's first invocation and its demo server.
    at_once(r.ingress, "five", &sha5, 3 * workers, "warm5")?;
    at_once(r.ingress, "one", &sha1, 3 * workers, "warm1")?;
    let five = at_once(r.ingress, "five", &sha5, n, "five")?;
    let one = at_once(r.ingress, "one", &sha1, n, "one")?;
    let peak_mib = procs.iter().map(Stopped::peak_mib).collect();
    Ok(Figures {
        five,
        one,
        peak_mib,
    })
}

/// N local runs of `file`, `jobs` at a time: the wall time.
fn local(bin: &Path, home: &Path, file: &Path, n: usize, jobs: usize) -> Result<f64, String> {
    let start = Instant::now();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failed = std::sync::Mutex::new(None::<String>);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                while next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < n {
                    let mut cmd = Command::new(bin);
                    cmd.arg("run").arg(file).arg("--no-save");
                    isolated(&mut cmd, home);
                    match cmd.output() {
                        Ok(out) if out.status.success() => {}
                        Ok(out) => {
                            *failed.lock().expect("lock") =
                                Some(String::from_utf8_lossy(&out.stderr).into_owned());
                        }
                        Err(e) => *failed.lock().expect("lock") = Some(e.to_string()),
                    }
                }
            });
        }
    });
    match failed.into_inner().expect("lock") {
        Some(why) => Err(format!("a local run of {} failed: {why}", file.display())),
        None => Ok(start.elapsed().as_secs_f64()),
    }
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let restate_bin = root.join("tests/durable/node_modules/.bin/restate-server");
    if !restate_bin.exists() {
        println!(
            "durable load bench skipped: no Restate server at {}; install it with `npm ci --prefix tests/durable`",
            restate_bin.display()
        );
        return;
    }
    if let Err(e) = bench(&restate_bin) {
        eprintln!("{e}");
        std::process::exit(1);
    }
}

fn bench(restate_bin: &Path) -> Result<(), String> {
    let (n, rounds) = (flag("--runs", 1000).max(1), common::pairs(1).max(1));
    let (local_n, jobs) = (
        flag("--local-runs", 100).max(1),
        flag("--local-jobs", 4).max(1),
    );
    let bin = common::release_bin();
    let dir = tempfile::tempdir().expect("temp dir");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let files = Files {
        one: dir.path().join("one.yml"),
        five: dir.path().join("five.yml"),
    };
    std::fs::write(&files.one, chain(1)).expect("write");
    std::fs::write(&files.five, chain(5)).expect("write");
    let setups: Vec<usize> = if haproxy_bin().is_some() {
        vec![1, 3]
    } else {
        println!("haproxy is not installed: the three-worker setup is skipped");
        vec![1]
    };

    // Local runs first: the per-node cost of the chain in one process.
    local(&bin, &home, &files.five, jobs, jobs)?;
    let l5 = local(&bin, &home, &files.five, local_n, jobs)?;
    let l1 = local(&bin, &home, &files.one, local_n, jobs)?;
    let local_node = (l5 - l1) / (local_n * 4) as f64;
    println!(
        "local `pipewright run --no-save`, {local_n} runs {jobs} at a time: 5 nodes {:.1} runs/s, 1 node {:.1} runs/s; {:.2} ms per node",
        local_n as f64 / l5,
        local_n as f64 / l1,
        local_node * 1e3
    );

    println!(
        "\n{n} durable runs at once, one Restate node ({rounds} round(s)); latency in ms, memory in MiB"
    );
    println!(
        "{:<20} {:>9} {:>8} {:>8} {:>9} {:>8} {:>8} {:>14} {:>10}",
        "setup",
        "5n runs/s",
        "5n p50",
        "5n p99",
        "1n runs/s",
        "1n p50",
        "1n p99",
        "worker VmHWM",
        "ms/node"
    );
    for round in 0..rounds {
        let mut order = setups.clone();
        if round % 2 == 1 {
            order.reverse();
        }
        for &workers in &order {
            let f = setup((&bin, restate_bin), &files, &home, workers, n)?;
            let at_load_node = (f.five.wall - f.one.wall) / (n * 4) as f64;
            let ms = |l: &Load, p: f64| percentile(&l.latencies, p) * 1e3;
            let peak = f
                .peak_mib
                .iter()
                .map(|m| format!("{m:.0}"))
                .collect::<Vec<_>>()
                .join("/");
            println!(
                "{:<20} {:>9.1} {:>8.0} {:>8.0} {:>9.1} {:>8.0} {:>8.0} {:>14} {:>10.2}",
                if workers == 1 {
                    "1 worker".to_owned()
                } else {
                    format!("{workers} workers, HAProxy")
                },
                n as f64 / f.five.wall,
                ms(&f.five, 0.5),
                ms(&f.five, 0.99),
                n as f64 / f.one.wall,
                ms(&f.one, 0.5),
                ms(&f.one, 0.99),
                peak,
                at_load_node * 1e3
            );
            println!(
                "{:<20} overhead per node against local: {:.2} ms",
                "",
                (at_load_node - local_node) * 1e3
            );
        }
    }
    Ok(())
}
