//===- OvlOps.cpp - Operations of the ovl dialect -------------------------===//
//
// Verifiers, custom syntax pieces and the cost interfaces of the ovl ops.
// Checks that need only the op live in `verify()`; checks that need the
// `shard.grid` (group sizes, axis ranges) live in `verifySymbolUses()`.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"

#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/MathExtras.h"

#include <set>

using namespace mlir;
using namespace mlir::ovl;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

std::optional<int64_t> mlir::ovl::getElementBytes(Type type) {
  if (type.isIntOrFloat())
    return (type.getIntOrFloatBitWidth() + 7) / 8;
  if (isa<IndexType>(type))
    return IndexType::kInternalStorageBitWidth / 8;
  if (auto complex = dyn_cast<ComplexType>(type))
    if (std::optional<int64_t> part = getElementBytes(complex.getElementType()))
      return 2 * *part;
  return std::nullopt;
}

/// Bytes of a statically shaped tensor, or nullopt.
static std::optional<int64_t> getTensorBytes(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  std::optional<int64_t> element = getElementBytes(tensor.getElementType());
  if (!tensor.hasStaticShape() || !element)
    return std::nullopt;
  return tensor.getNumElements() * *element;
}

/// Prints a shape like `2x?x8`.
static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(
      shape, os,
      [&](int64_t size) {
        if (ShapedType::isDynamic(size))
          os << '?';
        else
          os << size;
      },
      "x");
  return text;
}

/// Checks that the axes are distinct and non-negative (what can be checked
/// without the grid).
static LogicalResult verifyAxesLocally(Operation *op, ArrayRef<int16_t> axes) {
  // std::set: a DenseSet reserves two keys (32767 among them) a user may
  // write.
  std::set<int16_t> seen;
  for (int16_t axis : axes) {
    if (axis < 0)
      return op->emitOpError("grid axis ")
             << axis << " is negative; axes index the grid's dimensions";
    if (!seen.insert(axis).second)
      return op->emitOpError("grid axis ")
             << axis << " is listed twice; the axes must be distinct";
  }
  return success();
}

/// Resolves the grid and checks the axes against its rank. Returns the group
/// size (ShapedType::kDynamic when an axis is dynamic).
static FailureOr<int64_t> verifyGridAndAxes(Operation *op,
                                            FlatSymbolRefAttr gridSymbol,
                                            ArrayRef<int16_t> axes,
                                            SymbolTableCollection &symbols) {
  shard::GridOp grid = shard::getGridOrNull(op, gridSymbol, symbols);
  if (!grid)
    return op->emitOpError("grid ")
           << gridSymbol << " does not name a 'shard.grid' operation";
  int64_t rank = grid.getRank();
  for (int16_t axis : axes)
    if (axis >= rank)
      return op->emitOpError("grid axis ")
             << axis << " is out of range for grid " << gridSymbol
             << " of rank " << rank << "; expected an axis in [0, " << rank
             << ")";
  ArrayRef<int64_t> shape = grid.getShape();
  int64_t size = 1;
  for (int16_t axis : axes) {
    if (ShapedType::isDynamic(shape[axis]))
      return ShapedType::kDynamic;
    // shard.grid accepts an empty axis; a group needs devices.
    if (shape[axis] < 1)
      return op->emitOpError("grid axis ")
             << axis << " of " << gridSymbol << " has size " << shape[axis]
             << "; a group needs at least one device";
    if (llvm::MulOverflow(size, shape[axis], size))
      return op->emitOpError("the group along grid ")
             << gridSymbol << "'s axes has more than 2^63 devices";
  }
  return size;
}

/// Checks what same-rank collectives share: a valid tensor dim, equal rank
/// and element type, equal sizes outside `dim`.
static LogicalResult verifySameRankCollective(Operation *op, StringRef dimName,
                                              int64_t dim, ShapedType input,
                                              ShapedType result) {
  if (dim >= input.getRank())
    return op->emitOpError()
           << dimName << " dim " << dim
           << " is out of range for an input of rank " << input.getRank();
  if (input.getRank() != result.getRank())
    return op->emitOpError("result rank ")
           << result.getRank() << " differs from the input rank "
           << input.getRank();
  if (input.getElementType() != result.getElementType())
    return op->emitOpError("result element type ")
           << result.getElementType() << " differs from the input element type "
           << input.getElementType();
  for (int64_t d = 0, e = input.getRank(); d < e; ++d) {
    if (d == dim)
      continue;
    int64_t in = input.getDimSize(d), out = result.getDimSize(d);
    if (!ShapedType::isDynamic(in) && !ShapedType::isDynamic(out) && in != out)
      return op->emitOpError("result dim ")
             << d << " has size " << out << " but the input's has size " << in
             << "; only the " << dimName << " dim " << dim << " may differ";
  }
  return success();
}

