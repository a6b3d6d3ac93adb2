// torch.export archives (.pt2) as in-memory TorchScript modules (JIT headers: include only from
// lib/loaders/).
#pragma once

#include "ir/ir.h"
#include "support/diag.h"

#include <torch/csrc/jit/api/module.h>

#include <map>
#include <string>

namespace tt {

// The exported program of a torch.export archive (torch 2.6's torch.export.save) as the module
// torch.jit.trace would have given for it, in eval mode (Note [Exported programs as traced
// modules] in export/builder.h): what load_export lifts, and what --verify and `profile` run as
// the original. Warnings go to `diags` when given. Throws tt::Error (BadInput: not a readable
// archive; Unsupported: another archive layout, or an op/construct without a TorchScript form).
// `modules`, when given, receives the module table the archive's call stacks give (Note [Module
// table] in lib/ir/ir.h).
torch::jit::Module export_to_module(const std::string& path, Diagnostics* diags = nullptr,
                                    std::map<std::string, ModuleInfo>* modules = nullptr);

}  // namespace tt
