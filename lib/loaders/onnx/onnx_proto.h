// The ONNX protobuf classes, for the files of lib/loaders/onnx/ only (include it first).
//
// The build links Debian's onnx/onnx_proto by file, not by target (CMakeLists.txt), so ONNX's
// compile definitions stay off every other TU and out of the precompiled header; these files
// define what Debian's ONNXTargets.cmake asks for themselves, here, before the ONNX headers.
// Debian's libonnx_proto is the very shared library LibTorch links, so there is one copy of the
// generated descriptors (no double registration).
//
// TT_HAVE_ONNX is 0 when the ONNX headers are missing: every file of the folder then compiles to
// nothing and load_onnx (lib/loaders/onnx.cpp) says ONNX support was not built.
#pragma once

#if __has_include(<onnx/onnx_pb.h>)
#define TT_HAVE_ONNX 1
#ifndef ONNX_NAMESPACE
#define ONNX_NAMESPACE onnx
#endif
#ifndef ONNX_ML
#define ONNX_ML 1
#endif
#include <onnx/onnx_pb.h>
#else
#define TT_HAVE_ONNX 0
#endif
