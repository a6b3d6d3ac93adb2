// Python helper definitions of module ops (Note [Python helper definitions]), the Python
// emitter's counterpart of the op table's signatures (lib/ir/op_python.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tt {

// Note [Python helper definitions]
// A module op whose eager class does not load what NAME.pth (a dict of tensors, read with
// torch.load's weights_only) can hold is written as a small subclass that NAME.py defines before
// the model's classes: nnqd.LSTM / nnqd.GRU keep packed CellParamsBase objects in their
// state_dict, which their helpers DynamicQuantizedLSTM / GRU replace by the plain tensors under
// nn.LSTM's names (Note [Dynamic quantized LSTM and GRU] in the TorchScript lifter). A helper
// names the definitions it uses (module-level functions shared by several helpers), which the
// file defines first. The interpreter and the TorchScript emitter do not use helpers.
struct PyHelper {
  std::string name;               // the class or function NAME.py defines
  std::vector<std::string> uses;  // helpers its definition uses
  std::string source;             // its definition, lines without indentation at the top level
};
// The helper class module op `op` is written with; nullptr for the module's own class.
const PyHelper* python_helper_for(std::string_view op);
// The helper named `name` (a class or a definition another helper uses); nullptr when unknown.
const PyHelper* python_helper(std::string_view name);

}  // namespace tt
