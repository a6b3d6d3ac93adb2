#!/usr/bin/python3
"""Checks of the analysis commands `inspect`, `diff`, `profile` and the DOT picture (issue 8).

    check_tools.py TINYTRACE TESTMODELS_DIR WORK_DIR CASE
    check_tools.py --list

Every expected value is computed here from the model with PyTorch (/usr/bin/python3), never
hard-coded: parameter counts from model.parameters(), the BatchNorm modules and what folding them
into the preceding convolution changes (the max |delta| of each conv weight).
"""
import zygote
zygote.delegate()  # first, before torch is imported: Note [Torch zygote]
import json
import os
import shutil
import subprocess
import sys

import torch

from e2e_outputs import passed

STACK_TRACE_MARKERS = ["terminate called", "Exception raised from", "what():", "frame #",
                       "Traceback (most recent call last)", "Segmentation fault", "core dumped"]


def fail(msg, r=None):
    print(f"FAIL: {msg}", file=sys.stderr)
    if r is not None:
        print(f"--- exit code: {r.returncode}\n--- stdout:\n{r.stdout[-4000:]}--- stderr:\n"
              f"{r.stderr[-4000:]}---", file=sys.stderr)
    sys.exit(1)


def run(tt, *args, want=0):
    r = subprocess.run([tt, *args], capture_output=True, text=True, timeout=900)
    if r.returncode != want:
        fail(f"'tinytrace {' '.join(args)}' exited {r.returncode}, expected {want}", r)
    for m in STACK_TRACE_MARKERS:
        if m in r.stderr:
            fail(f"stack trace marker {m!r} on stderr", r)
    return r


SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib", "emitters")


def validated(text, kind):
    """Parses a --json document and checks it against lib/emitters/KIND.schema.json."""
    doc = json.loads(text)
    try:
        import jsonschema
    except ImportError:  # python3-jsonschema is optional; the field checks below still run
        return doc
    with open(os.path.join(SCHEMA_DIR, kind + ".schema.json")) as f:
        schema = json.load(f)
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
    if errors:
        fail(f"{kind} --json does not match its schema: {errors[0].message} at "
             f"{list(errors[0].absolute_path)}")
    return doc


def model_path(models, name):
    p = os.path.join(models, name + ".pt")
    if not os.path.exists(p):
        fail(f"{p} not found — run ctest -R gen_models first")
    return p


def bn_pairs(model):
    """(conv path, bn path) for every BatchNorm2d, the conv being the module registered just
    before it in the same parent (conv1/bn1, downsample.0/downsample.1): torchvision's layout."""
    mods = dict(model.named_modules())
    pairs = []
    names = list(mods)
    for i, name in enumerate(names):
        if mods[name].original_name != "BatchNorm2d":
            continue
        parent = name.rsplit(".", 1)[0] if "." in name else ""
        for prev in reversed(names[:i]):
            pp = prev.rsplit(".", 1)[0] if "." in prev else ""
            if pp == parent and mods[prev].original_name == "Conv2d":
                pairs.append((prev, name))
                break
        else:
            fail(f"no conv before {name}")
    return pairs


