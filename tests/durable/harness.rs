//! What tests/durable.rs runs its scenarios with: a Restate server, workers,
//! clients and HAProxy as child processes that are killed when dropped, a
//! home directory that every command reads its settings from, a small
//! HTTP/1.1 client, and the tap files the tapped servers write; and
//! tests/durable_cluster.rs's three-node cluster.
// Each test binary uses part of it.
#![allow(dead_code)]

use std::cell::RefCell;
use std::fs::File;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_pipewright"))
}

/// A fixture under tests/durable.
pub fn fixture(name: &str) -> PathBuf {
    root().join("tests/durable").join(name)
}

/// The Restate server binary `npm ci --prefix tests/durable` installs (the
/// platform package's own binary, not the npm wrapper, so that killing the
/// child kills the server); a missing one fails the test with the command.
pub fn restate_binary() -> PathBuf {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    let p = root().join(format!(
        "tests/durable/node_modules/@restatedev/restate-server-{os}-{arch}/bin/restate-server"
    ));
    assert!(
        p.exists(),
        "the Restate server is not installed ({} is missing): run `npm ci --prefix tests/durable`",
        p.display()
    );
    p
}

/// The reference memory server's entry point (`npm ci --prefix tests/interop`).
pub fn memory_js() -> PathBuf {
    let p =
        root().join("tests/interop/node_modules/@modelcontextprotocol/server-memory/dist/index.js");
    assert!(
        p.exists(),
        "the reference memory server is not installed ({} is missing): run `npm ci --prefix tests/interop`",
        p.display()
    );
    p
}

/// A port free on 127.0.0.1 right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Polls `done` every 50 ms until it holds; after `limit` (a guard against
/// a hang, not a measurement) fails with `what` and `context()`.
pub fn wait_for(
    what: &str,
    limit: Duration,
    mut done: impl FnMut() -> bool,
    context: impl Fn() -> String,
) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < limit,
            "gave up waiting for {what}\n{}",
            context()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A file's text, empty while it does not exist.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The last `n` lines of a log, for failure messages.
pub fn tail(path: &Path, n: usize) -> String {
    let text = read(path);
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(n);
    format!("--- {} ---\n{}", path.display(), lines[from..].join("\n"))
}

/// A child process killed (SIGKILL) and reaped when dropped, with its
/// stdout and stderr in files.
pub struct Proc {
    child: RefCell<Child>,
    stdin: RefCell<Option<ChildStdin>>,
    pub stdout: PathBuf,
    pub stderr: PathBuf,
}

impl Proc {
    /// Spawns `cmd` with stdin closed and its output in `dir/NAME.out` and
    /// `dir/NAME.err`.
    pub fn spawn(cmd: Command, dir: &Path, name: &str) -> Proc {
        Proc::start(cmd, dir, name, false)
    }

    /// As [`spawn`](Proc::spawn), with a pipe to its stdin that
    /// [`send`](Proc::send) writes lines to.
    pub fn spawn_with_stdin(cmd: Command, dir: &Path, name: &str) -> Proc {
        Proc::start(cmd, dir, name, true)
    }

    fn start(mut cmd: Command, dir: &Path, name: &str, piped: bool) -> Proc {
        let stdout = dir.join(format!("{name}.out"));
        let stderr = dir.join(format!("{name}.err"));
        let mut child = cmd
            .stdin(if piped { Stdio::piped() } else { Stdio::null() })
            .stdout(File::create(&stdout).expect("stdout file"))
            .stderr(File::create(&stderr).expect("stderr file"))
            .spawn()
            .unwrap_or_else(|e| panic!("could not start {name} ({cmd:?}): {e}"));
        let stdin = child.stdin.take();
        Proc {
            child: RefCell::new(child),
            stdin: RefCell::new(stdin),
            stdout,
            stderr,
        }
    }

