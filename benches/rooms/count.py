#!/usr/bin/env python3
"""The shape of the workbench and the crates, counted from the source, the
same way for any revision (issue 43's table):

    benches/rooms/count.py [REV ...]     (default: the working tree)

For each revision: `App`'s fields and methods, `impl App` blocks outside
`app.rs`/`app/`, places where `App` (`self.` in an `impl App`, or `app.`
anywhere) touches a component's field and writes one, two-way imports
between the workbench's top-level modules, `pub mod` per crate,
`#[allow]`/`#[expect]` attributes, and the largest ten files (lines before
the test module). Test code (`tests.rs`, `#[cfg(test)] mod`) is left out.
"""
import os
import re
import subprocess
import sys
import tempfile

CRATES = ["engine", "demo", "workbench", "serve", "lsp", "cli"]


def rust_files(root):
    for base, _, files in os.walk(root):
        for f in files:
            if f.endswith(".rs"):
                yield os.path.join(base, f)


def strip_tests(text):
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if line.strip() == "#[cfg(test)]" and nxt.startswith("mod "):
            if nxt.endswith(";"):
                i += 2
                continue
            break
        out.append(line)
        i += 1
    return "\n".join(out)


def strip_comments(code):
    return "\n".join(l.split("//", 1)[0] if "//" in l and '"' not in l.split("//", 1)[0] else l for l in code.split("\n"))


def product_files(tree, crate):
    src = os.path.join(tree, "crates", crate, "src")
    for f in sorted(rust_files(src)):
        if os.path.basename(f) == "tests.rs" or "/tests/" in f[len(src):]:
            continue
        yield f, strip_tests(open(f, encoding="utf-8").read())


def blocks(code, head_re):
    """The bodies of the items whose header matches `head_re`."""
    out = []
    for m in re.finditer(head_re, code):
        i = code.find("{", m.end() - 1)
        depth = 0
        for j in range(i, len(code)):
            if code[j] == "{":
                depth += 1
            elif code[j] == "}":
                depth -= 1
                if depth == 0:
                    out.append(code[i + 1 : j])
                    break
    return out