def case_diff_fused(tt, models, work):
    src = model_path(models, "resnet18")
    out = os.path.join(work, "fused")
    run(tt, "convert", src, "--fuse", "--emit", "tir", "-o", out, "--name", "fused")
    fused = os.path.join(out, "fused.tir")
    r = run(tt, "diff", src, fused, "--json", want=1)
    d = validated(r.stdout, "diff")
    m = torch.jit.load(src).eval()
    sd = m.state_dict()
    pairs = bn_pairs(m)
    bns = {bn for _, bn in pairs}
    if len(bns) != 20:
        fail(f"expected resnet18 to have 20 BatchNorm2d, found {len(bns)}")

    # ops: exactly the BatchNorm2d calls removed
    if d["ops"] != [{"op": "nn.BatchNorm2d", "a": len(bns), "b": 0, "delta": -len(bns)}]:
        fail(f"ops: {d['ops']}")
    mods = d["modules"]
    if mods["added"] or mods["changed"]:
        fail(f"modules added/changed: {mods['added']} {mods['changed']}")
    if {x["path"] for x in mods["removed"]} != bns or any(x["type"] != "nn.BatchNorm2d"
                                                          for x in mods["removed"]):
        fail(f"modules removed: {mods['removed']}")

    # parameters: BN params/buffers removed, conv weights changed, conv biases added
    ps = d["parameters"]
    removed = {x["name"] for x in ps["removed"]}
    want_removed = {k for k in sd if k.rsplit(".", 1)[0] in bns}
    if removed != want_removed:
        fail(f"removed parameters differ: extra {removed - want_removed}, missing {want_removed - removed}")
    added = {x["name"]: x for x in ps["added"]}
    want_added = {conv + ".bias" for conv, _ in pairs if conv + ".bias" not in sd}
    if set(added) != want_added:
        fail(f"added parameters: {sorted(added)} expected {sorted(want_added)}")
    if any(x["kind"] != "param" for x in added.values()):
        fail("an added conv bias is not a parameter")
    changed = {x["name"]: x for x in ps["changed"]}
    if set(changed) != {conv + ".weight" for conv, _ in pairs}:
        fail(f"changed parameters: {sorted(changed)}")
    for conv, bn in pairs:
        w = sd[conv + ".weight"].double()
        scale = sd[bn + ".weight"].double() / torch.sqrt(sd[bn + ".running_var"].double() + 1e-5)
        want = (w * scale.reshape(-1, 1, 1, 1) - w).abs().max().item()
        got = changed[conv + ".weight"]["max_abs_delta"]
        if abs(got - want) > 1e-4 * max(1.0, want):
            fail(f"{conv}.weight: max |delta| {got}, PyTorch says {want}")
    if d["signature"]["inputs"]["changed"] or d["signature"]["outputs"]["changed"]:
        fail(f"signature: {d['signature']}")
    if d["structure"] is not None or d["identical"]:
        fail(f"structure/identical: {d['structure']} {d['identical']}")

    # the other way round: the same BatchNorm2d calls added, the folded weights changed back
    back = validated(run(tt, "diff", fused, src, "--json", want=1).stdout, "diff")
    if back["ops"] != [{"op": "nn.BatchNorm2d", "a": 0, "b": len(bns), "delta": len(bns)}]:
        fail(f"reverse ops: {back['ops']}")
    if {x["path"] for x in back["modules"]["added"]} != bns or back["modules"]["removed"]:
        fail(f"reverse modules: {back['modules']}")
    if {x["name"] for x in back["parameters"]["added"]} != want_removed:
        fail("reverse: the BatchNorm parameters are not listed as added")

    # the text form says the same, readably
    t = run(tt, "diff", src, fused, want=1).stdout
    for want in ["nn.BatchNorm2d removed at layer1.0.bn1", "conv1.weight", "layer4.1.bn2.running_var"]:
        if want not in t:
            fail(f"text diff lacks {want!r}:\n{t}")


def case_diff_same(tt, models, work):
    src = model_path(models, "resnet18")
    r = run(tt, "diff", src, src, want=0)
    lines = r.stdout.strip().splitlines()
    if len(lines) != 1 or not lines[0].startswith("identical"):
        fail("identical models: expected one line starting with 'identical'", r)
    # a copy under another name, and the same model through .tir (the IR written by convert)
    os.makedirs(work, exist_ok=True)
    copy = os.path.join(work, "copy.pt")
    shutil.copy(src, copy)
    d = validated(run(tt, "diff", src, copy, "--json", want=0).stdout, "diff")
    if not d["identical"] or d["ops"] or d["parameters"]["changed"]:
        fail(f"copy not identical: {d}")
    run(tt, "convert", src, "--emit", "tir", "-o", os.path.join(work, "tir"), "--name", "same")
    run(tt, "diff", src, os.path.join(work, "tir", "same.tir"), want=0)
    # a different model is different
    run(tt, "diff", src, model_path(models, "nested_seq_bn"), want=1)