/// Permute pairs: an even-length array of non-negative indices in which no
/// device is a source or a target twice.
static LogicalResult verifyPairsLocally(Operation *op,
                                        ArrayRef<int64_t> pairs) {
  if (pairs.size() % 2 != 0)
    return op->emitOpError("pairs must hold (source, target) pairs, but has ")
           << pairs.size() << " entries";
  // std::set: a DenseSet reserves two keys (2^63 - 1 and 2^63 - 2) a user
  // may write.
  std::set<int64_t> sources, targets;
  for (size_t i = 0; i < pairs.size(); i += 2) {
    int64_t source = pairs[i], target = pairs[i + 1];
    if (source < 0 || target < 0)
      return op->emitOpError("pair ")
             << source << " -> " << target << " has a negative device index";
    if (!sources.insert(source).second)
      return op->emitOpError("device ")
             << source << " is the source of more than one pair";
    if (!targets.insert(target).second)
      return op->emitOpError("device ")
             << target << " is the target of more than one pair";
  }
  return success();
}

/// Permute pairs against the group size: in range, covering the group.
static LogicalResult verifyPairsInGroup(Operation *op, ArrayRef<int64_t> pairs,
                                        int64_t groupSize) {
  if (ShapedType::isDynamic(groupSize))
    return success();
  for (size_t i = 0; i < pairs.size(); i += 2)
    if (pairs[i] >= groupSize || pairs[i + 1] >= groupSize)
      return op->emitOpError("pair ")
             << pairs[i] << " -> " << pairs[i + 1]
             << " is out of range for a group of " << groupSize << " devices";
  int64_t covered = pairs.size() / 2;
  if (covered != groupSize)
    return op->emitOpError("pairs cover ")
           << covered << " of the " << groupSize
           << " devices of the group; expected a permutation of the whole "
              "group";
  return success();
}

static SmallVector<std::pair<int64_t, int64_t>>
toPairs(ArrayRef<int64_t> flat) {
  SmallVector<std::pair<int64_t, int64_t>> pairs;
  for (size_t i = 0; i + 1 < flat.size(); i += 2)
    pairs.emplace_back(flat[i], flat[i + 1]);
  return pairs;
}

/// Bytes a permute sends from one device: its input, unless every pair keeps
/// the data where it is.
static std::optional<int64_t> getPermuteBytes(Type inputType,
                                              ArrayRef<int64_t> pairs) {
  bool identity = true;
  for (size_t i = 0; i < pairs.size(); i += 2)
    identity &= pairs[i] == pairs[i + 1];
  if (identity)
    return 0;
  return getTensorBytes(inputType);
}

//===----------------------------------------------------------------------===//
// Custom directive: permute pairs `[0 -> 1, 1 -> 0]`
//===----------------------------------------------------------------------===//

static ParseResult parsePermutePairs(OpAsmParser &parser,
                                     DenseI64ArrayAttr &pairs) {
  SmallVector<int64_t> flat;
  auto parsePair = [&]() -> ParseResult {
    int64_t source, target;
    if (parser.parseInteger(source) || parser.parseArrow() ||
        parser.parseInteger(target))
      return failure();
    flat.push_back(source);
    flat.push_back(target);
    return success();
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, parsePair,
                                     " in permute pairs"))
    return failure();
  pairs = parser.getBuilder().getDenseI64ArrayAttr(flat);
  return success();
}

static void printPermutePairs(OpAsmPrinter &printer, Operation *,
                              DenseI64ArrayAttr pairs) {
  printer << '[';
  llvm::interleaveComma(toPairs(pairs.asArrayRef()), printer,
                        [&](const std::pair<int64_t, int64_t> &pair) {
                          printer << pair.first << " -> " << pair.second;
                        });
  printer << ']';
}

//===----------------------------------------------------------------------===//
// Custom directive: reduction keyword `max`
//===----------------------------------------------------------------------===//

// The enum attribute's own printer puts a space before the keyword; ops
// print the bare keyword.
static ParseResult parseReductionKind(OpAsmParser &parser,
                                      ReductionKindAttr &reduction) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<ReductionKind> kind = symbolizeReductionKind(keyword);
  if (!kind)
    return parser.emitError(loc, "unknown reduction '")
           << keyword << "'; expected sum, prod, max or min";
  reduction = ReductionKindAttr::get(parser.getContext(), *kind);
  return success();
}

static void printReductionKind(OpAsmPrinter &printer, Operation *,
                               ReductionKindAttr reduction) {
  printer << stringifyReductionKind(reduction.getValue());
}