def count(tree):
    wb = os.path.join(tree, "crates", "workbench", "src")
    files = dict(product_files(tree, "workbench"))
    # App's fields: the struct body's `name:` lines at its top level.
    app_fields = []
    app_file = None
    for f, code in files.items():
        for body in blocks(code, r"\bpub(?:\([a-z]+\))?\s+struct\s+App\s*\{|\bstruct\s+App\s*\{"):
            app_file = f
            depth = 0
            for line in body.split("\n"):
                s = line.strip()
                if depth == 0 and re.match(r"^(pub(\([a-z]+\))?\s+)?[a-z_][a-z_0-9]*\s*:", s):
                    app_fields.append(re.sub(r"^pub(\([a-z]+\))?\s+", "", s).split(":")[0].strip())
                depth += line.count("{") + line.count("(") + line.count("<") - line.count("}") - line.count(")") - line.count(">")
    pub_fields = 0
    if app_file:
        body = blocks(files[app_file], r"\bstruct\s+App\s*\{")[0]
        pub_fields = len(re.findall(r"(?m)^\s*pub\s+[a-z_]+\s*:", body))
    # The types of App's fields that are the workbench's own structs
    # (components), by the struct names the crate defines.
    own_types = set()
    for code in files.values():
        own_types.update(re.findall(r"\b(?:struct|enum)\s+([A-Z][A-Za-z0-9]*)", code))
    comp_fields = set()
    if app_file:
        body = blocks(files[app_file], r"\bstruct\s+App\s*\{")[0]
        for name in app_fields:
            m = re.search(r"\b" + name + r"\s*:\s*([^,\n]+)", body)
            if m:
                types = re.findall(r"[A-Z][A-Za-z0-9]*", m.group(1))
                if any(t in own_types and t not in ("Options", "Focus", "RunState", "Areas") for t in types):
                    comp_fields.add(name)
    impl_blocks = 0
    impl_outside = 0
    methods = 0
    touches = 0
    writes = 0
    for f, code in files.items():
        rel = os.path.relpath(f, wb)
        code = strip_comments(code)
        bodies = blocks(code, r"\bimpl\s+App\s*\{")
        impl_blocks += len(bodies)
        if not (rel == "app.rs" or rel.startswith("app/")):
            impl_outside += len(bodies)
        for b in bodies:
            methods += len(re.findall(r"\bfn\s+[a-z_0-9]+", b))
        # A component's field read or written from App's side.
        for m in re.finditer(r"\b(self|app)\.([a-z_0-9]+)\.([a-z_][a-z_0-9]*)\b(\s*\(|\s*!?=(?!=)|)", code):
            who, comp, field, after = m.groups()
            if comp not in comp_fields:
                continue
            if who == "self" and not any(b for b in bodies if m.group(0) in b):
                continue
            if after.strip().startswith("("):
                continue
            touches += 1
            if re.match(r"\s*=(?!=)", after):
                writes += 1
    # Two-way imports between the workbench's top-level modules.
    edges = set()
    top = lambda rel: rel.split("/")[0].removesuffix(".rs")
    for f, code in files.items():
        rel = os.path.relpath(f, wb)
        if rel == "lib.rs":
            continue
        me = top(rel)
        parts = rel.removesuffix(".rs").split("/")
        code = strip_comments(code)
        for m in re.finditer(r"\b((?:crate|super)(?:::[A-Za-z_][A-Za-z_0-9]*)+)", code):
            segs = m.group(1).split("::")
            if segs[0] == "crate":
                target = segs[1]
            else:
                # super:: from a file: its module path's parent
                mod = parts[:]
                k = 0
                while k < len(segs) and segs[k] == "super":
                    mod = mod[:-1]
                    k += 1
                path = mod + segs[k:]
                if not path:
                    continue
                target = path[0]
            if target != me and (os.path.exists(os.path.join(wb, target + ".rs")) or os.path.isdir(os.path.join(wb, target))):
                edges.add((me, target))
    two_way = sorted({tuple(sorted(e)) for e in edges if (e[1], e[0]) in edges})
    # pub mod per crate, allow/expect, largest files.
    pub_mods = {}
    root_mods = {}
    allows = 0
    expects = 0
    sizes = []
    for crate in CRATES:
        n = 0
        for f, code in product_files(tree, crate):
            n += len(re.findall(r"(?m)^\s*pub\s+mod\s+", code))
            allows += len(re.findall(r"#!?\[allow\(", code))
            expects += len(re.findall(r"#!?\[expect\(", code))
            sizes.append((code.count("\n") + 1, os.path.relpath(f, tree)))
        pub_mods[crate] = n
        lib = open(os.path.join(tree, "crates", crate, "src", "lib.rs"), encoding="utf-8").read()
        root_mods[crate] = len(re.findall(r"(?m)^\s*pub\s+mod\s+", strip_tests(lib)))
    sizes.sort(reverse=True)
    return {
        "App fields (pub)": f"{len(app_fields)} ({pub_fields})",
        "App methods": methods,
        "impl App blocks (outside app/)": f"{impl_blocks} ({impl_outside})",
        "App touches a component's field (writes)": f"{touches} ({writes})",
        "two-way imports between workbench modules": len(two_way),
        "pub mod in each crate root": " ".join(f"{c} {n}" for c, n in root_mods.items()),
        "pub mod in each crate, all files": " ".join(f"{c} {n}" for c, n in pub_mods.items()),
        "#[allow] / #[expect]": f"{allows} / {expects}",
        "largest ten files": "; ".join(f"{p} {n}" for n, p in sizes[:10]),
        "_two_way": two_way,
        "_components": sorted(comp_fields),
    }


def main():
    revs = sys.argv[1:] or [None]
    here = subprocess.check_output(["git", "rev-parse", "--show-toplevel"], text=True).strip()
    for rev in revs:
        if rev is None:
            res = count(here)
        else:
            with tempfile.TemporaryDirectory() as d:
                subprocess.run(f"git -C {here} archive {rev} crates | tar -x -C {d}", shell=True, check=True)
                res = count(d)
        print(f"== {rev or 'working tree'}")
        for k, v in res.items():
            if k.startswith("_"):
                if "-v" in os.environ.get("COUNT_FLAGS", ""):
                    print(f"  {k}: {v}")
                continue
            print(f"  {k}: {v}")


if __name__ == "__main__":
    main()
