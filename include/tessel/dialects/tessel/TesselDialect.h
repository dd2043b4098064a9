//===- TesselDialect.h - tessel dialect, enums, attributes ------*- C++ -*-===//

#ifndef TESSEL_DIALECTS_TESSEL_TESSELDIALECT_H
#define TESSEL_DIALECTS_TESSEL_TESSELDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpImplementation.h"

#include "tessel/dialects/tessel/TesselDialect.h.inc"
#include "tessel/dialects/tessel/TesselEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tessel/dialects/tessel/TesselAttrs.h.inc"

#endif // TESSEL_DIALECTS_TESSEL_TESSELDIALECT_H