//===----------------------------------------------------------------------===//
// CollectiveOpInterface
//===----------------------------------------------------------------------===//

shard::GridOp CollectiveOpInterface::getGridOp(SymbolTableCollection &symbols) {
  return shard::getGridOrNull(getOperation(), getGridAttr(), symbols);
}

std::optional<int64_t>
CollectiveOpInterface::getGroupSize(SymbolTableCollection &symbols) {
  shard::GridOp grid = getGridOp(symbols);
  if (!grid)
    return std::nullopt;
  return shard::collectiveProcessGroupSize(getGridAxes(), grid);
}

#include "OverlapDialect/Dialect/Ovl/IR/OvlInterfaces.cpp.inc"

//===----------------------------------------------------------------------===//
// EinsumOp
//===----------------------------------------------------------------------===//

void EinsumOp::build(OpBuilder &builder, OperationState &state,
                     StringRef equation, ValueRange inputs, Type resultType,
                     Value acc) {
  build(builder, state, resultType, builder.getStringAttr(equation), inputs,
        acc);
}

EinsumEquation EinsumOp::getParsedEquation() {
  llvm::Expected<EinsumEquation> parsed = EinsumEquation::parse(getEquation());
  assert(parsed && "verifier guarantees a valid equation");
  return std::move(*parsed);
}

llvm::DenseMap<char, int64_t> EinsumOp::getIndexSizes() {
  EinsumEquation equation = getParsedEquation();
  llvm::DenseMap<char, int64_t> sizes;
  for (auto [term, input] : llvm::zip(equation.getInputs(), getInputs())) {
    auto shape = cast<RankedTensorType>(input.getType()).getShape();
    for (auto [index, size] : llvm::zip(term, shape))
      if (!sizes.count(index) || ShapedType::isDynamic(sizes[index]))
        sizes[index] = size;
  }
  return sizes;
}

/// Whether products of `input` elements may accumulate into `result`: the
/// same type, or a strictly wider one of the same kind.
static bool isAccumulationType(Type input, Type result) {
  if (input == result)
    return true;
  if (isa<FloatType>(input) && isa<FloatType>(result))
    return result.getIntOrFloatBitWidth() > input.getIntOrFloatBitWidth();
  auto inInt = dyn_cast<IntegerType>(input);
  auto outInt = dyn_cast<IntegerType>(result);
  return inInt && outInt && inInt.getSignedness() == outInt.getSignedness() &&
         outInt.getWidth() > inInt.getWidth();
}

LogicalResult EinsumOp::verify() {
  llvm::Expected<EinsumEquation> parsed = EinsumEquation::parse(getEquation());
  if (!parsed)
    return emitOpError(llvm::toString(parsed.takeError()));
  const EinsumEquation &equation = *parsed;

  if (equation.getNumInputs() != getInputs().size())
    return emitOpError("equation '")
           << getEquation() << "' has " << equation.getNumInputs()
           << " input term(s) but the op has " << getInputs().size()
           << " input(s)";

  Type elementType;
  llvm::DenseMap<char, std::pair<int64_t, unsigned>> sizes;
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    auto type = cast<RankedTensorType>(input.getType());
    StringRef term = equation.getInput(i);
    if (!type.getElementType().isIntOrFloat())
      return emitOpError("input #")
             << i << " has element type " << type.getElementType()
             << "; expected an integer or floating-point type";
    if (!elementType)
      elementType = type.getElementType();
    else if (type.getElementType() != elementType)
      return emitOpError("input #")
             << i << " has element type " << type.getElementType()
             << " but input #0 has " << elementType
             << "; all inputs must have the same element type";
    if (type.getRank() != static_cast<int64_t>(term.size()))
      return emitOpError("input #")
             << i << " has rank " << type.getRank() << " but its term '" << term
             << "' has " << term.size() << " indices";
    for (auto [index, size] : llvm::zip(term, type.getShape())) {
      auto [it, inserted] = sizes.try_emplace(index, size, i);
      if (inserted || ShapedType::isDynamic(size))
        continue;
      if (ShapedType::isDynamic(it->second.first)) {
        it->second = {size, static_cast<unsigned>(i)};
        continue;
      }
      if (it->second.first != size)
        return emitOpError("index '")
               << index << "' has size " << it->second.first << " in input #"
               << it->second.second << " but size " << size << " in input #"
               << i;
    }
  }

  auto resultType = cast<RankedTensorType>(getResult().getType());
  StringRef output = equation.getOutput();
  if (resultType.getRank() != static_cast<int64_t>(output.size()))
    return emitOpError("result has rank ")
           << resultType.getRank() << " but the output term '" << output
           << "' has " << output.size() << " indices";
  SmallVector<int64_t> expectedShape;
  for (char index : output)
    expectedShape.push_back(sizes.lookup(index).first);
  for (auto [expected, actual] :
       llvm::zip(expectedShape, resultType.getShape())) {
    if (!ShapedType::isDynamic(expected) && !ShapedType::isDynamic(actual) &&
        expected != actual)
      return emitOpError("result shape ")
             << formatShape(resultType.getShape()) << " does not match '"
             << output << "' = " << formatShape(expectedShape)
             << " from the inputs";
  }
  if (elementType &&
      !isAccumulationType(elementType, resultType.getElementType()))
    return emitOpError("result element type ")
           << resultType.getElementType() << " cannot hold products of "
           << elementType
           << "; expected the same type or a wider one of the same kind";
  return success();
}

