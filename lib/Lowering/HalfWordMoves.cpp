//===- HalfWordMoves.cpp - bf16/f16 loads and stores as 16-bit integers ---===//
//
// After ExpandFloatConversions no bf16/f16 arithmetic or conversion is left,
// but values are still loaded and stored as `bfloat`/`half`. On CPUs without
// native conversions the x86 backend holds such a value in a register
// promoted to f32 and calls the toolchain's __truncsfbf2 / __truncsfhf2 to
// store it back (seen when LLVM keeps a loaded value live across an
// unrolled loop), which neither links without libgcc's bf16 routines nor
// is ours to trust bit for bit. Loads, stores and every instruction that
// only moves such values (phi, select, vector shuffles, inserts, extracts)
// are rewritten to move i16 bits, leaving the backend nothing to convert.
//
//===----------------------------------------------------------------------===//

#include "tessel/lowering/Lowering.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

#include <vector>

namespace {

/// The integer (vector) type of the same bits as a bf16/f16 (vector) type,
/// or null for any other type.
llvm::Type *bitsOf(llvm::Type *type) {
  llvm::Type *scalar = type->getScalarType();
  if (!scalar->isBFloatTy() && !scalar->isHalfTy())
    return nullptr;
  llvm::Type *i16 = llvm::Type::getInt16Ty(type->getContext());
  if (auto *vector = llvm::dyn_cast<llvm::VectorType>(type))
    return llvm::VectorType::get(i16, vector->getElementCount());
  return i16;
}

/// `value` as its bits (`bits` typed), inserted before `where`.
llvm::Value *asBits(llvm::Value *value, llvm::Type *bits,
                    llvm::Instruction *where) {
  if (auto *cast = llvm::dyn_cast<llvm::BitCastInst>(value))
    if (cast->getSrcTy() == bits)
      return cast->getOperand(0);
  if (auto *c = llvm::dyn_cast<llvm::Constant>(value))
    return llvm::ConstantExpr::getBitCast(c, bits);
  return llvm::IRBuilder<>(where).CreateBitCast(value, bits);
}

/// Replaces `old` by `replacement` (bits), cast back for its remaining
/// users (inserted after the phis of its block for a phi).
void replaceWithBits(llvm::Instruction *old, llvm::Instruction *replacement) {
  llvm::Instruction *where = replacement->getNextNode();
  if (llvm::isa<llvm::PHINode>(replacement))
    where = &*replacement->getParent()->getFirstInsertionPt();
  llvm::Value *back =
      llvm::IRBuilder<>(where).CreateBitCast(replacement, old->getType());
  old->replaceAllUsesWith(back);
  old->eraseFromParent();
}

/// Rewrites one instruction that moves half words to move i16 bits; false
/// if it does not.
bool rewrite(llvm::Instruction &inst) {
  llvm::IRBuilder<> b(&inst);
  if (auto *store = llvm::dyn_cast<llvm::StoreInst>(&inst)) {
    llvm::Type *bits = bitsOf(store->getValueOperand()->getType());
    if (!bits)
      return false;
    store->setOperand(0, asBits(store->getValueOperand(), bits, store));
    return true;
  }
  llvm::Type *bits = bitsOf(inst.getType());
  if (!bits)
    return false;
  llvm::Instruction *made = nullptr;
  if (auto *load = llvm::dyn_cast<llvm::LoadInst>(&inst)) {
    made = b.CreateAlignedLoad(bits, load->getPointerOperand(),
                               load->getAlign(), load->isVolatile());
    made->copyMetadata(*load);
  } else if (auto *phi = llvm::dyn_cast<llvm::PHINode>(&inst)) {
    auto *newPhi = b.CreatePHI(bits, phi->getNumIncomingValues());
    for (unsigned k = 0; k < phi->getNumIncomingValues(); ++k)
      newPhi->addIncoming(asBits(phi->getIncomingValue(k), bits,
                                 phi->getIncomingBlock(k)->getTerminator()),
                          phi->getIncomingBlock(k));
    made = newPhi;
  } else if (auto *select = llvm::dyn_cast<llvm::SelectInst>(&inst)) {
    made = llvm::cast<llvm::Instruction>(b.CreateSelect(
        select->getCondition(), asBits(select->getTrueValue(), bits, select),
        asBits(select->getFalseValue(), bits, select)));
  } else if (auto *shuffle = llvm::dyn_cast<llvm::ShuffleVectorInst>(&inst)) {
    llvm::Type *in = bitsOf(shuffle->getOperand(0)->getType());
    made = llvm::cast<llvm::Instruction>(b.CreateShuffleVector(
        asBits(shuffle->getOperand(0), in, shuffle),
        asBits(shuffle->getOperand(1), in, shuffle),
        shuffle->getShuffleMask()));
  } else if (auto *insert = llvm::dyn_cast<llvm::InsertElementInst>(&inst)) {
    llvm::Type *i16 = bits->getScalarType();
    made = llvm::cast<llvm::Instruction>(b.CreateInsertElement(
        asBits(insert->getOperand(0), bits, insert),
        asBits(insert->getOperand(1), i16, insert), insert->getOperand(2)));
  } else if (auto *extract = llvm::dyn_cast<llvm::ExtractElementInst>(&inst)) {
    llvm::Value *vector = extract->getVectorOperand();
    made = llvm::cast<llvm::Instruction>(b.CreateExtractElement(
        asBits(vector, bitsOf(vector->getType()), extract),
        extract->getIndexOperand()));
  } else {
    return false;
  }
  replaceWithBits(&inst, made);
  return true;
}

/// bitcast(bitcast(x)) back to x's type is x; unused casts go.
void foldCasts(llvm::Function &f) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (llvm::BasicBlock &block : f)
      for (llvm::Instruction &inst : llvm::make_early_inc_range(block)) {
        auto *cast = llvm::dyn_cast<llvm::BitCastInst>(&inst);
        if (!cast)
          continue;
        auto *inner = llvm::dyn_cast<llvm::BitCastInst>(cast->getOperand(0));
        if (inner && inner->getSrcTy() == cast->getDestTy()) {
          cast->replaceAllUsesWith(inner->getOperand(0));
          changed = true;
        }
        if (cast->use_empty()) {
          cast->eraseFromParent();
          changed = true;
        }
      }
  }
}

} // namespace

void mlir::tessel::moveHalfWordsAsIntegers(llvm::Module &module) {
  for (llvm::Function &f : module) {
    std::vector<llvm::Instruction *> work;
    for (llvm::BasicBlock &block : f)
      for (llvm::Instruction &inst : block)
        work.push_back(&inst);
    for (llvm::Instruction *inst : work)
      rewrite(*inst);
    foldCasts(f);
  }
}
