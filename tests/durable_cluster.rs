//! Durable runs on a three-node Restate cluster (issue 45), end to end:
//! the cluster docs/src/durable.md's "A three-node cluster" configures
//! (`default-replication = 2`), HAProxy in front of the nodes' ingresses
//! and admin APIs (what `run --on` and the workers are pointed at), two
//! workers behind HAProxy, and one Restate node killed with SIGKILL in the
//! middle of a chain (with the workers), a fan-out, a compensation, a
//! waiting question and a `serve --on` call (with that `serve`). Every run
//! completes, each call journaled before a kill is made once (counted in
//! the tap files of tests/durable and the memory server's store), and
//! `runs attach` and `runs answer` work through another node's own
//! ingress.
//!
//! One cluster serves every phase, one phase at a time (a start costs a
//! second, each phase a few runs' worth of kill windows); a killed node is
//! started again before the next phase, so that each phase loses one node
//! of three. Its own test binary: cargo runs it after tests/durable.rs,
//! never beside it.

mod common;
#[path = "durable/harness.rs"]
mod harness;

use std::path::Path;
use std::time::{Duration, Instant};

use harness::{
    Cluster, Haproxy, Home, Proc, Worker, calls, entities, fixture, free_port, read, wait_for,
};
use serde_json::{Value, json};

/// How long a run may take before the test gives up (a hang guard).
const RUN_LIMIT: Duration = Duration::from_secs(240);

/// The cluster and the balancer in front of its nodes.
struct Fleet {
    cluster: Cluster,
    nodes_lb: Haproxy,
    admin_lb: u16,
}

impl Fleet {
    /// `restate://` of the balancer over the ingresses.
    fn on(&self) -> String {
        format!("restate://127.0.0.1:{}", self.nodes_lb.port)
    }

    /// The balancer over the admin APIs.
    fn admin(&self) -> String {
        format!("http://127.0.0.1:{}", self.admin_lb)
    }

    fn logs(&self) -> String {
        format!("{}\n{}", self.cluster.logs(), self.nodes_lb.proc.logs())
    }
}

/// Two workers of `file` behind their own HAProxy, registered once
/// through the balancer over the admin APIs.
struct Workers {
    lb: Haproxy,
    ports: [u16; 2],
    procs: Vec<Worker>,
    file: std::path::PathBuf,
}

impl Workers {
    fn start(home: &Home, fleet: &Fleet, file: &Path) -> Workers {
        let ports = [free_port(), free_port()];
        let lb = Haproxy::start(home.dir.path(), &[("w1", ports[0]), ("w2", ports[1])]);
        let mut w = Workers {
            lb,
            ports,
            procs: Vec::new(),
            file: file.to_owned(),
        };
        w.spawn(home, fleet, "w", true);
        w
    }

    /// Starts both workers; the first registers the balancer's address.
    fn spawn(&mut self, home: &Home, fleet: &Fleet, tag: &str, register: bool) {
        let advertise = format!("http://127.0.0.1:{}", self.lb.port);
        let admin = fleet.admin();
        for (i, port) in self.ports.into_iter().enumerate() {
            let name = format!("{tag}{}", i + 1);
            let extra: Vec<&str> = if register && i == 0 {
                vec!["--advertise", &advertise]
            } else {
                vec!["--no-register"]
            };
            self.procs.push(Worker::start_at(
                home,
                &admin,
                &self.file,
                port,
                &name,
                &extra,
                || fleet.logs(),
            ));
        }
    }

    /// SIGKILL to both (the one running the run among them), then two new
    /// ones on the same ports.
    fn kill9_and_replace(&mut self, home: &Home, fleet: &Fleet) {
        for w in &self.procs {
            w.proc.kill9();
        }
        self.spawn(home, fleet, "again", false);
    }

    fn logs(&self) -> String {
        let mut s: String = self.procs.iter().map(|w| w.proc.logs() + "\n").collect();
        s.push_str(&self.lb.proc.logs());
        s
    }
}