std::optional<int64_t> EinsumOp::getFlops() {
  EinsumEquation equation = getParsedEquation();
  llvm::DenseMap<char, int64_t> sizes = getIndexSizes();
  int64_t points = 1;
  for (char index : equation.getIndices()) {
    int64_t size = sizes.lookup(index);
    if (ShapedType::isDynamic(size))
      return std::nullopt;
    points *= size;
  }
  // One multiply per extra input and one add per summed product: a
  // multiply-add counts as two, the convention FLOPS utilization uses.
  bool sums = equation.getIndices().size() > equation.getOutput().size();
  int64_t flops = points * (getInputs().size() - 1) + (sums ? points : 0);
  if (getAcc()) {
    int64_t outputElements = 1;
    for (char index : equation.getOutput())
      outputElements *= sizes.lookup(index);
    flops += outputElements;
  }
  return flops;
}

std::optional<int64_t> EinsumOp::getBytesAccessed() {
  int64_t total = 0;
  for (Value value : getOperands()) {
    std::optional<int64_t> bytes = getTensorBytes(value.getType());
    if (!bytes)
      return std::nullopt;
    total += *bytes;
  }
  std::optional<int64_t> resultBytes = getTensorBytes(getResult().getType());
  if (!resultBytes)
    return std::nullopt;
  return total + *resultBytes;
}

//===----------------------------------------------------------------------===//
// AllGatherOp
//===----------------------------------------------------------------------===//

LogicalResult AllGatherOp::verify() {
  if (failed(verifyAxesLocally(*this, getGridAxes())))
    return failure();
  return verifySameRankCollective(*this, "gather", getGatherDim(),
                                  getInput().getType(), getResult().getType());
}

/// The gathered dim is the input's times the group size.
static LogicalResult verifyGatherFactor(Operation *op, ShapedType input,
                                        ShapedType result, int64_t dim,
                                        int64_t groupSize) {
  int64_t in = input.getDimSize(dim), out = result.getDimSize(dim);
  if (ShapedType::isDynamic(groupSize) || ShapedType::isDynamic(in) ||
      ShapedType::isDynamic(out))
    return success();
  int64_t gathered;
  if (llvm::MulOverflow(in, groupSize, gathered))
    return op->emitOpError("gathering dim ")
           << dim << " of size " << in << " from " << groupSize
           << " devices gives more than 2^63 elements";
  if (out == gathered)
    return success();
  return op->emitOpError("result dim ")
         << dim << " has size " << out << "; expected " << gathered
         << " (input size " << in << " gathered from " << groupSize
         << " devices)";
}

/// The scattered dim is divisible by the group size, the result holds one
/// part.
static LogicalResult verifyScatterFactor(Operation *op, ShapedType input,
                                         ShapedType result, int64_t dim,
                                         int64_t groupSize) {
  int64_t in = input.getDimSize(dim), out = result.getDimSize(dim);
  if (ShapedType::isDynamic(groupSize) || ShapedType::isDynamic(in))
    return success();
  if (in % groupSize != 0)
    return op->emitOpError("input dim ")
           << dim << " of size " << in << " is not divisible by the group size "
           << groupSize;
  if (!ShapedType::isDynamic(out) && out != in / groupSize)
    return op->emitOpError("result dim ")
           << dim << " has size " << out << "; expected " << in / groupSize
           << " (input size " << in << " scattered over " << groupSize
           << " devices)";
  return success();
}

/// Input and output of an elementwise collective agree in shape and type.
static LogicalResult verifySameShape(Operation *op, ShapedType input,
                                     ShapedType output) {
  if (input.getShape() != output.getShape() ||
      input.getElementType() != output.getElementType())
    return op->emitOpError("output ")
           << output << " must have the shape and element type of the input "
           << input;
  return success();
}

