//===- Check.cpp - fibers, markers and misuse diagnostics -----------------===//
//
// Finds the fibers (top-level labels named THREAD_<n> or named by
// INIT_SYNC/SPAWN) and the marker calls of a threaded function, and reports
// misuse that needs no control-flow graph: unknown fibers, slot indices out
// of range, direct dereference of GLOBAL pointers, INVOKE/TOKEN argument
// mismatches, VLAs, alloca, return statements.
//
//===----------------------------------------------------------------------===//
#include "EarthTC.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Type.h"
#include "clang/Sema/Sema.h"
#include "llvm/ADT/StringExtras.h"

using namespace clang;

namespace earthtc {

bool isGlobalPtrType(ASTContext &Ctx, QualType T) {
  while (!T.isNull()) {
    const Type *Ty = T.getTypePtr();
    if (const auto *MQ = dyn_cast<MacroQualifiedType>(Ty))
      if (MQ->getMacroIdentifier()->getName() == "GLOBAL")
        return true;
    if (const auto *AT = dyn_cast<AttributedType>(Ty))
      if (AT->getAttrKind() == attr::BTFTypeTag)
        return true;
    QualType Next = T.getSingleStepDesugaredType(Ctx);
    if (Next == T)
      break;
    T = Next;
  }
  return false;
}

namespace {

bool isFiberNumberName(llvm::StringRef N) {
  return N.consume_front("THREAD_") && !N.empty() &&
         llvm::all_of(N, llvm::isDigit);
}

std::string normalizeFiber(llvm::StringRef N) {
  if (!N.empty() && llvm::all_of(N, llvm::isDigit))
    return ("THREAD_" + N).str();
  return N.str();
}

MarkerKind markerKind(llvm::StringRef N, bool &Ok) {
  Ok = true;
  if (N == "__tc_init_sync")
    return MarkerKind::InitSync;
  if (N == "__tc_spawn")
    return MarkerKind::Spawn;
  if (N == "__tc_end_thread")
    return MarkerKind::EndThread;
  if (N == "__tc_end_function")
    return MarkerKind::EndFunction;
  if (N == "__tc_invoke")
    return MarkerKind::Invoke;
  if (N == "__tc_token")
    return MarkerKind::Token;
  if (N == "__tc_slot_index")
    return MarkerKind::SlotIndex;
  Ok = false;
  return MarkerKind::SlotIndex;
}

// The expression a GLOBAL pointer is read through, e.g. `p` in `*(p + 1)`.
const Expr *pointerOperand(const Expr *E) {
  E = E->IgnoreParenImpCasts();
  if (const auto *B = dyn_cast<BinaryOperator>(E))
    if (B->isAdditiveOp())
      return pointerOperand(
          B->getLHS()->getType()->isPointerType() ? B->getLHS() : B->getRHS());
  return E;
}

class Visitor : public RecursiveASTVisitor<Visitor> {
  ASTContext &Ctx;
  ThreadedFn &F;

public:
  Visitor(CompilerInstance &CI, ThreadedFn &F)
      : Ctx(CI.getASTContext()), F(F) {}

  void fail(SourceLocation L, const std::string &What, const std::string &Fix) {
    error(Ctx, L, What, Fix);
    F.Failed = true;
  }

  void checkDeref(const Expr *Base, SourceLocation L, const char *How) {
    const Expr *P = pointerOperand(Base);
    if (!isGlobalPtrType(Ctx, P->getType()))
      return;
    std::string Name = "a GLOBAL pointer";
    if (const auto *DR = dyn_cast<DeclRefExpr>(P))
      Name = "GLOBAL pointer '" + DR->getDecl()->getNameAsString() + "'";
    fail(L, std::string(How) + " " + Name + " directly",
         "a GLOBAL pointer may name another node's memory: read it with "
         "GET_SYNC_x(ptr, &local, slot) or write it with "
         "DATA_SYNC_x(value, ptr, slot) and use the value in the fiber the "
         "slot enables");
  }

