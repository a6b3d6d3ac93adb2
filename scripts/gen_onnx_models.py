#!/usr/bin/python3
"""Exports the ONNX models the ONNX end-to-end tests convert (issue 7).

Run with Debian's /usr/bin/python3. The models are built and randomised exactly as
scripts/gen_models.py does (its registry and randomize_ are imported, not copied), then exported
with torch.onnx.export. For each NAME it writes, in --out:

  NAME.onnx         the exported model
  NAME.inputs.pt    torch.save of the example input tuple
  NAME.expected.pt  torch.save of the eager model's outputs on those inputs
  NAME.json         the same sidecar gen_models.py writes, plus "skip_state_dict": the converted
                    model's state_dict keys are the ONNX initializer names, so the check that the
                    original state_dict loads strictly does not apply

and into --out/badinput/ the malformed ONNX files (text, truncated, wrong protobuf message).
--list prints "name kind" per case: kind "e2e" (convert + check), "unsupported" (must exit 4
naming the op), "badinput", or "parity" (an e2e case that also has NAME.ts.pt, the TorchScript
trace of the same model, for the --fuse structure comparison).
"""
import argparse
import hashlib
import json
import os
import sys
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_models as gm  # noqa: E402

EVAL = torch.onnx.TrainingMode.EVAL
# PRESERVE on an eval() model keeps BatchNormalization nodes (EVAL folds them into the convs), so
# both forms are covered.
PRESERVE = torch.onnx.TrainingMode.PRESERVE

# name -> (gen_models spec, opset, training mode, kind)
CASES = {
    "resnet18_op13": ("resnet18", 13, PRESERVE, "e2e"),
    "resnet18_op11": ("resnet18", 11, EVAL, "e2e"),
    "mobilenet_v2_op13": ("mobilenet_v2", 13, EVAL, "e2e"),
    "mobilenet_v3_large_op13": ("mobilenet_v3_large", 13, PRESERVE, "e2e"),
    "mobilenet_v3_large_op17": ("mobilenet_v3_large", 17, EVAL, "e2e"),
    "efficientnet_b0_op13": ("efficientnet_b0", 13, EVAL, "e2e"),
    "squeezenet1_1_op13": ("squeezenet1_1", 13, EVAL, "e2e"),
    "shufflenet_v2_x1_0_op13": ("shufflenet_v2_x1_0", 13, PRESERVE, "e2e"),
    "functional_acts_op13": ("functional_acts", 13, EVAL, "e2e"),
    "functional_acts_op17": ("functional_acts", 17, EVAL, "e2e"),
    "two_inputs_add_op13": ("two_inputs_add", 13, EVAL, "e2e"),
    "nested_seq_bn_op13": ("nested_seq_bn", 13, PRESERVE, "e2e"),
    "tuple_out_op13": ("tuple_out", 13, EVAL, "e2e"),
    "upsample_shuffle_pad_op11": ("upsample_shuffle_pad", 11, EVAL, "e2e"),
    "conv_groups_op9": ("conv_groups", 9, EVAL, "e2e"),
    "leaf_modules_op13": ("leaf_modules", 13, PRESERVE, "e2e"),
    "norms_op17": ("norms", 17, EVAL, "e2e"),
    "lstm_op13": ("lstm", 13, EVAL, "unsupported"),
}
BAD = ["text", "truncated", "wrong_message"]
# Cases whose `--fuse` structure is compared with the TorchScript trace of the same model
# (tests/e2e/onnx_fuse_parity.py): they also get NAME.ts.pt.
PARITY = ["resnet18_op13", "mobilenet_v2_op13", "mobilenet_v3_large_op13", "nested_seq_bn_op13"]


def stamp():
    h = hashlib.sha256()
    for f in (__file__, gm.__file__):
        with open(os.path.abspath(f), "rb") as fh:
            h.update(fh.read())
    return f"{h.hexdigest()[:16]}-torch{torch.__version__}"