/// The grid checks of a gather (blocking, asynchronous or on buffers)
/// from `input` to `output`.
static LogicalResult verifyGatherSymbols(Operation *op, FlatSymbolRefAttr grid,
                                         ArrayRef<int16_t> axes, Type input,
                                         Type output, int64_t dim,
                                         SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> groupSize = verifyGridAndAxes(op, grid, axes, symbolTable);
  if (failed(groupSize))
    return failure();
  return verifyGatherFactor(op, cast<ShapedType>(input),
                            cast<ShapedType>(output), dim, *groupSize);
}

/// The same for a scatter.
static LogicalResult verifyScatterSymbols(Operation *op, FlatSymbolRefAttr grid,
                                          ArrayRef<int16_t> axes, Type input,
                                          Type output, int64_t dim,
                                          SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> groupSize = verifyGridAndAxes(op, grid, axes, symbolTable);
  if (failed(groupSize))
    return failure();
  return verifyScatterFactor(op, cast<ShapedType>(input),
                             cast<ShapedType>(output), dim, *groupSize);
}

/// Bytes one device sends in a ring all-gather or reduce-scatter whose
/// shard (what each device contributes or ends with) is `shard`: N - 1
/// steps of one shard.
static std::optional<int64_t> getRingBytesSent(Type shard, int64_t groupSize) {
  std::optional<int64_t> bytes = getTensorBytes(shard);
  if (!bytes || ShapedType::isDynamic(groupSize))
    return std::nullopt;
  return (groupSize - 1) * *bytes;
}

/// Bytes one device sends in a ring all-reduce of `tensor`: a
/// reduce-scatter then an all-gather of 1/N of it each step.
static std::optional<int64_t> getAllReduceBytesSent(Type tensor,
                                                    int64_t groupSize) {
  std::optional<int64_t> bytes = getTensorBytes(tensor);
  if (!bytes || ShapedType::isDynamic(groupSize))
    return std::nullopt;
  return 2 * (groupSize - 1) * *bytes / groupSize;
}

LogicalResult
AllGatherOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGatherSymbols(*this, getGridAttr(), getGridAxes(),
                             getInput().getType(), getResult().getType(),
                             getGatherDim(), symbolTable);
}

std::optional<int64_t> AllGatherOp::getBytesSentPerDevice(int64_t groupSize) {
  return getRingBytesSent(getInput().getType(), groupSize);
}

std::optional<CollectiveKind> AllGatherOp::getCollectiveKind() {
  return CollectiveKind::AllGather;
}

Type AllGatherOp::getPayloadType() { return getInput().getType(); }

//===----------------------------------------------------------------------===//
// ReduceScatterOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceScatterOp::verify() {
  if (failed(verifyAxesLocally(*this, getGridAxes())))
    return failure();
  return verifySameRankCollective(*this, "scatter", getScatterDim(),
                                  getInput().getType(), getResult().getType());
}

LogicalResult
ReduceScatterOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyScatterSymbols(*this, getGridAttr(), getGridAxes(),
                              getInput().getType(), getResult().getType(),
                              getScatterDim(), symbolTable);
}

std::optional<int64_t>
ReduceScatterOp::getBytesSentPerDevice(int64_t groupSize) {
  return getRingBytesSent(getResult().getType(), groupSize);
}

std::optional<CollectiveKind> ReduceScatterOp::getCollectiveKind() {
  return CollectiveKind::ReduceScatter;
}

Type ReduceScatterOp::getPayloadType() { return getResult().getType(); }

//===----------------------------------------------------------------------===//
// AllReduceOp
//===----------------------------------------------------------------------===//

LogicalResult
AllReduceOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (failed(verifyAxesLocally(*this, getGridAxes())))
    return failure();
  return verifyGridAndAxes(*this, getGridAttr(), getGridAxes(), symbolTable);
}

std::optional<int64_t> AllReduceOp::getBytesSentPerDevice(int64_t groupSize) {
  return getAllReduceBytesSent(getInput().getType(), groupSize);
}

std::optional<CollectiveKind> AllReduceOp::getCollectiveKind() {
  return CollectiveKind::AllReduce;
}

Type AllReduceOp::getPayloadType() { return getInput().getType(); }

//===----------------------------------------------------------------------===//
// CollectivePermuteOp
//===----------------------------------------------------------------------===//

LogicalResult CollectivePermuteOp::verify() {
  if (failed(verifyAxesLocally(*this, getGridAxes())))
    return failure();
  return verifyPairsLocally(*this, getPairs());
}

LogicalResult
CollectivePermuteOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> groupSize =
      verifyGridAndAxes(*this, getGridAttr(), getGridAxes(), symbolTable);
  if (failed(groupSize))
    return failure();
  return verifyPairsInGroup(*this, getPairs(), *groupSize);
}