  bool VisitUnaryOperator(UnaryOperator *U) {
    if (U->getOpcode() == UO_Deref)
      checkDeref(U->getSubExpr(), U->getOperatorLoc(), "dereferencing");
    return true;
  }
  bool VisitArraySubscriptExpr(ArraySubscriptExpr *A) {
    checkDeref(A->getBase(), A->getExprLoc(), "indexing");
    return true;
  }
  bool VisitMemberExpr(MemberExpr *M) {
    if (M->isArrow())
      checkDeref(M->getBase(), M->getOperatorLoc(), "dereferencing (->)");
    return true;
  }
  bool VisitReturnStmt(ReturnStmt *R) {
    fail(R->getReturnLoc(), "'return' in THREADED function '" + F.Name + "'",
         "end the fiber with END_THREAD(), or the whole invocation with "
         "END_FUNCTION()");
    return true;
  }
  bool VisitVarDecl(VarDecl *V) {
    if (V->getType()->isVariableArrayType())
      fail(V->getLocation(),
           "variable-length array '" + V->getNameAsString() +
               "' in THREADED function '" + F.Name + "'",
           "locals live in the heap frame, whose size is fixed: give the "
           "array a constant size, or malloc it and free it before "
           "END_FUNCTION()");
    if (V->hasLocalStorage() && !isa<ParmVarDecl>(V))
      if (V->getName() == "SYNC_SLOTS") {
        F.Slots = V;
        if (const auto *CA = Ctx.getAsConstantArrayType(V->getType()))
          F.NumSlots = CA->getSize().getZExtValue();
      }
    return true;
  }
  bool VisitLabelStmt(LabelStmt *L) {
    if (isFiberNumberName(L->getName()) && !TopLabels.count(L))
      fail(L->getIdentLoc(),
           "fiber label '" + std::string(L->getName()) +
               "' is not at the top level of THREADED function '" + F.Name +
               "'",
           "move the label out of the enclosing block or loop; a loop across "
           "fibers is written as a fiber that re-enables itself with a slot "
           "whose reset count is non-zero");
    return true;
  }
  bool VisitCallExpr(CallExpr *C) {
    const FunctionDecl *Callee = C->getDirectCallee();
    if (!Callee)
      return true;
    llvm::StringRef N = Callee->getName();
    if (N == "alloca" || N == "__builtin_alloca") {
      fail(C->getBeginLoc(), "alloca in THREADED function '" + F.Name + "'",
           "the C stack is gone when the fiber ends: use a fixed-size local "
           "array (it lives in the frame) or malloc");
      return true;
    }
    bool Ok;
    MarkerKind K = markerKind(N, Ok);
    if (!Ok)
      return true;
    Marker M;
    M.Kind = K;
    M.Call = C;
    if (K == MarkerKind::InitSync || K == MarkerKind::Spawn) {
      const Expr *A = C->getArg(K == MarkerKind::InitSync ? 3 : 0);
      if (const auto *S = dyn_cast<StringLiteral>(A->IgnoreParenImpCasts()))
        M.FiberName = normalizeFiber(S->getString());
    }
    F.Markers.push_back(M);
    return true;
  }

