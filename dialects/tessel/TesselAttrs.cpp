//===- TesselAttrs.cpp - sharding attributes ------------------------------===//
//
// Syntax (JAX/Shardy users will recognise it):
//   #tessel.sharding<@mesh, [{"dp"}, {"tp", ?}p1, {}]>
// Each `{...}` lists the axes of one dimension, major to minor; `?` marks the
// dimension open; `pN` gives it priority N. A sub-axis is written
// `"a":(k)m` (tessel/support/Mesh.h) and kept as the axis name "a:(k)m".
//
//===----------------------------------------------------------------------===//

#include "tessel/dialects/tessel/TesselDialect.h"
#include "tessel/support/Mesh.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tessel;

#define GET_ATTRDEF_CLASSES
#include "tessel/dialects/tessel/TesselAttrs.cpp.inc"

void TesselDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tessel/dialects/tessel/TesselAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// DimShardingAttr
//===----------------------------------------------------------------------===//

LogicalResult
DimShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        ArrayRef<StringAttr> axes, bool isOpen,
                        std::optional<int64_t> priority) {
  if (priority && *priority < 0)
    return emitError() << "sharding priority must be p0 or above, got p"
                       << *priority;
  for (StringAttr axis : axes) {
    if (!axis || axis.getValue().empty())
      return emitError() << "sharding axis names must not be empty";
    std::optional<::tessel::AxisRef> ref =
        ::tessel::AxisRef::parse(axis.getValue());
    if (!ref || !::tessel::isValidAxisName(ref->name))
      return emitError() << "sharding axis \"" << axis.getValue()
                         << "\" is neither an axis name nor a sub-axis "
                         << "\"a\":(k)m with k >= 1 and m >= 2";
  }
  return success();
}

void DimShardingAttr::printBody(AsmPrinter &printer) const {
  printer << '{';
  llvm::interleaveComma(getAxes(), printer, [&](StringAttr axis) {
    std::optional<::tessel::AxisRef> ref =
        ::tessel::AxisRef::parse(axis.getValue());
    if (!ref || ref->isWhole()) {
      printer << axis;
      return;
    }
    printer << StringAttr::get(axis.getContext(), ref->name) << ":(" << ref->pre
            << ")" << ref->size;
  });
  if (getIsOpen())
    printer << (getAxes().empty() ? "?" : ", ?");
  printer << '}';
  if (std::optional<int64_t> priority = getPriority())
    printer << 'p' << *priority;
}

DimShardingAttr DimShardingAttr::parseBody(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<StringAttr> axes;
  bool isOpen = false;
  if (parser.parseLBrace())
    return {};
  if (failed(parser.parseOptionalRBrace())) {
    do {
      if (succeeded(parser.parseOptionalQuestion())) {
        isOpen = true;
        break; // `?` must come last.
      }
      std::string name;
      if (parser.parseString(&name))
        return {};
      // A sub-axis: "a":(k)m.
      int64_t pre, size;
      if (succeeded(parser.parseOptionalColon())) {
        if (parser.parseLParen() || parser.parseInteger(pre) ||
            parser.parseRParen() || parser.parseInteger(size))
          return {};
        name = ::tessel::AxisRef::subAxis(name, pre, size);
      }
      axes.push_back(parser.getBuilder().getStringAttr(name));
    } while (succeeded(parser.parseOptionalComma()));
    if (parser.parseRBrace())
      return {};
  }
  // An optional priority `pN` written right after the brace.
  std::optional<int64_t> priority;
  StringRef keyword;
  SMLoc priorityLoc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalKeyword(&keyword))) {
    int64_t value;
    if (!keyword.consume_front("p") || keyword.getAsInteger(10, value)) {
      parser.emitError(priorityLoc)
          << "expected a priority like 'p0' after a dimension sharding";
      return {};
    }
    priority = value;
  }
  return DimShardingAttr::getChecked(
      [&] { return parser.emitError(loc); }, parser.getContext(), axes,
      isOpen, priority);
}

Attribute DimShardingAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  DimShardingAttr attr = parseBody(parser);
  if (!attr || parser.parseGreater())
    return {};
  return attr;
}

void DimShardingAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printBody(printer);
  printer << '>';
}

//===----------------------------------------------------------------------===//
// ShardingAttr
//===----------------------------------------------------------------------===//

/// Why two conflicting axis references cannot split one tensor.
static std::string conflictReason(StringRef a, StringRef b) {
  ::tessel::AxisRef x = *::tessel::AxisRef::parse(a);
  ::tessel::AxisRef y = *::tessel::AxisRef::parse(b);
  if (::tessel::axesOverlap(x, y))
    return "they overlap";
  return "they do not nest: they cut the axis two different ways";
}

LogicalResult ShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   FlatSymbolRefAttr mesh,
                                   ArrayRef<DimShardingAttr> dims) {
  if (!mesh)
    return emitError() << "sharding needs a mesh symbol";
  SmallVector<std::pair<StringRef, int64_t>> seen;
  for (auto [dim, dimSharding] : llvm::enumerate(dims)) {
    if (!dimSharding)
      return emitError() << "sharding of dimension " << dim << " is null";
    for (StringAttr axis : dimSharding.getAxes()) {
      for (auto [other, otherDim] : seen) {
        if (!::tessel::axesConflict(axis.getValue(), other))
          continue;
        std::string what = other == axis.getValue()
                               ? "mesh axis \"" + other.str() + "\""
                               : "mesh axes \"" + other.str() + "\" and \"" +
                                     axis.getValue().str() + "\" (" +
                                     conflictReason(other, axis.getValue()) +
                                     ")";
        if (otherDim == static_cast<int64_t>(dim))
          return emitError() << what
                             << (other == axis.getValue() ? " is listed twice"
                                                          : " are both listed")
                             << " in dimension " << dim;
        return emitError() << what
                           << (other == axis.getValue() ? " is" : " are")
                           << " used twice (dimensions " << otherDim << " and "
                           << dim
                           << "); a tensor can be split over an axis once";
      }
      seen.push_back({axis.getValue(), static_cast<int64_t>(dim)});
    }
  }
  return success();
}

bool ShardingAttr::isFullyReplicated() const {
  return llvm::all_of(getDims(),
                      [](DimShardingAttr d) { return d.getAxes().empty(); });
}

Attribute ShardingAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  FlatSymbolRefAttr mesh;
  if (parser.parseLess() || parser.parseAttribute(mesh) || parser.parseComma())
    return {};
  SmallVector<DimShardingAttr> dims;
  auto parseDim = [&]() -> ParseResult {
    DimShardingAttr dim = DimShardingAttr::parseBody(parser);
    if (!dim)
      return failure();
    dims.push_back(dim);
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseDim) ||
      parser.parseGreater())
    return {};
  return ShardingAttr::getChecked([&] { return parser.emitError(loc); },
                                  parser.getContext(), mesh, dims);
}

void ShardingAttr::print(AsmPrinter &printer) const {
  printer << '<' << getMesh() << ", [";
  llvm::interleaveComma(getDims(), printer,
                        [&](DimShardingAttr dim) { dim.printBody(printer); });
  printer << "]>";
}