SmallVector<std::pair<int64_t, int64_t>>
CollectivePermuteOp::getSourceTargetPairs() {
  return toPairs(getPairs());
}

std::optional<int64_t> CollectivePermuteOp::getBytesSentPerDevice(int64_t) {
  return getPermuteBytes(getInput().getType(), getPairs());
}

std::optional<CollectiveKind> CollectivePermuteOp::getCollectiveKind() {
  return std::nullopt;
}

Type CollectivePermuteOp::getPayloadType() { return getInput().getType(); }

//===----------------------------------------------------------------------===//
// CollectivePermuteStartOp
//===----------------------------------------------------------------------===//

/// A start's token has one use, in the start's block: the done, or a
/// region terminator that carries it on.
static LogicalResult verifyTokenUse(Operation *start, Value token,
                                    StringRef doneName) {
  size_t uses = std::distance(token.use_begin(), token.use_end());
  if (uses != 1)
    return start->emitOpError("token must have exactly one use, the matching '")
           << doneName
           << "' or a region terminator that carries it on, but has " << uses;
  // A use nested in a region would run on some paths only (a done in one
  // branch of an scf.if) or on every iteration (a done inside a loop).
  Operation *user = *token.user_begin();
  if (user->getBlock() != start->getBlock()) {
    Operation *around = start->getBlock()->findAncestorOpInBlock(*user);
    return start->emitOpError("token is used inside a region of '")
           << (around ? around : user)->getName()
           << "'; consume it in the start's block, or carry it through that "
              "op's operands and results";
  }
  return success();
}

LogicalResult CollectivePermuteStartOp::verify() {
  if (failed(verifyAxesLocally(*this, getGridAxes())) ||
      failed(verifyPairsLocally(*this, getPairs())))
    return failure();
  return verifyTokenUse(*this, getToken(), "ovl.collective_permute_done");
}

LogicalResult
CollectivePermuteStartOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> groupSize =
      verifyGridAndAxes(*this, getGridAttr(), getGridAxes(), symbolTable);
  if (failed(groupSize))
    return failure();
  return verifyPairsInGroup(*this, getPairs(), *groupSize);
}

SmallVector<std::pair<int64_t, int64_t>>
CollectivePermuteStartOp::getSourceTargetPairs() {
  return toPairs(getPairs());
}

std::optional<int64_t>
CollectivePermuteStartOp::getBytesSentPerDevice(int64_t) {
  return getPermuteBytes(getInput().getType(), getPairs());
}

std::optional<CollectiveKind> CollectivePermuteStartOp::getCollectiveKind() {
  return std::nullopt;
}

Type CollectivePermuteStartOp::getPayloadType() { return getInput().getType(); }

//===----------------------------------------------------------------------===//
// CollectivePermuteDoneOp
//===----------------------------------------------------------------------===//

CollectivePermuteStartOp CollectivePermuteDoneOp::getStartOp() {
  return getToken().getDefiningOp<CollectivePermuteStartOp>();
}

/// A done waits in the block of its token, on a token of a start of its
/// kind, with that start's pending value and input.
static LogicalResult verifyDone(Operation *done, Value token, Value keep,
                                Value pending, bool permute) {
  // The same rule for a token carried in as a block argument or out as a
  // region op's result: the done runs exactly where the token is defined.
  if (token.getParentBlock() != done->getBlock())
    return done->emitOpError("token is defined in another block: a done must "
                             "be in the block of its token, so that it runs "
                             "once on every path");
  Operation *producer = token.getDefiningOp();
  if (!producer)
    return success();
  auto start = dyn_cast<AsyncStartOpInterface>(producer);
  StringRef expected =
      permute ? "an 'ovl.collective_permute_start'"
              : "an 'ovl.all_gather_start', 'ovl.reduce_scatter_start' or "
                "'ovl.all_reduce_start'";
  if (!start || isa<CollectivePermuteStartOp>(producer) != permute) {
    // A loop or branch op may carry the token through its regions.
    if (!start && isa<RegionBranchOpInterface>(producer))
      return success();
    InFlightDiagnostic diag = done->emitOpError("token must come from ")
                              << expected
                              << ", directly or through a region's arguments "
                                 "and results, but comes from '"
                              << producer->getName() << "'";
    if (start)
      diag << "; its done is '"
           << (permute ? "ovl.collective_done" : "ovl.collective_permute_done")
           << "'";
    return diag;
  }
  if (pending != start.getPending())
    return done->emitOpError("pending operand must be the pending result of "
                             "the start that produced the token");
  if (keep != start.getInput())
    return done->emitOpError("keep operand must be the input of the start "
                             "that produced the token, so that its buffer "
                             "stays intact until the send completes");
  return success();
}