def is_current(out_dir, name, st):
    try:
        with open(os.path.join(out_dir, name + ".json")) as f:
            if json.load(f).get("generator") != st:
                return False
    except (OSError, ValueError):
        return False
    exts = [".onnx", ".inputs.pt", ".expected.pt"] + ([".ts.pt"] if name in PARITY else [])
    return all(os.path.exists(os.path.join(out_dir, name + ext)) for ext in exts)


def export(name, out_dir, st):
    spec_name, opset, training, kind = CASES[name]
    spec = gm.SPECS[spec_name]
    torch.manual_seed(gm.SEED)
    gen = torch.Generator().manual_seed(gm.SEED + 1)
    model = spec.build()
    model.eval()
    gm.randomize_(model, spec, gen)
    model.eval()
    inputs = gm.make_inputs(spec, gen)
    base = os.path.join(out_dir, name)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = model(*inputs)
        gm.atomic_write(base + ".onnx", lambda p: torch.onnx.export(
            model, inputs, p, opset_version=opset, training=training,
            input_names=[f"x{i}" if len(inputs) > 1 else "x" for i in range(len(inputs))]))
        if name in PARITY:
            traced = torch.jit.trace(model, inputs, check_trace=False)
            gm.atomic_write(base + ".ts.pt", lambda p: traced.save(p))
    exp_flat = gm.flatten(expected)
    gm.atomic_write(base + ".inputs.pt", lambda p: torch.save(inputs, p))
    gm.atomic_write(base + ".expected.pt", lambda p: torch.save(expected, p))
    meta = {
        "name": name,
        "group": "onnx",
        "kind": kind,
        "source_model": spec_name,
        "opset": opset,
        "generator": st,
        "inputs": [{"shape": list(s), "dtype": d} for s, d, _ in spec.inputs],
        "input_shape_args": [gm.shape_arg(s, d) for s, d, _ in spec.inputs],
        "outputs": [{"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
                    for t in exp_flat],
        "tolerance": spec.tol,
        "expect_warnings": [],
        "skip_state_dict": True,
    }

    def write_meta(p):
        with open(p, "w") as f:
            json.dump(meta, f, indent=1)
            f.write("\n")
    gm.atomic_write(base + ".json", write_meta)


def write_bad(out_dir, st):
    bad = os.path.join(out_dir, "badinput")
    os.makedirs(bad, exist_ok=True)
    # A valid export to cut short.
    src = os.path.join(out_dir, "two_inputs_add_op13.onnx")
    if not os.path.exists(src):
        export("two_inputs_add_op13", out_dir, st)
    data = open(src, "rb").read()

    def put(name, b):
        gm.atomic_write(os.path.join(bad, name), lambda p: open(p, "wb").write(b))
    put("text.onnx", b'ir_version: 7\nproducer_name: "pytorch"\ngraph {\n  name: "g"\n}\n')
    put("truncated.onnx", data[: len(data) * 3 // 5])
    # A serialized onnx.TensorProto (dims=[3], data_type=FLOAT, raw_data), not a ModelProto: it
    # starts with the same varint tag as a model.
    raw = torch.tensor([1.0, 2.0, 3.0]).numpy().tobytes()
    put("wrong_message.onnx", b"\x08\x03\x10\x01\x4a" + bytes([len(raw)]) + raw)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out")
    ap.add_argument("--only", help="comma-separated case names")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()
    if args.list:
        for name, (_, _, _, kind) in CASES.items():
            print(name, kind)
        for name in PARITY:
            print(name, "parity")
        for name in BAD:
            print(name, "badinput")
        return 0
    if not args.out:
        ap.error("--out DIR is required")
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(max(1, int(os.environ.get("TT_GEN_THREADS", torch.get_num_threads()))))
    st = stamp()
    names = [n.strip() for n in args.only.split(",")] if args.only else list(CASES)
    failed = []
    for name in names:
        if name not in CASES:
            ap.error(f"unknown case '{name}' (see --list)")
        if not args.force and is_current(args.out, name, st):
            print(f"{name}: cached")
            continue
        try:
            export(name, args.out, st)
            print(f"{name}: exported")
        except Exception as e:
            print(f"error: {name}: {type(e).__name__}: {e}", file=sys.stderr)
            failed.append(name)
    write_bad(args.out, st)
    if failed:
        print(f"error: export failed for: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