    /// Writes `msg` as one line to its stdin (a JSON-RPC message to a
    /// stdio server).
    pub fn send(&self, msg: &Value) {
        let mut stdin = self.stdin.borrow_mut();
        let pipe = stdin.as_mut().expect("started with spawn_with_stdin");
        writeln!(pipe, "{msg}")
            .and_then(|()| pipe.flush())
            .unwrap_or_else(|e| panic!("writing {msg} to its stdin: {e}\n{}", self.logs()));
    }

    /// The JSON-RPC response with id `id` among the lines it printed on
    /// stdout, once there is one.
    pub fn response(&self, id: u64) -> Option<Value> {
        self.out()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|m| m["id"] == id && (m.get("result").is_some() || m.get("error").is_some()))
    }

    pub fn pid(&self) -> u32 {
        self.child.borrow().id()
    }

    /// Its exit status, if it has ended.
    pub fn exited(&self) -> Option<ExitStatus> {
        self.child.borrow_mut().try_wait().expect("try_wait")
    }

    /// Waits for it to end (at most `limit`, then fails with its output).
    pub fn wait(&self, what: &str, limit: Duration, context: impl Fn() -> String) -> i32 {
        let mut status = None;
        wait_for(
            what,
            limit,
            || {
                status = self.exited();
                status.is_some()
            },
            || {
                format!(
                    "{}\n{}\n{}",
                    tail(&self.stderr, 40),
                    tail(&self.stdout, 5),
                    context()
                )
            },
        );
        status.and_then(|s| s.code()).unwrap_or(-1)
    }

    /// SIGKILL, then reap.
    pub fn kill9(&self) {
        drop(self.stdin.borrow_mut().take());
        let mut child = self.child.borrow_mut();
        let _ = child.kill();
        let _ = child.wait();
    }

    pub fn out(&self) -> String {
        read(&self.stdout)
    }

    pub fn err(&self) -> String {
        read(&self.stderr)
    }

    pub fn logs(&self) -> String {
        format!("{}\n{}", tail(&self.stderr, 60), tail(&self.stdout, 20))
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// A temp directory every process of a test reads its settings from:
/// pipewright's data directory, the XDG directories, the tap files.
pub struct Home {
    pub dir: tempfile::TempDir,
}

impl Home {
    pub fn new() -> Home {
        Home {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// What the tapped demo server received (chain.yaml, saga.yaml, undo.yaml).
    pub fn demo_tap(&self) -> PathBuf {
        self.path("demo.tap")
    }

    /// What the tapped memory server received.
    pub fn memory_tap(&self) -> PathBuf {
        self.path("memory.tap")
    }

    /// The memory server's store.
    pub fn memory_file(&self) -> PathBuf {
        self.path("memory.jsonl")
    }

    /// `pipewright ARGS…` with every directory it reads set here, and the
    /// variables the tapped servers of the fixtures read.
    pub fn pipewright(&self, args: &[&str]) -> Command {
        let mut c = crate::common::pipewright();
        c.args(args)
            .current_dir(self.dir.path())
            .env("PIPEWRIGHT_DATA_DIR", self.path("data"))
            .env("PIPEWRIGHT_CONFIG_DIR", self.path("config"))
            .env("XDG_CONFIG_HOME", self.path("xdg-config"))
            .env("XDG_DATA_HOME", self.path("xdg-data"))
            .env("XDG_STATE_HOME", self.path("xdg-state"))
            .env("XDG_CACHE_HOME", self.path("xdg-cache"))
            .env("PW_BIN", bin())
            .env("PW_TAP_DEMO", self.demo_tap())
            .env("PW_TAP_MEMORY", self.memory_tap())
            .env("MEMORY_FILE_PATH", self.memory_file());
        if args.first().is_some_and(|a| *a == "worker") {
            // Only a worker connects the memory server and the Python
            // SDK's server (ask.yaml; the venv is checked when a test
            // uses it).
            c.env("PW_MEMORY_JS", memory_js())
                .env(
                    "PW_PYTHON",
                    std::env::var_os("PIPEWRIGHT_PYTHON")
                        .map(PathBuf::from)
                        .unwrap_or_else(|| root().join("target/pyvenv/bin/python")),
                )
                .env("PW_MODERN", root().join("tests/interop/modern_server.py"));
        }
        c
    }
}

/// A one-node Restate server on free 127.0.0.1 ports, with its data in a
/// temp directory; killed when dropped.
pub struct Restate {
    pub proc: Proc,
    pub ingress: u16,
    pub admin: u16,
    _dir: tempfile::TempDir,
}

impl Restate {
    /// Starts it and waits until the admin API and the ingress answer.
    pub fn start() -> Restate {
        let bin = restate_binary();
        let dir = tempfile::tempdir().expect("temp dir");
        let (ingress, admin, pgsql, node) = (free_port(), free_port(), free_port(), free_port());
        let mut cmd = Command::new(bin);
        cmd.arg("--no-logo")
            .current_dir(dir.path())
            .env_remove("RESTATE_CONFIG")
            .env("RESTATE_BASE_DIR", dir.path().join("data"))
            .env(
                "RESTATE_INGRESS__BIND_ADDRESS",
                format!("127.0.0.1:{ingress}"),
            )
            .env("RESTATE_ADMIN__BIND_ADDRESS", format!("127.0.0.1:{admin}"))
            .env(
                "RESTATE_ADMIN__QUERY_ENGINE__PGSQL_BIND_ADDRESS",
                format!("127.0.0.1:{pgsql}"),
            )
            .env("RESTATE_BIND_ADDRESS", format!("127.0.0.1:{node}"))
            .env(
                "RESTATE_ADVERTISED_ADDRESS",
                format!("http://127.0.0.1:{node}"),
            )
            .env("RESTATE_LISTEN_MODE", "tcp")
            .env("NO_COLOR", "1");
        let proc = Proc::spawn(cmd, dir.path(), "restate");
        let r = Restate {
            proc,
            ingress,
            admin,
            _dir: dir,
        };
        wait_for(
            "Restate's admin API and ingress to answer",
            Duration::from_secs(120),
            || {
                assert!(
                    r.proc.exited().is_none(),
                    "restate-server exited\n{}",
                    r.proc.logs()
                );
                http(r.admin, "GET", "/health", None).is_ok_and(|(s, _)| s == 200)
                    && http(r.ingress, "GET", "/restate/health", None).is_ok_and(|(s, _)| s == 200)
            },
            || r.proc.logs(),
        );
        r
    }

    /// `restate://127.0.0.1:INGRESS`, for `--on`.
    pub fn on(&self) -> String {
        format!("restate://127.0.0.1:{}", self.ingress)
    }

    /// `http://127.0.0.1:ADMIN`, for `--restate` and `--restate-admin`.
    pub fn admin_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.admin)
    }
}

/// One node of a [`Cluster`]: its ports and its process while it runs.
pub struct Node {
    pub name: String,
    pub ingress: u16,
    pub admin: u16,
    config: PathBuf,
    pub proc: Option<Proc>,
}

impl Node {
    /// `http://127.0.0.1:ADMIN`.
    pub fn admin_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.admin)
    }

    /// `restate://127.0.0.1:INGRESS`.
    pub fn on(&self) -> String {
        format!("restate://127.0.0.1:{}", self.ingress)
    }

    pub fn logs(&self) -> String {
        self.proc.as_ref().map(Proc::logs).unwrap_or_default()
    }
}