LogicalResult CollectivePermuteDoneOp::verify() {
  return verifyDone(*this, getToken(), getKeep(), getPending(),
                    /*permute=*/true);
}

//===----------------------------------------------------------------------===//
// AllGatherStartOp / ReduceScatterStartOp / AllReduceStartOp
//===----------------------------------------------------------------------===//

LogicalResult AllGatherStartOp::verify() {
  if (failed(verifyAxesLocally(*this, getGridAxes())) ||
      failed(verifySameRankCollective(*this, "gather", getGatherDim(),
                                      getInput().getType(),
                                      getDest().getType())))
    return failure();
  return verifyTokenUse(*this, getToken(), "ovl.collective_done");
}

LogicalResult
AllGatherStartOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGatherSymbols(*this, getGridAttr(), getGridAxes(),
                             getInput().getType(), getDest().getType(),
                             getGatherDim(), symbolTable);
}

std::optional<int64_t>
AllGatherStartOp::getBytesSentPerDevice(int64_t groupSize) {
  return getRingBytesSent(getInput().getType(), groupSize);
}

std::optional<CollectiveKind> AllGatherStartOp::getCollectiveKind() {
  return CollectiveKind::AllGather;
}

Type AllGatherStartOp::getPayloadType() { return getInput().getType(); }

LogicalResult ReduceScatterStartOp::verify() {
  if (failed(verifyAxesLocally(*this, getGridAxes())) ||
      failed(verifySameRankCollective(*this, "scatter", getScatterDim(),
                                      getInput().getType(),
                                      getDest().getType())))
    return failure();
  return verifyTokenUse(*this, getToken(), "ovl.collective_done");
}

LogicalResult
ReduceScatterStartOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyScatterSymbols(*this, getGridAttr(), getGridAxes(),
                              getInput().getType(), getDest().getType(),
                              getScatterDim(), symbolTable);
}

std::optional<int64_t>
ReduceScatterStartOp::getBytesSentPerDevice(int64_t groupSize) {
  return getRingBytesSent(getDest().getType(), groupSize);
}

std::optional<CollectiveKind> ReduceScatterStartOp::getCollectiveKind() {
  return CollectiveKind::ReduceScatter;
}

Type ReduceScatterStartOp::getPayloadType() { return getDest().getType(); }

LogicalResult AllReduceStartOp::verify() {
  if (failed(verifyAxesLocally(*this, getGridAxes())))
    return failure();
  return verifyTokenUse(*this, getToken(), "ovl.collective_done");
}

LogicalResult
AllReduceStartOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGridAndAxes(*this, getGridAttr(), getGridAxes(), symbolTable);
}

std::optional<int64_t>
AllReduceStartOp::getBytesSentPerDevice(int64_t groupSize) {
  return getAllReduceBytesSent(getInput().getType(), groupSize);
}

std::optional<CollectiveKind> AllReduceStartOp::getCollectiveKind() {
  return CollectiveKind::AllReduce;
}

Type AllReduceStartOp::getPayloadType() { return getInput().getType(); }

//===----------------------------------------------------------------------===//
// CollectiveDoneOp
//===----------------------------------------------------------------------===//

AsyncStartOpInterface CollectiveDoneOp::getStartOp() {
  auto start = getToken().getDefiningOp<AsyncStartOpInterface>();
  return start && !isa<CollectivePermuteStartOp>(start.getOperation())
             ? start
             : AsyncStartOpInterface();
}

LogicalResult CollectiveDoneOp::verify() {
  return verifyDone(*this, getToken(), getKeep(), getPending(),
                    /*permute=*/false);
}

//===----------------------------------------------------------------------===//
// OptimizationBarrierOp
//===----------------------------------------------------------------------===//

ParseResult OptimizationBarrierOp::parse(OpAsmParser &parser,
                                         OperationState &result) {
  SmallVector<OpAsmParser::UnresolvedOperand> inputs;
  SmallVector<Type> types;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseOperandList(inputs) ||
      parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseColonTypeList(types) ||
      parser.resolveOperands(inputs, types, loc, result.operands))
    return failure();
  result.addTypes(types);
  return success();
}

void OptimizationBarrierOp::print(OpAsmPrinter &printer) {
  printer << ' ' << getInputs();
  printer.printOptionalAttrDict((*this)->getAttrs());
  printer << " : " << getInputs().getTypes();
}