def case_diff_kinds(tt, models, work):
    """Each kind of change on its own, made by editing the .tir text of resnet18: a constructor
    argument, the input signature, the wiring (same op counts), and a weight's values."""
    src = model_path(models, "resnet18")
    run(tt, "convert", src, "--emit", "tir", "--input-shape", "1,3,64,64", "-o", work, "--name", "base")
    base_path = os.path.join(work, "base.tir")
    base = open(base_path).read()
    sd = torch.jit.load(src).state_dict()

    def variant(name, old, new):
        if old not in base:
            fail(f"{name}: {old!r} not in {base_path}")
        p = os.path.join(work, name + ".tir")
        with open(p, "w") as f:
            f.write(base.replace(old, new, 1))
        d = validated(run(tt, "diff", base_path, p, "--json", want=1).stdout, "diff")
        s = d["summary"]
        return d, {k for k, v in s.items() if v and k not in ("a_ops", "b_ops")}

    conv = next(line for line in base.splitlines() if "#module=layer1.0.conv1 " in line)
    d, what = variant("attr", conv, conv.replace("stride=[1,1]", "stride=[2,2]"))
    if what != {"modules_changed"} or d["modules"]["changed"] != [{
            "path": "layer1.0.conv1", "a_type": "nn.Conv2d", "b_type": "nn.Conv2d", "a_calls": 1,
            "b_calls": 1, "attrs": [{"name": "stride", "a": "[1,1]", "b": "[2,2]"}]}]:
        fail(f"attr change: {what} {d['modules']}")

    d, what = variant("sig", "graph @base(%x : f32[1,3,64,64])", "graph @base(%x : f32[1,3,32,32])")
    ch = d["signature"]["inputs"]["changed"]
    if what != {"signature_changed"} or len(ch) != 1 or ch[0]["b"]["shape"] != [1, 3, 32, 32]:
        fail(f"signature change: {what} {d['signature']}")

    add = next(line for line in base.splitlines() if "= torch.add(%" in line)
    args = add[add.index("torch.add(") + len("torch.add("):].split(")")[0].split(", ")
    swapped = add.replace(", ".join(args), ", ".join([args[1], args[0]] + args[2:]))
    d, what = variant("wiring", add, swapped)
    if what != {"structure_changed"} or "torch.add" not in d["structure"]["a"]:
        fail(f"wiring change: {what} {d['structure']}")

    # a module whose type changed (the stem's ReLU made a ReLU6): one op type less, one more
    relu = next(line for line in base.splitlines() if line.endswith("#module=relu"))
    d, what = variant("type", relu, relu.replace("nn.ReLU[", "nn.ReLU6["))
    relus = sum(1 for line in base.splitlines() if "= nn.ReLU[" in line)
    if (what != {"ops_added", "ops_removed", "modules_changed"}
            or d["ops"] != [{"op": "nn.ReLU", "a": relus, "b": relus - 1, "delta": -1},
                            {"op": "nn.ReLU6", "a": 0, "b": 1, "delta": 1}]
            or [(c["path"], c["a_type"], c["b_type"]) for c in d["modules"]["changed"]]
            != [("relu", "nn.ReLU", "nn.ReLU6")]):
        fail(f"module type change: {what} {d['ops']} {d['modules']}")

    # a new head (fc: 1000 -> 10 classes): the weights' shapes, fc's out_features and the output
    # signature change, nothing else
    fc = next(line for line in base.splitlines() if line.endswith("#module=fc"))
    n_out = fc.split(" : ")[0].strip()
    head = base.replace(fc, fc.replace("out_features=1000", "out_features=10")
                        .replace("f32[1,1000]", "f32[1,10]"), 1)
    for w, old_t, new_t in [("fc.weight", "f32[1000,512]", "f32[10,512]"), ("fc.bias", "f32[1000]", "f32[10]")]:
        decl = next(line for line in head.splitlines() if line.strip().startswith(w + " :"))
        head = head.replace(decl, decl.split(" : ")[0] + " : " + new_t + " param = random(seed=2)", 1)
        if old_t not in decl:
            fail(f"{w} is not declared as {old_t}: {decl}")
    p = os.path.join(work, "head.tir")
    with open(p, "w") as f:
        f.write(head)
    d = validated(run(tt, "diff", base_path, p, "--json", want=1).stdout, "diff")
    what = {k for k, v in d["summary"].items() if v and k not in ("a_ops", "b_ops")}
    shapes = {c["name"]: (c["a"]["type"], c["b"]["type"]) for c in d["parameters"]["changed"]}
    out_ch = d["signature"]["outputs"]["changed"]
    if (what != {"modules_changed", "parameters_changed", "signature_changed"}
            or shapes != {"fc.weight": ("f32[1000,512]", "f32[10,512]"), "fc.bias": ("f32[1000]", "f32[10]")}
            or [a["name"] for c in d["modules"]["changed"] for a in c["attrs"]] != ["out_features"]
            or len(out_ch) != 1 or out_ch[0]["b"]["shape"] != [1, 10]):
        fail(f"new head ({n_out}): {what} {shapes} {d['modules']['changed']} {out_ch}")

    decl = next(line for line in base.splitlines() if line.strip().startswith("fc.bias :"))
    d, what = variant("value", decl, decl.split(" = ")[0] + " = random(seed=1)")
    ch = d["parameters"]["changed"]
    if what != {"parameters_changed"} or [c["name"] for c in ch] != ["fc.bias"]:
        fail(f"value change: {what} {d['parameters']}")
    # max |delta| against PyTorch: the random(seed=1) values as tinytrace writes them to .pth
    run(tt, "convert", os.path.join(work, "value.tir"), "--emit", "weights", "-o",
        os.path.join(work, "value_out"), "--name", "value")
    b = torch.load(os.path.join(work, "value_out", "value.pth"))["fc.bias"].double()
    want = (b - sd["fc.bias"].double()).abs().max().item()
    if want == 0 or abs(ch[0]["max_abs_delta"] - want) > 1e-6 * max(1.0, want):
        fail(f"fc.bias max |delta| {ch[0]['max_abs_delta']}, PyTorch says {want}")