/// Three Restate nodes on one machine as docs/src/durable.md's "A
/// three-node cluster" configures them (shared `cluster-name`, own
/// `node-name`, ports and `base-dir`, `default-replication = 2`, n1
/// provisions), on free 127.0.0.1 ports; every node killed when dropped.
pub struct Cluster {
    pub nodes: Vec<Node>,
    dir: tempfile::TempDir,
}

impl Cluster {
    /// Writes n1.toml, n2.toml and n3.toml, starts the nodes and waits
    /// until every node's admin API knows the cluster (the deployments
    /// answer) and every node's ingress answers.
    pub fn start() -> Cluster {
        let dir = tempfile::tempdir().expect("temp dir");
        let ports: Vec<(u16, u16, u16, u16)> = (0..3)
            .map(|_| (free_port(), free_port(), free_port(), free_port()))
            .collect();
        let addresses = ports
            .iter()
            .map(|p| format!("\"http://127.0.0.1:{}\"", p.2))
            .collect::<Vec<_>>()
            .join(", ");
        let mut nodes = Vec::new();
        for (i, (ingress, admin, fabric, pgsql)) in ports.into_iter().enumerate() {
            let name = format!("n{}", i + 1);
            let config = dir.path().join(format!("{name}.toml"));
            let toml = format!(
                "node-name = \"{name}\"\n\
                 cluster-name = \"pipewright-test\"\n\
                 base-dir = \"{base}\"\n\
                 auto-provision = {provision}\n\
                 default-replication = 2\n\
                 bind-address = \"127.0.0.1:{fabric}\"\n\
                 advertised-address = \"http://127.0.0.1:{fabric}\"\n\n\
                 [metadata-client]\naddresses = [{addresses}]\n\n\
                 [ingress]\nbind-address = \"127.0.0.1:{ingress}\"\n\n\
                 [admin]\nbind-address = \"127.0.0.1:{admin}\"\n\n\
                 [admin.query-engine]\npgsql-bind-address = \"127.0.0.1:{pgsql}\"\n",
                base = dir.path().join(&name).display(),
                provision = i == 0,
            );
            std::fs::write(&config, toml).expect("write the node's configuration");
            nodes.push(Node {
                name,
                ingress,
                admin,
                config,
                proc: None,
            });
        }
        let mut c = Cluster { nodes, dir };
        for i in 0..3 {
            c.spawn(i);
        }
        for i in 0..3 {
            c.wait_up(i);
        }
        c
    }

