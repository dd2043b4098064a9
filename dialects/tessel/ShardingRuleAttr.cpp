//===- ShardingRuleAttr.cpp - the printable sharding rule -----------------===//
//
// #tessel.rule<([i, k], [k, j]) -> ([i, j]) {i=4, j=16, k=8} reduction={k}>
//
//===----------------------------------------------------------------------===//

#include "tessel/dialects/tessel/ShardingRule.h"
#include "tessel/dialects/tessel/TesselOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace mlir::tessel;

/// i, j, ..., z, then z_1, z_2, ...
static std::string factorName(int64_t f) {
  if (f < 18)
    return std::string(1, char('i' + f));
  return "z_" + std::to_string(f - 17);
}

static std::optional<int64_t> factorIndex(StringRef name) {
  if (name.size() == 1 && name[0] >= 'i' && name[0] <= 'z')
    return name[0] - 'i';
  int64_t n;
  if (name.consume_front("z_") && !name.getAsInteger(10, n) && n > 0)
    return n + 17;
  return std::nullopt;
}

LogicalResult OpShardingRuleAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, ArrayRef<int64_t> sizes,
    ArrayRef<TensorMappingAttr> operands, ArrayRef<TensorMappingAttr> results,
    ArrayRef<int64_t> reduction, ArrayRef<int64_t> needReplication,
    ArrayRef<int64_t> permutation) {
  int64_t n = sizes.size();
  for (ArrayRef<int64_t> list : {reduction, needReplication, permutation})
    for (int64_t f : list)
      if (f < 0 || f >= n)
        return emitError() << "factor " << f << " out of range (" << n
                           << " factors)";
  for (ArrayRef<TensorMappingAttr> tensors : {operands, results})
    for (TensorMappingAttr t : tensors)
      for (DimMappingAttr d : t.getDims())
        for (int64_t f : d.getFactors())
          if (f < 0 || f >= n)
            return emitError() << "factor " << f << " out of range (" << n
                               << " factors)";
  return success();
}

bool OpShardingRuleAttr::isPointwise() const {
  if (!getReductionFactors().empty() || !getNeedReplicationFactors().empty() ||
      !getPermutationFactors().empty())
    return false;
  auto sameAsFirst = [&](TensorMappingAttr t, TensorMappingAttr first) {
    return t == first || t.getDims().empty();
  };
  TensorMappingAttr first =
      !getResults().empty() ? getResults().front() : TensorMappingAttr();
  for (TensorMappingAttr t : getOperands())
    if (first && !sameAsFirst(t, first))
      return false;
  for (TensorMappingAttr t : getResults())
    if (!sameAsFirst(t, first))
      return false;
  return true;
}

static void printTensors(AsmPrinter &printer, ArrayRef<TensorMappingAttr> ts) {
  printer << '(';
  llvm::interleaveComma(ts, printer, [&](TensorMappingAttr t) {
    printer << '[';
    llvm::interleaveComma(t.getDims(), printer, [&](DimMappingAttr d) {
      if (d.getFactors().empty())
        printer << '1'; // a size-1 dimension made of no factor
      for (int64_t f : d.getFactors())
        printer << factorName(f);
    });
    printer << ']';
  });
  printer << ')';
}

void OpShardingRuleAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printTensors(printer, getOperands());
  printer << " -> ";
  printTensors(printer, getResults());
  printer << " {";
  for (int64_t f = 0; f < getNumFactors(); ++f)
    printer << (f ? ", " : "") << factorName(f) << '=' << getFactorSizes()[f];
  printer << '}';
  auto list = [&](StringRef name, ArrayRef<int64_t> factors) {
    if (factors.empty())
      return;
    printer << ' ' << name << "={";
    llvm::interleaveComma(factors, printer,
                          [&](int64_t f) { printer << factorName(f); });
    printer << '}';
  };
  list("reduction", getReductionFactors());
  list("need_replication", getNeedReplicationFactors());
  list("permutation", getPermutationFactors());
  printer << '>';
}