/// `pipewright run FILE --on BALANCER --restate-admin BALANCER --format
/// json` in the background.
fn submit(home: &Home, fleet: &Fleet, file: &Path) -> Proc {
    let (on, admin) = (fleet.on(), fleet.admin());
    let cmd = home.pipewright(&[
        "run",
        file.to_str().expect("utf-8 path"),
        "--on",
        &on,
        "--restate-admin",
        &admin,
        "--format",
        "json",
    ]);
    Proc::spawn(cmd, home.dir.path(), "client")
}

/// The run id the client printed (`run ID on restate://…`), once it has.
fn run_id(client: &Proc) -> Option<String> {
    client.err().lines().find_map(|l| {
        let (id, rest) = l.trim().strip_prefix("run ")?.split_once(' ')?;
        rest.starts_with("on restate://").then(|| id.to_owned())
    })
}

fn trace(out: &str, logs: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("no JSON trace ({e}): {out}\n{logs}"))
}

/// Everything a failure message needs.
fn context(home: &Home, fleet: &Fleet, workers: &Workers, client: &Proc) -> String {
    format!(
        "{}\n{}\n{}\n--- demo tap ---\n{}\n--- memory tap ---\n{}\n--- memory store ---\n{}",
        client.logs(),
        workers.logs(),
        fleet.logs(),
        read(&home.demo_tap()),
        read(&home.memory_tap()),
        read(&home.memory_file())
    )
}

/// Waits until `ready` holds, the client still running.
fn wait_until(what: &str, client: &Proc, ready: impl Fn() -> bool, ctx: impl Fn() -> String) {
    wait_for(
        what,
        RUN_LIMIT,
        || {
            assert!(
                client.exited().is_none(),
                "the client ended before the crash\n{}",
                ctx()
            );
            ready()
        },
        &ctx,
    );
}

/// `pipewright runs attach ID --on NODE --format json` at one node's own
/// ingress: its exit code and the trace.
fn attach_at(home: &Home, fleet: &Fleet, node: usize, id: &str) -> (i32, Value) {
    let n = &fleet.cluster.nodes[node];
    let (on, admin) = (n.on(), n.admin_url());
    let out = home
        .pipewright(&[
            "runs",
            "attach",
            id,
            "--on",
            &on,
            "--restate-admin",
            &admin,
            "--format",
            "json",
            "--no-save",
        ])
        .output()
        .expect("runs attach runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (
        out.status.code().unwrap_or(-1),
        trace(&text, &format!("{err}\n{}", fleet.logs())),
    )
}