    fn spawn(&mut self, i: usize) {
        let node = &mut self.nodes[i];
        let mut cmd = Command::new(restate_binary());
        cmd.arg("--no-logo")
            .arg("--config-file")
            .arg(&node.config)
            .current_dir(self.dir.path())
            .env_remove("RESTATE_CONFIG")
            .env("RESTATE_LISTEN_MODE", "tcp")
            .env("NO_COLOR", "1");
        // A restarted node appends to its logs' names, not over them.
        let mut log = node.name.clone();
        while self.dir.path().join(format!("{log}.err")).exists() {
            log.push('+');
        }
        node.proc = Some(Proc::spawn(cmd, self.dir.path(), &log));
    }

    /// Waits until node `i`'s admin API lists deployments and counts
    /// every node in the metadata cluster (a node killed while only two
    /// keep the metadata would leave one: no quorum), and its ingress
    /// answers.
    pub fn wait_up(&self, i: usize) {
        let node = &self.nodes[i];
        wait_for(
            &format!("Restate node {} to join the cluster and answer", node.name),
            Duration::from_secs(120),
            || {
                if let Some(p) = &node.proc {
                    assert!(
                        p.exited().is_none(),
                        "restate-server {} exited\n{}",
                        node.name,
                        self.logs()
                    );
                }
                let members = http(node.admin, "GET", "/cluster-health", None)
                    .ok()
                    .and_then(|(_, b)| serde_json::from_str::<Value>(&b).ok())
                    .and_then(|v| {
                        v["metadata_cluster_health"]["members"]
                            .as_array()
                            .map(Vec::len)
                    });
                members == Some(self.nodes.len())
                    && http(node.admin, "GET", "/deployments", None).is_ok_and(|(s, _)| s == 200)
                    && http(node.ingress, "GET", "/restate/health", None)
                        .is_ok_and(|(s, _)| s == 200)
            },
            || self.logs(),
        );
    }

    /// SIGKILL to node `i`.
    pub fn kill9(&mut self, i: usize) {
        if let Some(p) = self.nodes[i].proc.take() {
            p.kill9();
        }
    }

