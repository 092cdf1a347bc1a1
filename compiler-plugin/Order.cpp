//===- Order.cpp - misuse of when and where, found on the AST
//--------------===//
//
// Mistakes whose code is valid C but cannot work under the fiber model:
//   * a THREADED function called like a C function (whole file);
//   * TO_GLOBAL of a local variable of a C function (whole file): it lives
//     on the C stack, gone when the function returns;
//   * the destination of a GET_SYNC_x / GET_RSYNC_x read later in the
//     fiber that issued the GET: the value arrives only when the GET's
//     slot fires, after the fiber has ended;
//   * a loop whose condition reads only volatile locals of the threaded
//     function that nothing in the loop writes: other fibers run only
//     after this one ends, so the loop never ends.
// The last two are the common forms (a variable named directly, source
// order within one fiber); docs/threaded-c.md says what is not caught.
//
//===----------------------------------------------------------------------===//
#include "EarthTC.h"
#include "clang/AST/RecursiveASTVisitor.h"

using namespace clang;

namespace earthtc {
namespace {

const VarDecl *namedVar(const Expr *E) {
  if (const auto *D = dyn_cast<DeclRefExpr>(E->IgnoreParens()))
    return dyn_cast<VarDecl>(D->getDecl());
  return nullptr;
}

// The variable whose address E takes (&x, &x[i], &x.f, an array x).
const VarDecl *addressedVar(const Expr *E) {
  E = E->IgnoreParenCasts();
  if (const auto *U = dyn_cast<UnaryOperator>(E)) {
    if (U->getOpcode() != UO_AddrOf)
      return nullptr;
    E = U->getSubExpr()->IgnoreParens();
    for (;;) {
      if (const auto *A = dyn_cast<ArraySubscriptExpr>(E)) {
        if (!A->getBase()->IgnoreParenImpCasts()->getType()->isArrayType())
          return nullptr;
        E = A->getBase()->IgnoreParenImpCasts();
      } else if (const auto *M = dyn_cast<MemberExpr>(E)) {
        if (M->isArrow())
          return nullptr;
        E = M->getBase()->IgnoreParens();
      } else {
        break;
      }
    }
    return namedVar(E);
  }
  const VarDecl *V = namedVar(E);
  return V && V->getType()->isArrayType() ? V : nullptr;
}

class FileUses : public RecursiveASTVisitor<FileUses> {
  ASTContext &Ctx;
  const FunctionDecl *Cur = nullptr;

public:
  explicit FileUses(ASTContext &Ctx) : Ctx(Ctx) {}

  bool TraverseFunctionDecl(FunctionDecl *FD) {
    const FunctionDecl *Save = Cur;
    Cur = FD;
    bool R = RecursiveASTVisitor::TraverseFunctionDecl(FD);
    Cur = Save;
    return R;
  }

  bool VisitCallExpr(CallExpr *C) {
    const SourceManager &SM = Ctx.getSourceManager();
    SourceLocation L = SM.getExpansionLoc(C->getBeginLoc());
    if (SM.isInSystemHeader(L) || SM.getFilename(L).endswith("threadedc.h"))
      return true;
    const FunctionDecl *FD = C->getDirectCallee();
    if (!FD)
      return true;
    std::string N = FD->getNameAsString();
    if (isThreaded(FD)) {
      error(Ctx, C->getBeginLoc(),
            "THREADED function '" + N + "' called like a C function",
            "a threaded function runs in its own frame, perhaps on another "
            "node, and returns nothing: start it with INVOKE(node, " +
                N + ", args...) or TOKEN(" + N +
                ", args...), and get its result through a 'T *GLOBAL' "
                "argument and a slot it signals (DATA_RSYNC_x)");
      return true;
    }
    if (N != "tc_to_global" || C->getNumArgs() != 1 || !Cur || isThreaded(Cur))
      return true;
    const VarDecl *V = addressedVar(C->getArg(0));
    if (!V || !V->hasLocalStorage())
      return true;
    std::string X = V->getNameAsString(), F = Cur->getNameAsString();
    error(Ctx, C->getBeginLoc(),
          "TO_GLOBAL of '" + X + "', a local variable of C function '" + F +
              "': it lives on the C stack, which is gone when '" + F +
              "' returns, before an operation through the GLOBAL pointer "
              "can reach it",
          "make '" + X +
              "' a local of a THREADED function (it lives in the frame "
              "until END_FUNCTION), static, or memory from earth_galloc or "
              "registered with earth_register_memory");
    return true;
  }
};

class FiberOrder : public RecursiveASTVisitor<FiberOrder> {
  ASTContext &Ctx;
  ThreadedFn &F;

  struct Get {
    unsigned Fiber, End;
    std::string Macro;
    unsigned Line;
  };
  std::map<const VarDecl *, std::vector<Get>> Gets;
  std::set<const VarDecl *> Reported;

public:
  FiberOrder(ASTContext &Ctx, ThreadedFn &F) : Ctx(Ctx), F(F) {}
  bool Collect = true;

  unsigned offset(SourceLocation L) {
    return fileOffset(Ctx.getSourceManager(), L);
  }
  unsigned fiberAt(SourceLocation L) {
    unsigned Off = offset(L), R = 0;
    for (size_t I = 1; I < F.Fibers.size(); ++I)
      if (F.Fibers[I].Offset <= Off)
        R = I;
    return R;
  }
  bool ownLocal(const VarDecl *V) {
    return V && V->hasLocalStorage() && V->getDeclContext() == F.FD;
  }