/// `pipewright runs answer ID --on NODE ARGS…` at one node's own ingress.
fn answer_at(
    home: &Home,
    fleet: &Fleet,
    node: usize,
    id: &str,
    args: &[&str],
) -> (i32, String, String) {
    let n = &fleet.cluster.nodes[node];
    let (on, admin) = (n.on(), n.admin_url());
    let mut all = vec!["runs", "answer", id, "--on", &on, "--restate-admin", &admin];
    all.extend_from_slice(args);
    let out = home
        .pipewright(&all)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("runs answer runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The client's end: its exit code, the trace and the run id; `runs
/// attach` at node `other`'s ingress gives the same trace.
fn finish(
    home: &Home,
    fleet: &Fleet,
    workers: &Workers,
    client: &Proc,
    other: usize,
) -> (i32, Value, String) {
    let ctx = || context(home, fleet, workers, client);
    let code = client.wait("the client to end", RUN_LIMIT, ctx);
    let t = trace(&client.out(), &ctx());
    let id = run_id(client).unwrap_or_else(|| panic!("no `run ID on …` line\n{}", ctx()));
    let (acode, at) = attach_at(home, fleet, other, &id);
    assert_eq!(
        acode,
        code,
        "runs attach at n{} exits as the run did\n{at:#}",
        other + 1
    );
    assert_eq!(at["composition"], t["composition"], "{at:#}\n{t:#}");
    assert_eq!(at["output"], t["output"], "{at:#}\n{t:#}");
    assert_eq!(at["durable"]["run"], json!(id), "{at:#}");
    (code, t, id)
}

#[test]
fn a_three_node_cluster_finishes_every_run_once_when_any_node_or_worker_dies() {
    if harness::which("haproxy").is_none() {
        common::skipped(
            "durable_cluster::a_three_node_cluster",
            "haproxy is not installed (apt-get install haproxy)",
        );
        return;
    }
    let started = Instant::now();
    let lb_dir = tempfile::tempdir().expect("temp dir");
    let cluster = Cluster::start();
    let addrs: Vec<(u16, u16)> = cluster.nodes.iter().map(|n| (n.ingress, n.admin)).collect();
    let (nodes_lb, admin_lb) = Haproxy::start_nodes(lb_dir.path(), &addrs);
    let mut fleet = Fleet {
        cluster,
        nodes_lb,
        admin_lb,
    };
    eprintln!("cluster up after {:?}", started.elapsed());

    // (a) A chain: n1 (the node that provisioned, and the one the
    // client's request waits at: the balancer sends to the first node up)
    // and the workers die while `nap` runs, after `remember` wrote to the
    // memory server. The client asks the balancer again and gets the
    // result from n2.
    {
        let home = Home::new();
        let file = fixture("chain.yaml");
        let mut workers = Workers::start(&home, &fleet, &file);
        let client = submit(&home, &fleet, &file);
        wait_until(
            "remember to be done and nap to be running",
            &client,
            || {
                entities(&home.memory_file(), "Ada") == 1
                    && calls(&home.demo_tap(), "slow", &json!({"ms": 4000})) == 1
            },
            || context(&home, &fleet, &workers, &client),
        );
        fleet.cluster.kill9(0);
        workers.kill9_and_replace(&home, &fleet);
        let (code, t, _) = finish(&home, &fleet, &workers, &client, 1);
        let logs = context(&home, &fleet, &workers, &client);
        assert_eq!(code, 0, "{logs}");
        assert_eq!(t["composition"]["status"], "completed", "{t:#}");
        assert_eq!(t["output"], "done", "{t:#}");
        assert_eq!(entities(&home.memory_file(), "Ada"), 1, "{logs}");
        assert_eq!(
            calls(&home.memory_tap(), "create_entities", &json!({})),
            1,
            "{logs}"
        );
        assert_eq!(
            calls(&home.demo_tap(), "echo", &json!({"message": "hi"})),
            1,
            "{logs}"
        );
        assert_eq!(
            calls(&home.demo_tap(), "echo", &json!({"message": "done"})),
            1,
            "{logs}"
        );
        let attempts = t["durable"]["attempts"].as_array().expect("attempts");
        assert!(attempts.len() >= 2, "the workers' crash shows: {t:#}");
        fleet.cluster.restart(0);
        eprintln!("(a) chain done after {:?}", started.elapsed());
    }

    // (b) A fan-out: n2 dies in the second iteration.
    {
        let home = Home::new();
        let file = fixture("fan.yaml");
        let workers = Workers::start(&home, &fleet, &file);
        let client = submit(&home, &fleet, &file);
        wait_until(
            "the second iteration to be running",
            &client,
            || calls(&home.demo_tap(), "slow", &json!({"ms": 4001})) == 1,
            || context(&home, &fleet, &workers, &client),
        );
        fleet.cluster.kill9(1);
        let (code, t, _) = finish(&home, &fleet, &workers, &client, 2);
        let logs = context(&home, &fleet, &workers, &client);
        assert_eq!(code, 0, "{logs}");
        assert_eq!(
            t["output"],
            json!([{"slept_ms": 700}, {"slept_ms": 4001}, {"slept_ms": 4002}]),
            "{t:#}"
        );
        assert_eq!(calls(&home.demo_tap(), "echo", &json!({})), 1, "{logs}");
        assert_eq!(
            calls(&home.demo_tap(), "slow", &json!({"ms": 700})),
            1,
            "{logs}"
        );
        // A node's death may move the run's partition to another leader
        // (when the node led it or kept its log), sometimes twice (at once, then when the cluster controller sees
        // the node gone): each move interrupts the execution, and the one
        // call in flight then (the iterations run one at a time) is made
        // again by the next execution, as when a worker dies. Every call
        // journaled before an interruption is made once (700 above).
        let attempts = t["durable"]["attempts"].as_array().expect("attempts").len();
        let made = calls(&home.demo_tap(), "slow", &json!({}));
        assert!(
            made >= 3 && made - 3 < attempts,
            "{made} slow calls in {attempts} attempts\n{logs}"
        );
        for ms in [4001, 4002] {
            assert!(
                calls(&home.demo_tap(), "slow", &json!({"ms": ms})) >= 1,
                "{logs}"
            );
        }
        fleet.cluster.restart(1);
        eprintln!("(b) fan-out done after {:?}", started.elapsed());
    }

    // (c) A compensation: n3 dies while greet's undo runs, after
    // remember's undo deleted the entity.
    {
        let home = Home::new();
        let file = fixture("saga.yaml");
        let workers = Workers::start(&home, &fleet, &file);
        let client = submit(&home, &fleet, &file);
        wait_until(
            "remember's undo to be done and greet's to be running",
            &client,
            || {
                calls(&home.memory_tap(), "delete_entities", &json!({})) == 1
                    && calls(&home.demo_tap(), "slow", &json!({"ms": 4000})) == 1
            },
            || context(&home, &fleet, &workers, &client),
        );
        fleet.cluster.kill9(2);
        let (code, t, _) = finish(&home, &fleet, &workers, &client, 0);
        let logs = context(&home, &fleet, &workers, &client);
        assert_eq!(code, 1, "a failed run exits 1\n{logs}");
        assert_eq!(t["composition"]["status"], "partial", "{t:#}");
        assert_eq!(t["failed_step"], "boom", "{t:#}");
        let undone: Vec<(&str, &str)> = t["compensations"]
            .as_array()
            .unwrap_or_else(|| panic!("no compensations: {t:#}"))
            .iter()
            .map(|c| {
                (
                    c["node"].as_str().unwrap_or(""),
                    c["status"].as_str().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(undone, [("remember", "ok"), ("greet", "ok")], "{t:#}");
        assert_eq!(entities(&home.memory_file(), "Ada"), 0, "{logs}");
        assert_eq!(
            calls(&home.memory_tap(), "create_entities", &json!({})),
            1,
            "{logs}"
        );
        assert_eq!(
            calls(&home.memory_tap(), "delete_entities", &json!({})),
            1,
            "{logs}"
        );
        assert_eq!(calls(&home.demo_tap(), "fail", &json!({})), 1, "{logs}");
        fleet.cluster.restart(2);
        eprintln!("(c) compensation done after {:?}", started.elapsed());
    }

    // (d) A question waits: n1 dies, the answer goes in through n2's own
    // ingress, and n3's attaches to the result.
    {
        let home = Home::new();
        let file = fixture("ask.yaml");
        let workers = Workers::start(&home, &fleet, &file);
        let client = submit(&home, &fleet, &file);
        let mut id = String::new();
        wait_for(
            "the run's question to wait in Restate",
            RUN_LIMIT,
            || {
                assert!(
                    client.exited().is_none(),
                    "the client ended before the question"
                );
                let Some(found) = run_id(&client) else {
                    return false;
                };
                id = found;
                let (code, out, _) = answer_at(&home, &fleet, 1, &id, &["--list"]);
                code == 0 && serde_json::from_str::<Vec<Value>>(&out).is_ok_and(|v| !v.is_empty())
            },
            || context(&home, &fleet, &workers, &client),
        );
        fleet.cluster.kill9(0);
        let (code, _, err) = answer_at(&home, &fleet, 1, &id, &["--accept", r#"{"name": "Ada"}"#]);
        assert_eq!(
            code,
            0,
            "{err}\n{}",
            context(&home, &fleet, &workers, &client)
        );
        assert!(
            err.contains(&format!("answered q0 of run {id}: accept")),
            "{err}"
        );
        let (code, t, _) = finish(&home, &fleet, &workers, &client, 2);
        let logs = context(&home, &fleet, &workers, &client);
        assert_eq!(code, 0, "{logs}");
        assert_eq!(t["composition"]["status"], "completed", "{t:#}");
        assert_eq!(
            t["nodes"]["greet"]["output"]["greeting"], "Hello, Ada!",
            "{t:#}"
        );
        assert_eq!(
            t["nodes"]["greet"]["interactions"][0]["by"], "runs_answer",
            "{t:#}"
        );
        assert_eq!(
            calls(&home.demo_tap(), "echo", &json!({"message": "before"})),
            1,
            "{logs}"
        );
        assert_eq!(
            calls(&home.demo_tap(), "echo", &json!({"message": "Hello, Ada!"})),
            1,
            "{logs}"
        );
        fleet.cluster.restart(0);
        eprintln!("(d) question done after {:?}", started.elapsed());
    }

    // (e) `serve --on`: the instance an agent called is killed mid-call
    // together with n2; the run goes on in the cluster without it, and
    // the agent's next call, sent to another instance, is served.
    {
        let home = Home::new();
        let file = fixture("undo.yaml");
        let workers = Workers::start(&home, &fleet, &file);
        let first = serve_on(&home, &fleet, &file, "serve1");
        let second = serve_on(&home, &fleet, &file, "serve2");
        let call = json!({
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "undo", "arguments": {}}
        });
        first.send(&call);
        wait_until(
            "the served run to be in nap",
            &first,
            || {
                calls(
                    &home.demo_tap(),
                    "echo",
                    &json!({"message": "first second"}),
                ) == 1
                    && calls(&home.demo_tap(), "slow", &json!({"ms": 4000})) == 1
            },
            || context(&home, &fleet, &workers, &first),
        );
        first.kill9();
        fleet.cluster.kill9(1);
        second.send(&call);
        let mut answer = None;
        wait_for(
            "the second instance's answer",
            RUN_LIMIT,
            || {
                assert!(second.exited().is_none(), "serve exited\n{}", second.logs());
                answer = second.response(2);
                answer.is_some()
            },
            || context(&home, &fleet, &workers, &second),
        );
        let answer = answer.expect("waited for");
        let logs = context(&home, &fleet, &workers, &second);
        assert!(answer.get("error").is_none(), "{answer:#}\n{logs}");
        assert_eq!(
            answer["result"]["structuredContent"],
            json!({"result": "first second last"}),
            "{answer:#}\n{logs}"
        );
        // The run the killed instance started finished in the cluster: its
        // last call was made too, once per run, and nothing was undone.
        wait_for(
            "the first instance's run to finish without it",
            RUN_LIMIT,
            || {
                calls(
                    &home.demo_tap(),
                    "echo",
                    &json!({"message": "first second last"}),
                ) == 2
            },
            || context(&home, &fleet, &workers, &second),
        );
        for message in ["first", "first second"] {
            assert_eq!(
                calls(&home.demo_tap(), "echo", &json!({ "message": message })),
                2,
                "{logs}"
            );
        }
        assert_eq!(
            calls(&home.demo_tap(), "echo", &json!({"message": "UNDO-1"})),
            0,
            "{logs}"
        );
        fleet.cluster.restart(1);
        eprintln!("(e) serve --on done after {:?}", started.elapsed());
    }
}

/// `serve FILE --on BALANCER --restate-admin BALANCER --yes` over stdio,
/// with the MCP handshake done.
fn serve_on(home: &Home, fleet: &Fleet, file: &Path, name: &str) -> Proc {
    let (on, admin) = (fleet.on(), fleet.admin());
    let serve = Proc::spawn_with_stdin(
        home.pipewright(&[
            "serve",
            file.to_str().expect("utf-8 path"),
            "--on",
            &on,
            "--restate-admin",
            &admin,
            "--yes",
        ]),
        home.dir.path(),
        name,
    );
    serve.send(&json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "durable-cluster-test", "version": "1.0.0"}
        }
    }));
    let mut init = None;
    wait_for(
        "serve to answer initialize",
        RUN_LIMIT,
        || {
            assert!(serve.exited().is_none(), "serve exited\n{}", serve.logs());
            init = serve.response(1);
            init.is_some()
        },
        || serve.logs(),
    );
    assert!(
        init.is_some_and(|i| i.get("error").is_none()),
        "{}",
        serve.logs()
    );
    serve.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    serve
}