def case_inspect(tt, models, work):
    for name in ["resnet18", "custom_param", "nested_seq_bn", "unknown_op"]:
        src = model_path(models, name)
        d = validated(run(tt, "inspect", src, "--json").stdout, "inspect")
        m = torch.jit.load(src)
        want = sum(p.numel() for p in m.parameters())
        if d["summary"]["parameter_count"] != want:
            fail(f"{name}: parameter_count {d['summary']['parameter_count']}, PyTorch says {want}")
        bytes_ = sum(t.numel() * t.element_size() for t in m.state_dict().values())
        if d["summary"]["weight_bytes"] != bytes_:
            fail(f"{name}: weight_bytes {d['summary']['weight_bytes']}, state_dict has {bytes_}")
        # every module that owns parameters is in the tree with its own count
        tree = {x["path"]: x for x in d["modules"]}
        for path, mod in m.named_modules():
            n = sum(p.numel() for p in mod.parameters())
            if n == 0:
                continue
            if path not in tree:
                fail(f"{name}: module {path!r} ({n} parameters) missing from the module tree")
            if tree[path]["parameter_count"] != n:
                fail(f"{name}: module {path!r}: {tree[path]['parameter_count']} parameters, PyTorch {n}")
        if name == "unknown_op" and not d["aten_fallbacks"]:
            fail("unknown_op: no aten fallback listed")
        if name == "unknown_op" and not any(x["severity"] == "warning" and x["code"] == "aten-fallback"
                                            for x in d["diagnostics"]):
            fail(f"unknown_op: the aten fallback warning is not listed: {d['diagnostics']}")
        if name == "resnet18":
            # every module call of the eager torchvision model (forward hooks), per module type,
            # and its functional ops (the residual adds, the flatten before fc)
            import torchvision
            eager = torchvision.models.resnet18().eval()
            calls = {}
            for mod in eager.modules():
                if not list(mod.children()):
                    mod.register_forward_hook(lambda mm, i, o: calls.__setitem__(
                        "nn." + type(mm).__name__, calls.get("nn." + type(mm).__name__, 0) + 1))
            with torch.no_grad():
                eager(torch.randn(1, 3, 64, 64))
            blocks = sum(isinstance(mm, torchvision.models.resnet.BasicBlock) for mm in eager.modules())
            calls.update({"torch.add": blocks, "torch.flatten": 1})  # out += identity; flatten before fc
            hist = {k: v for k, v in d["op_histogram"].items() if not k.startswith("prim.")}
            if hist != calls:
                fail(f"op histogram {hist}, PyTorch's forward hooks say {calls}")
    src = model_path(models, "resnet18")
    d = json.loads(run(tt, "inspect", src, "--json", "--input-shape", "1,3,64,64").stdout)
    if d["inputs"][0]["shape"] != [1, 3, 64, 64] or d["outputs"][0]["shape"] != [1, 1000]:
        fail(f"shapes: {d['inputs']} {d['outputs']}")
    t = run(tt, "inspect", src).stdout
    for want in ["parameters  11,689,512", "layer1", "nn.Conv2d", "aten fallbacks"]:
        if want not in t:
            fail(f"text inspect lacks {want!r}:\n{t}")