  std::set<const LabelStmt *> TopLabels;
};

std::string paramList(const FunctionDecl *FD) {
  std::string S;
  for (const ParmVarDecl *P : FD->parameters()) {
    if (!S.empty())
      S += ", ";
    S += P->getType().getAsString() + " " + P->getNameAsString();
  }
  return S.empty() ? "no arguments" : S;
}

void checkCall(CompilerInstance &CI, ThreadedFn &F, const Marker &M) {
  ASTContext &Ctx = CI.getASTContext();
  const char *Op = M.Kind == MarkerKind::Invoke ? "INVOKE" : "TOKEN";
  const CallExpr *C = M.Call;
  const Expr *Callee = C->getArg(1)->IgnoreParenImpCasts();
  const auto *DR = dyn_cast<DeclRefExpr>(Callee);
  const auto *T = DR ? dyn_cast<FunctionDecl>(DR->getDecl()) : nullptr;
  if (!T || !isThreaded(T) || T->getName() == "main") {
    error(Ctx, Callee->getBeginLoc(),
          std::string(Op) + " names something that is not a THREADED function",
          "declare the callee as 'THREADED name(params)' before this use "
          "(main cannot be invoked)");
    F.Failed = true;
    return;
  }
  unsigned Given = C->getNumArgs() - 2, Want = T->getNumParams();
  std::string Sig = T->getNameAsString() + "(" + paramList(T) + ")";
  if (Given != Want) {
    error(Ctx, C->getBeginLoc(),
          std::string(Op) + " passes " + std::to_string(Given) +
              " argument(s) to '" + T->getNameAsString() + "', which takes " +
              std::to_string(Want),
          "pass exactly the arguments of THREADED " + Sig);
    F.Failed = true;
    return;
  }
  Sema &S = CI.getSema();
  for (unsigned I = 0; I < Want; ++I) {
    const Expr *A = C->getArg(I + 2)->IgnoreImpCasts();
    const ParmVarDecl *P = T->getParamDecl(I);
    QualType AT = A->getType();
    if (AT->isArrayType())
      AT = Ctx.getArrayDecayedType(AT);
    else if (AT->isFunctionType())
      AT = Ctx.getPointerType(AT);
    QualType PT = P->getType().getUnqualifiedType();
    bool Null = PT->isPointerType() &&
                A->isNullPointerConstant(Ctx, Expr::NPC_ValueDependentIsNull);
    bool Ok = Null || S.CheckAssignmentConstraints(A->getBeginLoc(), PT,
                                                   AT.getUnqualifiedType()) ==
                          Sema::Compatible;
    std::string Where = "argument " + std::to_string(I + 1) + " of " + Op +
                        "(" + T->getNameAsString() + ", ...)";
    if (!Ok) {
      error(Ctx, A->getBeginLoc(),
            Where + " has type '" + A->getType().getAsString() +
                "', but parameter '" + P->getNameAsString() + "' has type '" +
                P->getType().getAsString() + "'",
            "pass a value of the parameter's type (THREADED " + Sig + ")");
      F.Failed = true;
    } else if (!Null && PT->isPointerType() &&
               isGlobalPtrType(Ctx, P->getType()) !=
                   isGlobalPtrType(Ctx, A->getType())) {
      bool WantGlobal = isGlobalPtrType(Ctx, P->getType());
      error(Ctx, A->getBeginLoc(),
            Where +
                (WantGlobal ? " is a local pointer, but parameter '"
                            : " is a GLOBAL pointer, but parameter '") +
                P->getNameAsString() + "' is " +
                (WantGlobal ? "GLOBAL" : "a local pointer"),
            WantGlobal ? "wrap the address with TO_GLOBAL(&x): the callee "
                         "may run on another node"
                       : "declare the parameter GLOBAL, or pass a local "
                         "pointer");
      F.Failed = true;
    }
  }
}

} // namespace

void check(CompilerInstance &CI, ThreadedFn &F) {
  ASTContext &Ctx = CI.getASTContext();
  const SourceManager &SM = Ctx.getSourceManager();
  const auto *Body = cast<CompoundStmt>(F.FD->getBody());
  Visitor V(CI, F);
  std::vector<const LabelStmt *> Top;
  for (const Stmt *S : Body->body())
    for (const auto *L = dyn_cast<LabelStmt>(S); L;
         L = dyn_cast<LabelStmt>(L->getSubStmt())) {
      Top.push_back(L);
      V.TopLabels.insert(L);
    }
  V.TraverseStmt(const_cast<CompoundStmt *>(Body));

  if (F.IsMain) {
    auto Params = F.FD->parameters();
    bool Ok = Params.empty() ||
              (Params.size() == 2 &&
               Params[0]->getType()->isSpecificBuiltinType(BuiltinType::Int) &&
               Params[1]->getType()->isPointerType());
    if (!Ok) {
      error(
          Ctx, F.FD->getLocation(), "THREADED main has unsupported parameters",
          "write 'THREADED main()' or 'THREADED main(int argc, char **argv)'");
      F.Failed = true;
    }
  }

  // Fibers: entry, then top-level labels that are numbered or named.
  std::set<std::string> Named;
  for (const Marker &M : F.Markers)
    if (!M.FiberName.empty())
      Named.insert(M.FiberName);
  F.Fibers.push_back(Fiber{"0", nullptr, 0, {}, {}});
  for (const LabelStmt *L : Top)
    if (isFiberNumberName(L->getName()) ||
        Named.count(std::string(L->getName())))
      F.Fibers.push_back(Fiber{std::string(L->getName()),
                               L,
                               fileOffset(SM, L->getIdentLoc()),
                               {},
                               {}});

  std::string Known;
  for (size_t I = 1; I < F.Fibers.size(); ++I)
    Known += (Known.empty() ? "" : ", ") + F.Fibers[I].Name;
  for (Marker &M : F.Markers) {
    unsigned Off = fileOffset(SM, M.Call->getBeginLoc());
    for (size_t I = 1; I < F.Fibers.size(); ++I)
      if (F.Fibers[I].Offset <= Off)
        M.Fiber = I;
    const char *Op = M.Kind == MarkerKind::InitSync ? "INIT_SYNC" : "SPAWN";
    if (M.Kind == MarkerKind::InitSync || M.Kind == MarkerKind::Spawn) {
      for (size_t I = 1; I < F.Fibers.size(); ++I)
        if (F.Fibers[I].Name == M.FiberName)
          M.Target = I;
      if (M.FiberName == "THREAD_0") {
        error(Ctx, M.Call->getBeginLoc(),
              std::string(Op) + " names fiber 0, the entry of '" + F.Name + "'",
              "fiber 0 runs once per invocation; put the code to repeat "
              "after a label such as THREAD_1:");
        F.Failed = true;
      } else if (M.Target < 0) {
        std::string Suggest;
        unsigned Best = 3;
        for (const LabelStmt *L : Top) {
          unsigned D = llvm::StringRef(L->getName()).edit_distance(M.FiberName);
          if (D <= Best) {
            Best = D;
            Suggest = L->getName();
          }
        }
        error(Ctx, M.Call->getBeginLoc(),
              std::string(Op) + " names fiber '" + M.FiberName +
                  "', but THREADED function '" + F.Name +
                  "' has no such label at the top level of its body" +
                  (Known.empty() ? "" : " (its fibers: " + Known + ")"),
              Suggest.empty()
                  ? "add the label '" + M.FiberName +
                        ":' at the top level of the function, or name an "
                        "existing fiber"
                  : "did you mean '" + Suggest + "'? (or add the label '" +
                        M.FiberName + ":' at the top level of the function)");
        F.Failed = true;
      }
    }
    if (M.Kind == MarkerKind::InitSync || M.Kind == MarkerKind::SlotIndex) {
      const Expr *S = M.Call->getArg(0);
      Expr::EvalResult R;
      if (!F.Slots) {
        error(Ctx, M.Call->getBeginLoc(),
              "THREADED function '" + F.Name +
                  "' uses a sync slot but "
                  "declares no slots",
              "declare 'SLOT SYNC_SLOTS[n];' at the top of its body");
        F.Failed = true;
      } else if (S->EvaluateAsInt(R, Ctx)) {
        int64_t I = R.Val.getInt().getExtValue();
        if (I < 0 || (uint64_t)I >= F.NumSlots) {
          error(Ctx, S->getBeginLoc(),
                "slot index " + std::to_string(I) + " is out of range: '" +
                    F.Name + "' declares SYNC_SLOTS[" +
                    std::to_string(F.NumSlots) + "]",
                "use an index from 0 to " + std::to_string(F.NumSlots - 1) +
                    ", or declare more slots");
          F.Failed = true;
        }
      }
    }
    if (M.Kind == MarkerKind::Invoke || M.Kind == MarkerKind::Token)
      checkCall(CI, F, M);
  }
}

} // namespace earthtc
