"""Turning what the caller passes (a live module, a ScriptModule, a path) into a model file the
CLI reads, and example inputs into --input-shape / --verify-inputs arguments."""
import os
import re

import torch

from .errors import TraceError

# --input-shape's dtype names (lib/ir/input_spec.cpp) for the dtypes it accepts.
SPEC_DTYPES = {
    torch.float32: "float32", torch.float64: "float64", torch.float16: "float16",
    torch.bfloat16: "bfloat16", torch.int64: "int64", torch.int32: "int32",
    torch.int16: "int16", torch.int8: "int8", torch.uint8: "uint8", torch.bool: "bool",
}


def as_tuple(example_inputs):
    """The example inputs as the tuple torch.jit.trace takes: None -> (), x -> (x,).

    >>> as_tuple(None), len(as_tuple(torch.zeros(1))), len(as_tuple([torch.zeros(1)] * 2))
    ((), 1, 2)
    """
    if example_inputs is None:
        return ()
    if isinstance(example_inputs, (tuple, list)):
        return tuple(example_inputs)
    return (example_inputs,)


def input_shape_args(inputs):
    """``--input-shape`` arguments, one per input; [] when some input has no such spelling (not a
    tensor, 0-d, a dtype --input-shape lacks): then the CLI reads what it can from the model.

    >>> input_shape_args((torch.zeros(1, 3, 8, 8), torch.zeros(2, 5, dtype=torch.int64)))
    ['--input-shape', '1,3,8,8:float32', '--input-shape', '2,5:int64']
    >>> input_shape_args((torch.zeros(()),))
    []
    """
    args = []
    for x in inputs:
        if not isinstance(x, torch.Tensor) or x.dim() == 0 or x.dtype not in SPEC_DTYPES:
            return []
        args += ["--input-shape", ",".join(str(d) for d in x.shape) + ":" + SPEC_DTYPES[x.dtype]]
    return args


def snake_case(name):
    """A class name as a file stem the CLI turns back into the same CamelCase class.

    >>> snake_case("AlexNet"), snake_case("MobileNetV2"), snake_case("ResNet")
    ('alex_net', 'mobile_net_v2', 'res_net')
    """
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name)
    s = re.sub(r"\W", "_", s).lower()
    return s or "model"


def is_path(model):
    return isinstance(model, (str, os.PathLike))


def label(model):
    """What error messages call a model that was staged as a temporary file: its class.

    >>> label(torch.nn.ReLU()), label(torch.jit.script(torch.nn.ReLU())), label("m.pt")
    ('ReLU', 'ReLU', None)
    """
    if is_path(model):
        return None
    if isinstance(model, torch.jit.ScriptModule):
        return model.original_name
    return type(model).__name__


def _check_cpu(model, inputs):
    """tinytrace runs on the CPU; a CUDA archive would not load there."""
    tensors = list(model.parameters()) + list(model.buffers())
    tensors += [x for x in inputs if isinstance(x, torch.Tensor)]
    if any(t.device.type != "cpu" for t in tensors):
        raise ValueError("tinytrace converts CPU models: move the model and the example inputs "
                         "to the CPU first (model.cpu(), x.cpu())")


def save_model(model, inputs, directory, script=False):
    """Writes ``model`` into ``directory`` as the file the CLI reads and returns its path (a path
    is returned as it is). A live module is traced (or scripted), and a ScriptModule saved, in
    eval mode; the train/eval flag of each submodule is restored afterwards, also on failure."""
    if is_path(model):
        return os.fspath(model)
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be an nn.Module, a ScriptModule or a path, not "
                        f"{type(model).__name__}")
    _check_cpu(model, inputs)
    live = not isinstance(model, torch.jit.ScriptModule)
    if live and not script and not inputs:
        raise ValueError("example_inputs are needed to trace a live module "
                         "(or pass script=True to script it)")
    path = os.path.join(directory, snake_case(label(model)) + ".pt")
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        (_to_torchscript(model, inputs, script) if live else model).save(path)
    finally:
        for m, training in modes:
            m.training = training
    return path


def _to_torchscript(model, inputs, script):
    """torch.jit.trace (strict=False: models returning dicts or lists trace too) or
    torch.jit.script; a failure is a TraceError."""
    try:
        return torch.jit.script(model) if script else torch.jit.trace(model, inputs, strict=False)
    except Exception as e:
        how = "torch.jit.script" if script else "torch.jit.trace"
        hint = ("fix what TorchScript reports, or trace instead (script=False)" if script else
                "trace works on tensors, tuples, lists and dicts of tensors; for "
                "data-dependent control flow pass script=True")
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise TraceError(f"error: {label(model)}: {how} failed: {first} — {hint}") from e


def save_inputs(inputs, directory):
    """The example inputs as --verify-inputs reads them (a tuple saved with torch.save)."""
    path = os.path.join(directory, "example_inputs.pt")
    torch.save(tuple(inputs), path)
    return path