LogicalResult OptimizationBarrierOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one operand");
  if (getResults().size() != getInputs().size())
    return emitOpError("has ")
           << getInputs().size() << " operands but " << getResults().size()
           << " results; each operand has its result";
  for (auto [index, input, result] :
       llvm::enumerate(getInputs().getTypes(), getResults().getTypes()))
    if (input != result)
      return emitOpError("result #")
             << index << " has type " << result << ", its operand " << input;
  return success();
}

//===----------------------------------------------------------------------===//
// PartitionIdOp
//===----------------------------------------------------------------------===//

LogicalResult
PartitionIdOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (failed(verifyAxesLocally(*this, getGridAxes())))
    return failure();
  return verifyGridAndAxes(*this, getGridAttr(), getGridAxes(), symbolTable);
}

//===----------------------------------------------------------------------===//
// Buffer forms
//===----------------------------------------------------------------------===//

LogicalResult BufferAllGatherOp::verify() {
  if (failed(verifyAxesLocally(*this, getGridAxes())))
    return failure();
  return verifySameRankCollective(*this, "gather", getGatherDim(),
                                  getInput().getType(), getOutput().getType());
}

LogicalResult
BufferAllGatherOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGatherSymbols(*this, getGridAttr(), getGridAxes(),
                             getInput().getType(), getOutput().getType(),
                             getGatherDim(), symbolTable);
}

LogicalResult BufferReduceScatterOp::verify() {
  if (failed(verifyAxesLocally(*this, getGridAxes())))
    return failure();
  return verifySameRankCollective(*this, "scatter", getScatterDim(),
                                  getInput().getType(), getOutput().getType());
}

LogicalResult
BufferReduceScatterOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyScatterSymbols(*this, getGridAttr(), getGridAxes(),
                              getInput().getType(), getOutput().getType(),
                              getScatterDim(), symbolTable);
}

LogicalResult BufferAllReduceOp::verify() {
  if (failed(verifyAxesLocally(*this, getGridAxes())))
    return failure();
  return verifySameShape(*this, getInput().getType(), getOutput().getType());
}

LogicalResult
BufferAllReduceOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGridAndAxes(*this, getGridAttr(), getGridAxes(), symbolTable);
}

LogicalResult BufferPermuteOp::verify() {
  if (failed(verifyAxesLocally(*this, getGridAxes())) ||
      failed(verifyPairsLocally(*this, getPairs())))
    return failure();
  return verifySameShape(*this, getInput().getType(), getOutput().getType());
}

LogicalResult
BufferPermuteOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> groupSize =
      verifyGridAndAxes(*this, getGridAttr(), getGridAxes(), symbolTable);
  if (failed(groupSize))
    return failure();
  return verifyPairsInGroup(*this, getPairs(), *groupSize);
}

LogicalResult BufferPermuteStartOp::verify() {
  if (failed(verifyAxesLocally(*this, getGridAxes())) ||
      failed(verifyPairsLocally(*this, getPairs())))
    return failure();
  return verifySameShape(*this, getInput().getType(), getOutput().getType());
}

LogicalResult
BufferPermuteStartOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> groupSize =
      verifyGridAndAxes(*this, getGridAttr(), getGridAxes(), symbolTable);
  if (failed(groupSize))
    return failure();
  return verifyPairsInGroup(*this, getPairs(), *groupSize);
}

LogicalResult BufferAllGatherStartOp::verify() {
  if (failed(verifyAxesLocally(*this, getGridAxes())))
    return failure();
  return verifySameRankCollective(*this, "gather", getGatherDim(),
                                  getInput().getType(), getOutput().getType());
}

LogicalResult
BufferAllGatherStartOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGatherSymbols(*this, getGridAttr(), getGridAxes(),
                             getInput().getType(), getOutput().getType(),
                             getGatherDim(), symbolTable);
}

LogicalResult BufferReduceScatterStartOp::verify() {
  if (failed(verifyAxesLocally(*this, getGridAxes())))
    return failure();
  return verifySameRankCollective(*this, "scatter", getScatterDim(),
                                  getInput().getType(), getOutput().getType());
}

LogicalResult BufferReduceScatterStartOp::verifySymbolUses(
    SymbolTableCollection &symbolTable) {
  return verifyScatterSymbols(*this, getGridAttr(), getGridAxes(),
                              getInput().getType(), getOutput().getType(),
                              getScatterDim(), symbolTable);
}

LogicalResult BufferAllReduceStartOp::verify() {
  if (failed(verifyAxesLocally(*this, getGridAxes())))
    return failure();
  return verifySameShape(*this, getInput().getType(), getOutput().getType());
}

LogicalResult
BufferAllReduceStartOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGridAndAxes(*this, getGridAttr(), getGridAxes(), symbolTable);
}

#define GET_OP_CLASSES
#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.cpp.inc"