def case_profile(tt, models, work):
    src = model_path(models, "resnet18")
    d = validated(run(tt, "profile", src, "--input-shape", "1,3,64,64", "--runs", "5",
                       "--warmup", "1", "--top", "5", "--json").stdout, "profile")
    whole = d["interpreter"]["mean_ms"]
    node_sum = d["interpreter"]["node_sum_ms"]
    s = sum(n["mean_ms"] for n in d["nodes"])
    if abs(s - node_sum) > 1e-6 * max(1.0, s):
        fail(f"nodes sum {s} != node_sum_ms {node_sum}")
    if not (0.75 * whole <= node_sum <= 1.25 * whole):
        fail(f"per-node times sum to {node_sum} ms, whole run {whole} ms: not within 25%")
    if d["torchscript"] is None or d["torchscript"]["mean_ms"] <= 0:
        fail(f"no torchscript reference time: {d['torchscript']}")
    if len(d["top"]) != 5 or [n["mean_ms"] for n in d["top"]] != sorted(
            [n["mean_ms"] for n in d["top"]], reverse=True):
        fail(f"top: {d['top']}")
    share = sum(o["share"] for o in d["op_types"])
    if abs(share - 1) > 1e-6:
        fail(f"op type shares sum to {share}")
    convs = [o for o in d["op_types"] if o["op"] == "nn.Conv2d"]
    if not convs or convs[0]["nodes"] != 20:
        fail(f"op types: {d['op_types'][:5]}")
    t = run(tt, "profile", src, "--input-shape", "1,3,64,64", "--runs", "2").stdout
    for want in ["interpreter", "torchscript", "nn.Conv2d", "top 10 nodes"]:
        if want not in t:
            fail(f"text profile lacks {want!r}:\n{t}")


def case_dot(tt, models, work):
    if not shutil.which("dot"):
        print("graphviz 'dot' not installed", file=sys.stderr)
        sys.exit(77)
    src = model_path(models, "resnet18")
    out = os.path.join(work, "conv")
    run(tt, "convert", src, "--emit", "dot,report", "--input-shape", "1,3,224,224", "-o", out)
    dot = os.path.join(out, "resnet18.dot")
    listed = {os.path.basename(p) for p in json.load(open(os.path.join(out, "resnet18.json")))["outputs"]}
    if not {"resnet18.dot", "resnet18.svg"} <= listed:
        fail(f"the report's outputs lack the picture: {listed}")
    text = open(dot).read()
    for want in ['label="layer1"', 'label="layer1.0"', 'label="f32[1,64,56,56]"', "nn.Conv2d"]:
        if want not in text:
            fail(f"{dot} lacks {want}")
    # the layer1.0 cluster is nested inside the layer1 cluster
    i1, i10 = text.index('label="layer1";'), text.index('label="layer1.0";')
    if not (i1 < i10 and text.count("{", i1, i10) > text.count("}", i1, i10)):
        fail("layer1.0 is not nested in layer1")
    r = subprocess.run(["dot", "-Tsvg", dot, "-o", os.path.join(work, "check.svg")],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"dot -Tsvg failed: {r.stderr}")
    if not open(os.path.join(out, "resnet18.svg")).read().lstrip().startswith("<?xml"):
        fail("resnet18.svg is not SVG")
    # a Graphviz that fails costs the .svg, not the conversion: a warning, the .dot, and a report
    # that lists only what was written
    fakebin = os.path.join(work, "fakebin")
    os.makedirs(fakebin)
    with open(os.path.join(fakebin, "dot"), "w") as f:
        f.write("#!/bin/sh\nexit 1\n")
    os.chmod(os.path.join(fakebin, "dot"), 0o755)
    out2 = os.path.join(work, "broken_dot")
    r = subprocess.run([tt, "convert", src, "--emit", "dot,report", "-o", out2],
                       capture_output=True, text=True,
                       env={**os.environ, "PATH": fakebin + os.pathsep + os.environ["PATH"]})
    if r.returncode != 0 or "no .svg written" not in r.stderr:
        fail("a failing 'dot' must only cost the .svg (exit 0 and a warning)", r)
    listed = {os.path.basename(p) for p in json.load(open(os.path.join(out2, "resnet18.json")))["outputs"]}
    if listed != {"resnet18.dot", "resnet18.json"} or sorted(os.listdir(out2)) != sorted(listed):
        fail(f"broken dot: report lists {listed}, directory holds {os.listdir(out2)}")
    # inspect --dot, on a model with control flow-free custom modules
    small = model_path(models, "nested_seq_bn")
    d2 = os.path.join(work, "inspect", "n.dot")
    os.makedirs(os.path.dirname(d2), exist_ok=True)
    run(tt, "inspect", small, "--dot", d2)
    r = subprocess.run(["dot", "-Tsvg", d2], capture_output=True, text=True)
    if r.returncode != 0 or not os.path.exists(d2[:-4] + ".svg"):
        fail(f"inspect --dot: {r.stderr}")