/// Parses `([ij, k], []) ` into mappings. A dimension is a run of factor
/// names written together (`ij`); an empty dimension (size 1, no factor)
/// is written `1`.
static ParseResult parseTensors(AsmParser &parser,
                                SmallVectorImpl<TensorMappingAttr> &out) {
  MLIRContext *ctx = parser.getContext();
  auto parseTensor = [&]() -> ParseResult {
    SmallVector<DimMappingAttr> dims;
    auto parseDim = [&]() -> ParseResult {
      SmallVector<int64_t> factors;
      int64_t one;
      OptionalParseResult number = parser.parseOptionalInteger(one);
      if (number.has_value()) {
        if (failed(*number) || one != 1)
          return parser.emitError(parser.getCurrentLocation(),
                                  "a dimension without factors is written 1");
        dims.push_back(DimMappingAttr::get(ctx, ArrayRef<int64_t>(factors)));
        return success();
      }
      StringRef word;
      SMLoc loc = parser.getCurrentLocation();
      if (parser.parseKeyword(&word))
        return failure();
      // Split `ijz_1k` into factor names.
      while (!word.empty()) {
        size_t len = 1;
        if (word.starts_with("z_")) {
          len = 2;
          while (len < word.size() && isdigit(word[len]))
            ++len;
        }
        std::optional<int64_t> f = factorIndex(word.take_front(len));
        if (!f)
          return parser.emitError(loc) << "bad factor name in '" << word
                                       << "'";
        factors.push_back(*f);
        word = word.drop_front(len);
      }
      dims.push_back(DimMappingAttr::get(ctx, ArrayRef<int64_t>(factors)));
      return success();
    };
    if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseDim))
      return failure();
    out.push_back(TensorMappingAttr::get(ctx, ArrayRef<DimMappingAttr>(dims)));
    return success();
  };
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Paren,
                                        parseTensor);
}

Attribute OpShardingRuleAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<TensorMappingAttr> operands, results;
  if (parser.parseLess() || parseTensors(parser, operands) ||
      parser.parseArrow() || parseTensors(parser, results))
    return {};
  SmallVector<int64_t> sizes;
  auto parseSize = [&]() -> ParseResult {
    StringRef name;
    int64_t size;
    SMLoc nameLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&name) || parser.parseEqual() ||
        parser.parseInteger(size))
      return failure();
    std::optional<int64_t> f = factorIndex(name);
    if (!f || *f != static_cast<int64_t>(sizes.size()))
      return parser.emitError(nameLoc) << "factors must be listed in order";
    sizes.push_back(size);
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Braces, parseSize))
    return {};
  SmallVector<int64_t> lists[3];
  const char *names[3] = {"reduction", "need_replication", "permutation"};
  for (int k = 0; k < 3; ++k) {
    if (failed(parser.parseOptionalKeyword(names[k])))
      continue;
    auto parseFactor = [&]() -> ParseResult {
      StringRef name;
      if (parser.parseKeyword(&name))
        return failure();
      std::optional<int64_t> f = factorIndex(name);
      if (!f)
        return parser.emitError(parser.getCurrentLocation(), "bad factor");
      lists[k].push_back(*f);
      return success();
    };
    if (parser.parseEqual() ||
        parser.parseCommaSeparatedList(AsmParser::Delimiter::Braces,
                                       parseFactor))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return OpShardingRuleAttr::getChecked(
      [&] { return parser.emitError(loc); }, parser.getContext(),
      ArrayRef<int64_t>(sizes), ArrayRef<TensorMappingAttr>(operands),
      ArrayRef<TensorMappingAttr>(results), ArrayRef<int64_t>(lists[0]),
      ArrayRef<int64_t>(lists[1]), ArrayRef<int64_t>(lists[2]));
}

//===----------------------------------------------------------------------===//
// ShardingRuleBuilder
//===----------------------------------------------------------------------===//