    /// Starts node `i` again on its ports and data, and waits for it.
    pub fn restart(&mut self, i: usize) {
        self.spawn(i);
        self.wait_up(i);
    }

    /// The last lines of every node's log.
    pub fn logs(&self) -> String {
        let mut s = String::new();
        for n in &self.nodes {
            let mut log = n.name.clone();
            while self.dir.path().join(format!("{log}.err")).exists() {
                s.push_str(&tail(&self.dir.path().join(format!("{log}.err")), 25));
                s.push('\n');
                log.push('+');
            }
        }
        s
    }
}

/// A `pipewright worker` on 127.0.0.1:PORT named NAME.
pub struct Worker {
    pub proc: Proc,
}

impl Worker {
    /// Starts `pipewright worker FILE --listen 127.0.0.1:PORT --restate
    /// ADMIN --name NAME --yes EXTRA…` and waits for its `listening` line,
    /// and its `registered` line unless EXTRA has `--no-register`.
    pub fn start(
        home: &Home,
        restate: &Restate,
        file: &Path,
        port: u16,
        name: &str,
        extra: &[&str],
    ) -> Worker {
        Worker::start_at(home, &restate.admin_url(), file, port, name, extra, || {
            restate.proc.logs()
        })
    }

    /// As [`start`](Worker::start), registering with the admin API at
    /// `admin` (a cluster's node); `logs` adds to a failure message.
    pub fn start_at(
        home: &Home,
        admin: &str,
        file: &Path,
        port: u16,
        name: &str,
        extra: &[&str],
        logs: impl Fn() -> String,
    ) -> Worker {
        let listen = format!("127.0.0.1:{port}");
        let admin = admin.to_owned();
        let mut args = vec![
            "worker",
            file.to_str().expect("utf-8 path"),
            "--listen",
            &listen,
            "--restate",
            &admin,
            "--name",
            name,
            "--yes",
        ];
        args.extend_from_slice(extra);
        let proc = Proc::spawn(home.pipewright(&args), home.dir.path(), name);
        let w = Worker { proc };
        let listening = format!("worker {name} listening on http://{listen}");
        // `registered with ADMIN as URL`
        let registered = format!("registered with {admin} as ");
        let register = !extra.contains(&"--no-register");
        wait_for(
            &format!("worker {name} to say it listens and registered"),
            Duration::from_secs(120),
            || {
                assert!(
                    w.proc.exited().is_none(),
                    "worker {name} exited\n{}",
                    w.proc.logs()
                );
                let err = w.proc.err();
                err.contains(&listening)
                    && (!register || err.lines().any(|l| l.starts_with(&registered)))
            },
            || format!("{}\n{}", w.proc.logs(), logs()),
        );
        w
    }
}

/// HAProxy in front of the workers: `mode http`, h2 on both sides,
/// round-robin over the streams of Restate's one connection.
pub struct Haproxy {
    pub proc: Proc,
    pub port: u16,
}

impl Haproxy {
    /// Writes the configuration, has `haproxy -c` accept it, starts it.
    pub fn start(dir: &Path, workers: &[(&str, u16)]) -> Haproxy {
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
        Haproxy::launch(dir, "haproxy", &cfg, port)
    }

    /// HAProxy in front of a cluster's nodes, HTTP/1.1: one port for their
    /// ingresses (checked at `/restate/health`) and one for their admin
    /// APIs (`/health`); a node that stops answering is taken out within
    /// a second, and a connection it refuses is tried at another. Every
    /// request goes to the first node that is up (`balance first`), so a
    /// test that kills n1 knows the clients' requests were held there.
    pub fn start_nodes(dir: &Path, nodes: &[(u16, u16)]) -> (Haproxy, u16) {
        let (ingress, admin) = (free_port(), free_port());
        let mut cfg = String::from(
            "global\n    maxconn 4096\n\n\
             defaults\n    mode http\n    timeout connect 2s\n    timeout client 10m\n    timeout server 10m\n\
             \x20   retries 3\n    option redispatch 1\n    default-server inter 300ms fall 1 rise 2\n\n",
        );
        for (what, port, check, pick) in [
            ("ingress", ingress, "/restate/health", 0),
            ("admin", admin, "/health", 1),
        ] {
            cfg.push_str(&format!(
                "frontend {what}\n    bind 127.0.0.1:{port}\n    default_backend {what}\n\n\
                 backend {what}\n    balance first\n    option httpchk GET {check}\n"
            ));
            for (i, n) in nodes.iter().enumerate() {
                let p = if pick == 0 { n.0 } else { n.1 };
                cfg.push_str(&format!("    server n{} 127.0.0.1:{p} check\n", i + 1));
            }
            cfg.push('\n');
        }
        (Haproxy::launch(dir, "haproxy-nodes", &cfg, ingress), admin)
    }