# (args, expected exit code, text the error line must contain); {m} = a valid model,
# {bad} = random bytes, {missing} = a path that does not exist
BAD = [
    (["inspect", "{missing}"], 3, "{missing}"),
    (["inspect", "{bad}"], 3, "{bad}"),
    (["inspect", "{m}", "--input-shape", "1,x"], 2, "1,x"),
    (["inspect", "{m}", "--input-shape", "1,3,8,8", "--input-shape", "1,3,8,8"], 2, "--input-shape"),
    (["inspect"], 2, "MODEL"),
    (["diff", "{m}"], 2, "B"),
    (["diff", "{m}", "{missing}"], 3, "{missing}"),
    (["diff", "{bad}", "{m}"], 3, "{bad}"),
    (["profile", "{m}"], 2, "--input-shape"),
    (["profile", "{m}", "--input-shape", "1,3,8,8", "--runs", "0"], 2, "--runs"),
    (["profile", "{missing}", "--input-shape", "1,3,8,8"], 3, "{missing}"),
    (["profile", "{m}", "--input-shape", "1,3,8,8", "--input-shape", "2,2"], 2, "input"),
    # inputs that do not fit the model: the original model says so, a usage error
    (["profile", "{m}", "--input-shape", "1,3,8"], 2, "--input-shape"),
    (["profile", "{m}", "--input-shape", "1,3,8,8", "--top", "0"], 2, "--top"),
    (["convert", "{m}", "--emit", "dott", "-o", "{work}/o"], 2, "dot"),
]


def case_bad_input(tt, models, work):
    os.makedirs(work, exist_ok=True)
    subst = {"m": model_path(models, "resnet18"), "bad": os.path.join(work, "random.pt"),
             "missing": os.path.join(work, "does_not_exist.pt"), "work": work}
    with open(subst["bad"], "wb") as f:
        f.write(os.urandom(4096))
    for args, code, hint in BAD:
        args = [a.format(**subst) for a in args]
        hint = hint.format(**subst)
        r = run(tt, *args, want=code)
        lines = r.stderr.strip().splitlines()
        if len(lines) < 1 or not lines[0].startswith("error: ") or any(
                not x.startswith("note: ") for x in lines[1:]):
            fail(f"{args}: expected one 'error:' line", r)
        if hint not in lines[0]:
            fail(f"{args}: error line lacks {hint!r}", r)
        if r.stdout:
            fail(f"{args}: stdout not empty", r)
    if os.path.exists(os.path.join(work, "o")):
        fail("a failed convert left its output directory behind")


CASES = {"diff_fused_resnet18": case_diff_fused, "diff_identical": case_diff_same,
         "diff_kinds": case_diff_kinds,
         "inspect": case_inspect, "profile": case_profile, "dot": case_dot,
         "bad_input": case_bad_input}


def main():
    if sys.argv[1:] == ["--list"]:
        print("\n".join(CASES))
        return 0
    if len(sys.argv) != 5 or sys.argv[4] not in CASES:
        fail(f"usage: check_tools.py TINYTRACE TESTMODELS_DIR WORK_DIR CASE ({', '.join(CASES)})")
    tt, models, work, case = sys.argv[1:]
    work = os.path.abspath(os.path.join(work, case))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    CASES[case](os.path.abspath(tt), os.path.abspath(models), work)
    print(f"ok: {case}")
    return passed(work)


if __name__ == "__main__":
    sys.exit(main())
