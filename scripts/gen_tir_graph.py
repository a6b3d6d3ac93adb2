#!/usr/bin/env python3
"""gen_tir_graph.py: writes a synthetic .tir graph of about N nodes for scripts/bench_passes.sh.

The graph is a chain of residual blocks, each
    conv -> bn -> relu -> conv -> bn -> add(residual) -> dropout
followed by the shape arithmetic tracing leaves behind (size -> NumToTensor -> int ->
ListConstruct -> reshape), so every pass of the --fuse pipeline has work in every block: no-ops
to remove, constants to fold, BatchNorms to fold, dead nodes to drop. Every 8th block also
branches into a side path (conv -> bn) joined by a second add, and every 16th block's conv output
is used twice, so its BN must stay. Weights are declarations only with small shapes (4 channels,
1x1 kernels), so parsing stays cheap.

With --fanout, writes instead NODES identical dead nodes that all read the same two values
(`%a_i = torch.add(%x, %x, %one_b)` with a duplicate constant): cse then merges the constant
(rewiring NODES uses) and every add, and dce would delete them — the case where removing a use
from a long use list must not cost a walk over the list.

Usage: gen_tir_graph.py [--fanout] NODES OUT.tir
"""

import sys

C = 4
CONV_ATTRS = (f"in_channels={C}, out_channels={C}, kernel_size=[1,1], stride=[1,1], padding=[0,0], "
              f"dilation=[1,1], groups=1, bias=false, padding_mode=\"zeros\"")
BN_ATTRS = f"num_features={C}, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true"
T = f"f32[1,{C},8,8]"


def conv_bn(lines, weights, x, name, scope):
    lines.append(f"  %{name}_c : {T} = nn.Conv2d[{CONV_ATTRS}](%{x}) @weight={name}.conv.weight "
                 f"#module={name}.conv #scope={scope}")
    weights.append(f"  {name}.conv.weight : f32[{C},{C},1,1] param")
    bn_refs = " ".join(f"@{k}={name}.bn.{k}" for k in
                       ("weight", "bias", "running_mean", "running_var", "num_batches_tracked"))
    lines.append(f"  %{name}_b : {T} = nn.BatchNorm2d[{BN_ATTRS}](%{name}_c) {bn_refs} "
                 f"#module={name}.bn #scope={scope}")
    for k, kind in (("weight", "param"), ("bias", "param"), ("running_mean", "buffer"),
                    ("running_var", "buffer")):
        weights.append(f"  {name}.bn.{k} : f32[{C}] {kind}")
    weights.append(f"  {name}.bn.num_batches_tracked : i64[] buffer")
    return f"{name}_b"


def block(lines, weights, x, i):
    s = f"layer{i}"
    a = conv_bn(lines, weights, x, f"l{i}a", s)
    lines.append(f"  %l{i}_r : {T} = F.relu(%{a}) #scope={s}")
    b = conv_bn(lines, weights, f"l{i}_r", f"l{i}b", s)
    lines.append(f"  %l{i}_one : int = prim.Constant[value=1]() #scope={s}")
    out = f"l{i}_s"
    lines.append(f"  %{out} : {T} = torch.add(%{b}, %{x}, %l{i}_one) #scope={s}")
    if i % 8 == 0:
        side = conv_bn(lines, weights, x, f"l{i}side", s)
        lines.append(f"  %l{i}_s2 : {T} = torch.add(%{out}, %{side}, %l{i}_one) #scope={s}")
        out = f"l{i}_s2"
    if i % 16 == 0:
        # A conv whose output is also used by the add: its BN cannot fold.
        lines.append(f"  %l{i}_keep : {T} = torch.add(%{out}, %l{i}a_c, %l{i}_one) #scope={s}")
        out = f"l{i}_keep"
    lines.append(f"  %l{i}_d : {T} = nn.Dropout[p=0.1, inplace=false](%{out}) #module={s}.drop "
                 f"#scope={s}")
    lines.append(f"  %l{i}_zero : int = prim.Constant[value=0]() #scope={s}")
    lines.append(f"  %l{i}_n : int = Tensor.size(%l{i}_d, %l{i}_zero) #scope={s}")
    lines.append(f"  %l{i}_t : Tensor = prim.NumToTensor(%l{i}_n) #scope={s}")
    lines.append(f"  %l{i}_i : int = int(%l{i}_t) #scope={s}")
    lines.append(f"  %l{i}_m1 : int = prim.Constant[value=-1]() #scope={s}")
    lines.append(f"  %l{i}_l : List[int] = prim.ListConstruct(%l{i}_i, %l{i}_m1) #scope={s}")
    # Reshape to [1, -1] and back: a real reshape, not a no-op, so it stays.
    lines.append(f"  %l{i}_v : Tensor = Tensor.reshape(%l{i}_d, %l{i}_l) #scope={s}")
    lines.append(f"  %l{i}_sh : List[int] = prim.Constant[value=[1,{C},8,8]]() #scope={s}")
    lines.append(f"  %l{i}_o : {T} = Tensor.reshape(%l{i}_v, %l{i}_sh) #scope={s}")
    return f"l{i}_o"


def fanout(n, path):
    with open(path, "w", encoding="utf-8") as f:
        f.write("graph @fanout(%x : f32[2]) {\n  %one : int = prim.Constant[value=1]()\n"
                "  %one_b : int = prim.Constant[value=1]()\n")
        for i in range(n):
            f.write(f"  %a{i} : f32[2] = torch.add(%x, %x, %one_b)\n")
        f.write("  return %x\n}\n")
    print(f"{path}: {n + 2} nodes, 0 weights, fan-out {2 * n}")
    return 0


def main():
    args = sys.argv[1:]
    if args and args[0] == "--fanout":
        return fanout(int(args[1]), args[2]) if len(args) == 3 else main_usage()
    if len(args) != 2:
        return main_usage()
    target = int(sys.argv[1])
    lines, weights = [], []
    x = "x"
    i = 0
    while len(lines) < target:
        x = block(lines, weights, x, i)
        i += 1
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write(f"graph @bench(%x : {T}) {{\n")
        f.write("\n".join(lines))
        f.write(f"\n  return %{x}\n}}\nweights {{\n")
        f.write("\n".join(weights))
        f.write("\n}\n")
    print(f"{sys.argv[2]}: {len(lines)} nodes, {len(weights)} weights, {i} blocks")
    return 0


def main_usage():
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