int64_t ShardingRuleBuilder::factor(int64_t size, FactorKind kind) {
  sizes.push_back(size);
  kinds.push_back(kind);
  return sizes.size() - 1;
}

SmallVector<int64_t> ShardingRuleBuilder::factors(ArrayRef<int64_t> shape,
                                                  FactorKind kind) {
  SmallVector<int64_t> out;
  for (int64_t size : shape)
    out.push_back(factor(size, kind));
  return out;
}

TensorMappingAttr
ShardingRuleBuilder::mapping(ArrayRef<SmallVector<int64_t>> dims) {
  SmallVector<DimMappingAttr> attrs;
  for (const SmallVector<int64_t> &d : dims)
    attrs.push_back(DimMappingAttr::get(context, ArrayRef<int64_t>(d)));
  return TensorMappingAttr::get(context, ArrayRef<DimMappingAttr>(attrs));
}

void ShardingRuleBuilder::operand(ArrayRef<SmallVector<int64_t>> dims) {
  operands.push_back(mapping(dims));
}

void ShardingRuleBuilder::result(ArrayRef<SmallVector<int64_t>> dims) {
  results.push_back(mapping(dims));
}

void ShardingRuleBuilder::operandOf(ArrayRef<int64_t> dims) {
  SmallVector<SmallVector<int64_t>> nested;
  for (int64_t f : dims)
    nested.push_back({f});
  operand(nested);
}

void ShardingRuleBuilder::resultOf(ArrayRef<int64_t> dims) {
  SmallVector<SmallVector<int64_t>> nested;
  for (int64_t f : dims)
    nested.push_back({f});
  result(nested);
}

OpShardingRuleAttr ShardingRuleBuilder::build() {
  // Name factors in order of first appearance, results first, so that a
  // matmul reads ([i, k], [k, j]) -> ([i, j]).
  SmallVector<int64_t> order(sizes.size(), -1);
  int64_t next = 0;
  auto visit = [&](ArrayRef<TensorMappingAttr> tensors) {
    for (TensorMappingAttr t : tensors)
      for (DimMappingAttr d : t.getDims())
        for (int64_t f : d.getFactors())
          if (order[f] < 0)
            order[f] = next++;
  };
  visit(results);
  visit(operands);
  for (int64_t &o : order) // factors no tensor uses (none in practice)
    if (o < 0)
      o = next++;
  auto renumber = [&](ArrayRef<TensorMappingAttr> tensors) {
    SmallVector<TensorMappingAttr> out;
    for (TensorMappingAttr t : tensors) {
      SmallVector<DimMappingAttr> dims;
      for (DimMappingAttr d : t.getDims()) {
        SmallVector<int64_t> fs;
        for (int64_t f : d.getFactors())
          fs.push_back(order[f]);
        dims.push_back(DimMappingAttr::get(context, ArrayRef<int64_t>(fs)));
      }
      out.push_back(TensorMappingAttr::get(context, ArrayRef<DimMappingAttr>(dims)));
    }
    return out;
  };
  SmallVector<int64_t> newSizes(sizes.size());
  SmallVector<int64_t> lists[4];
  for (size_t f = 0; f < sizes.size(); ++f)
    newSizes[order[f]] = sizes[f];
  for (size_t f = 0; f < kinds.size(); ++f)
    lists[static_cast<int>(kinds[f])].push_back(order[f]);
  for (SmallVector<int64_t> &l : lists)
    llvm::sort(l);
  SmallVector<TensorMappingAttr> newOperands = renumber(operands);
  SmallVector<TensorMappingAttr> newResults = renumber(results);
  return OpShardingRuleAttr::get(
      context, ArrayRef<int64_t>(newSizes),
      ArrayRef<TensorMappingAttr>(newOperands),
      ArrayRef<TensorMappingAttr>(newResults), ArrayRef<int64_t>(lists[1]),
      ArrayRef<int64_t>(lists[2]), ArrayRef<int64_t>(lists[3]));
}