    /// Writes `cfg` to `dir/NAME.cfg`, has `haproxy -c` accept it, starts
    /// it and waits until `port` takes connections.
    fn launch(dir: &Path, name: &str, cfg: &str, port: u16) -> Haproxy {
        let haproxy = which("haproxy").unwrap_or_else(|| {
            panic!("haproxy is not installed: apt-get install haproxy (.ci/run does)")
        });
        let path = dir.join(format!("{name}.cfg"));
        std::fs::write(&path, cfg).expect("write haproxy.cfg");
        let check = Command::new(&haproxy)
            .arg("-c")
            .arg("-f")
            .arg(&path)
            .output()
            .expect("haproxy -c");
        assert!(
            check.status.success(),
            "haproxy refused its configuration:\n{cfg}\n{}{}",
            String::from_utf8_lossy(&check.stdout),
            String::from_utf8_lossy(&check.stderr)
        );
        let mut cmd = Command::new(&haproxy);
        cmd.arg("-db").arg("-f").arg(&path);
        let h = Haproxy {
            proc: Proc::spawn(cmd, dir, name),
            port,
        };
        wait_for(
            "haproxy to listen",
            Duration::from_secs(30),
            || {
                assert!(
                    h.proc.exited().is_none(),
                    "haproxy exited\n{}",
                    h.proc.logs()
                );
                TcpStream::connect(("127.0.0.1", port)).is_ok()
            },
            || h.proc.logs(),
        );
        h
    }
}

/// The first `name` on PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// One HTTP/1.1 request to 127.0.0.1:PORT (JSON body, connection closed
/// after it): the status and the body.
pub fn http(
    port: u16,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(60)))?;
    let body = body.unwrap_or("");
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, rest) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| std::io::Error::other(format!("no HTTP head in {text:?}")))?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no status in {head:?}")))?;
    let chunked = head.lines().any(|l| {
        l.to_ascii_lowercase()
            .starts_with("transfer-encoding: chunked")
    });
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_owned()
    };
    Ok((status, body))
}

fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || after.len() < n {
            break;
        }
        out.push_str(&after[..n]);
        rest = after[n..].trim_start_matches("\r\n");
    }
    out
}

/// The JSON-RPC `tools/call` requests in a tap file whose tool is `tool`
/// and whose arguments include every field of `args` (a line still being
/// written is not counted).
pub fn calls(tap: &Path, tool: &str, args: &Value) -> usize {
    read(tap)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["method"] == "tools/call" && m["params"]["name"] == tool)
        .filter(|m| {
            args.as_object().is_none_or(|want| {
                want.iter()
                    .all(|(k, v)| m["params"]["arguments"].get(k) == Some(v))
            })
        })
        .count()
}

/// The arguments of every JSON-RPC `tools/call` of `tool` in a tap file,
/// in the order they were sent.
pub fn call_args(tap: &Path, tool: &str) -> Vec<Value> {
    read(tap)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["method"] == "tools/call" && m["params"]["name"] == tool)
        .map(|m| m["params"]["arguments"].clone())
        .collect()
}

/// How many entities named `name` the memory server's store holds.
pub fn entities(store: &Path, name: &str) -> usize {
    read(store)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "entity" && e["name"] == name)
        .count()
}