  bool VisitCallExpr(CallExpr *C) {
    if (!Collect || !C->getBeginLoc().isMacroID())
      return true;
    const FunctionDecl *FD = C->getDirectCallee();
    if (!FD || C->getNumArgs() != 3)
      return true;
    llvm::StringRef N = FD->getName();
    if (!N.startswith("earth_get_sync_") && !N.startswith("earth_get_rsync_"))
      return true;
    const VarDecl *V = addressedVar(C->getArg(1));
    if (!ownLocal(V) || V->getType()->isArrayType())
      return true;
    const SourceManager &SM = Ctx.getSourceManager();
    SourceLocation L = SM.getExpansionLoc(C->getBeginLoc());
    Gets[V].push_back(
        {fiberAt(L), offset(SM.getExpansionRange(C->getEndLoc()).getEnd()),
         N.drop_front(6).upper(), SM.getPresumedLoc(L).getLine()});
    return true;
  }

  bool VisitImplicitCastExpr(ImplicitCastExpr *I) {
    if (Collect || I->getCastKind() != CK_LValueToRValue)
      return true;
    const VarDecl *V = namedVar(I->getSubExpr());
    auto It = V ? Gets.find(V) : Gets.end();
    if (It == Gets.end() || Reported.count(V))
      return true;
    SourceLocation L = Ctx.getSourceManager().getExpansionLoc(I->getBeginLoc());
    unsigned Off = offset(L), Fb = fiberAt(L);
    for (const Get &G : It->second)
      if (G.Fiber == Fb && Off > G.End) {
        Reported.insert(V);
        std::string X = V->getNameAsString();
        error(Ctx, I->getBeginLoc(),
              "'" + X + "' is read in fiber " + F.Fibers[Fb].Name + " of '" +
                  F.Name + "', which issued " + G.Macro + " into it at line " +
                  std::to_string(G.Line) +
                  ": the value arrives only when that GET's slot fires, "
                  "after this fiber has ended",
              "read '" + X +
                  "' in the fiber the slot enables (INIT_SYNC(slot, count, "
                  "reset, THREAD_n); END_THREAD(); THREAD_n: ... " +
                  X + " ...)");
        F.Failed = true;
        break;
      }
    return true;
  }

  // Does S write V (assignment, ++/--, its address taken)?
  static bool writes(const Stmt *S, const VarDecl *V) {
    if (!S)
      return false;
    if (const auto *B = dyn_cast<BinaryOperator>(S))
      if (B->isAssignmentOp() && namedVar(B->getLHS()) == V)
        return true;
    if (const auto *U = dyn_cast<UnaryOperator>(S))
      if ((U->isIncrementDecrementOp() || U->getOpcode() == UO_AddrOf) &&
          namedVar(U->getSubExpr()) == V)
        return true;
    for (const Stmt *C : S->children())
      if (writes(C, V))
        return true;
    return false;
  }

  // The variables a condition reads; false if it reads anything else that
  // may change (a call, a dereference, a non-local).
  bool condVars(const Stmt *S, std::set<const VarDecl *> &Vs) {
    if (!S)
      return true;
    if (isa<CallExpr>(S) || isa<MemberExpr>(S) || isa<ArraySubscriptExpr>(S))
      return false;
    if (const auto *U = dyn_cast<UnaryOperator>(S))
      if (U->getOpcode() == UO_Deref)
        return false;
    if (const auto *D = dyn_cast<DeclRefExpr>(S)) {
      if (isa<EnumConstantDecl>(D->getDecl()))
        return true;
      const auto *V = dyn_cast<VarDecl>(D->getDecl());
      if (!ownLocal(V))
        return false;
      Vs.insert(V);
      return true;
    }
    for (const Stmt *C : S->children())
      if (!condVars(C, Vs))
        return false;
    return true;
  }

  void spin(const Stmt *Loop, const Expr *Cond, const Stmt *Body,
            const Stmt *Inc) {
    if (Collect || !Cond)
      return;
    std::set<const VarDecl *> Vs;
    if (!condVars(Cond, Vs) || Vs.empty())
      return;
    const VarDecl *Vol = nullptr;
    for (const VarDecl *V : Vs) {
      if (writes(Body, V) || writes(Inc, V) || writes(Cond, V))
        return;
      if (V->getType().isVolatileQualified())
        Vol = V;
    }
    if (!Vol)
      return;
    std::string X = Vol->getNameAsString();
    unsigned Fb = fiberAt(Loop->getBeginLoc());
    error(Ctx, Loop->getBeginLoc(),
          "this loop in fiber " + F.Fibers[Fb].Name + " of '" + F.Name +
              "' waits for volatile '" + X +
              "' to change, but nothing in the loop writes it: a fiber "
              "runs to its end, and the fibers and operations that would "
              "write '" +
              X + "' run only after it, so the loop never ends",
          "end this fiber with END_THREAD() and have the writer signal a "
          "slot (SYNC(k), DATA_SYNC_x) that enables the fiber that goes on");
    F.Failed = true;
  }
  bool VisitWhileStmt(WhileStmt *W) {
    spin(W, W->getCond(), W->getBody(), nullptr);
    return true;
  }
  bool VisitDoStmt(DoStmt *D) {
    spin(D, D->getCond(), D->getBody(), nullptr);
    return true;
  }
  bool VisitForStmt(ForStmt *S) {
    spin(S, S->getCond(), S->getBody(), S->getInc());
    return true;
  }
};

} // namespace

void checkFileUses(ASTContext &Ctx) {
  FileUses V(Ctx);
  V.TraverseDecl(Ctx.getTranslationUnitDecl());
}

void checkFiberOrder(CompilerInstance &CI, ThreadedFn &F) {
  FiberOrder V(CI.getASTContext(), F);
  Stmt *Body = F.FD->getBody();
  V.TraverseStmt(Body);
  V.Collect = false;
  V.TraverseStmt(Body);
}

} // namespace earthtc
