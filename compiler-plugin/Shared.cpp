//===- Shared.cpp - accesses through SHARED pointers ----------------------===//
//
// Every access through a SHARED pointer (`*p`, `p[i]`, `p->f`, also behind
// a cast) in a threaded function must lie in a range the fiber chain holds:
//
//   * an acquire (ACQUIRE_R_SYNC / ACQUIRE_W_SYNC) whose slot enabled the
//     fiber: the slot is attached to this fiber only, its address is never
//     taken, and its count equals the operations that signal it, so every
//     firing waited for the acquire (Direct);
//   * or an acquire held at the start of every fiber that enables this
//     one, with no RELEASE_SYNC of the same pointer in that fiber (In and
//     Out, a greatest fixed point over the fibers; fiber 0 holds nothing).
//
// Ranges are polynomials (Range.h) over integer constants and stable variables
// (parameters never assigned, locals assigned only by their declaration):
// an access p[e] inside `for (i = A; i < B; i++)` loops spans e with each
// loop variable from its first to its last value, innermost loop first,
// the end each takes decided by the sign of what multiplies it (proved
// from what holds wherever the access runs: range()). Covered when the
// differences to the acquired [lo, lo + n) are constants of the right
// sign; anything else is an error telling how to acquire the range. A
// write needs an acquire for write. A nest at the top level of the body
// whose range is known gets its acquires inserted instead (insertAll). In
// C functions, accesses through SHARED pointers are errors (they cannot
// see an acquire).
//
//===----------------------------------------------------------------------===//
#include "EarthTC.h"
#include "Range.h"
#include "clang/AST/Attr.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/TypeLoc.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>

using namespace clang;

namespace earthtc {

bool isSharedPtrType(ASTContext &Ctx, QualType T) {
  while (!T.isNull()) {
    if (const auto *MQ = dyn_cast<MacroQualifiedType>(T.getTypePtr())) {
      llvm::StringRef N = MQ->getMacroIdentifier()->getName();
      if (N == "SHARED")
        return true;
      if (N == "GLOBAL")
        return false;
    }
    // Two btf_type_tag attributes, one inside the other (threadedc.h):
    // what SHARED leaves where no macro qualifier is kept.
    if (const auto *AT = dyn_cast<AttributedType>(T.getTypePtr()))
      if (AT->getAttrKind() == attr::BTFTypeTag)
        if (const auto *In =
                dyn_cast<AttributedType>(AT->getModifiedType().getTypePtr()))
          if (In->getAttrKind() == attr::BTFTypeTag)
            return true;
    QualType Next = T.getSingleStepDesugaredType(Ctx);
    if (Next == T)
      break;
    T = Next;
  }
  return false;
}

bool hasSharedType(ASTContext &Ctx, const Expr *E) {
  return isSharedPtrType(Ctx, E->getType()) ||
         isSharedPtrType(Ctx, E->IgnoreParenImpCasts()->getType());
}

const Expr *sharedOperand(ASTContext &Ctx, const Expr *E) {
  E = E->IgnoreParens();
  if (hasSharedType(Ctx, E))
    return E;
  if (const auto *C = dyn_cast<CastExpr>(E))
    return sharedOperand(Ctx, C->getSubExpr());
  if (const auto *U = dyn_cast<UnaryOperator>(E)) {
    if (U->getOpcode() != UO_AddrOf)
      return nullptr;
    const Expr *S = U->getSubExpr()->IgnoreParens();
    if (const auto *A = dyn_cast<ArraySubscriptExpr>(S))
      return sharedOperand(Ctx, A->getBase());
    if (const auto *M = dyn_cast<MemberExpr>(S))
      if (M->isArrow())
        return sharedOperand(Ctx, M->getBase());
    if (const auto *D = dyn_cast<UnaryOperator>(S))
      if (D->getOpcode() == UO_Deref)
        return sharedOperand(Ctx, D->getSubExpr());
    return nullptr;
  }
  if (const auto *B = dyn_cast<BinaryOperator>(E)) {
    if (B->isAdditiveOp())
      return sharedOperand(Ctx, B->getLHS()->getType()->isPointerType()
                                    ? B->getLHS()
                                    : B->getRHS());
    if (B->getOpcode() == BO_Comma)
      return sharedOperand(Ctx, B->getRHS());
  }
  if (const auto *C = dyn_cast<AbstractConditionalOperator>(E)) {
    if (const Expr *S = sharedOperand(Ctx, C->getTrueExpr()))
      return S;
    return sharedOperand(Ctx, C->getFalseExpr());
  }
  return nullptr;
}

std::string sharedName(const Expr *S) {
  S = S->IgnoreParenCasts();
  while (const auto *B = dyn_cast<BinaryOperator>(S)) {
    if (!B->isAdditiveOp() || !B->getLHS()->getType()->isPointerType())
      break;
    S = B->getLHS()->IgnoreParenCasts();
  }
  if (const auto *DR = dyn_cast<DeclRefExpr>(S->IgnoreParenImpCasts()))
    return "SHARED pointer '" + DR->getDecl()->getNameAsString() + "'";
  return "a SHARED pointer";
}

namespace {

// A for loop `for (i = A; i < B; i++)` (or `int i = A`, `<=`, `++i`,
// `i += c` with a constant c > 0; or down: `>` / `>=`, `i--`, `i -= c`,
// a signed i) whose body never assigns i.
struct Loop {
  const ForStmt *For;
  const VarDecl *Var;
  const Expr *From, *To; // To: the last value is To - 1 (To, for <=)
  bool Inclusive;
  bool Down; // i > B / i >= B, i decreasing: values from To (+ 1) to From
};

struct Acquire {
  const CallExpr *Call;
  unsigned Fiber;
  const VarDecl *Base = nullptr;
  Poly Lo, N;
  std::vector<Poly> Needs; // N elements only where each is >= 0, else none
  bool Write = false, Release = false;
  int Slot = -1; // -1: an RSYNC form, or not a constant
  std::string Op;
  unsigned Line;
};

struct Access {
  const Expr *E;
  const Expr *SharedExpr;
  SourceLocation Loc;
  unsigned Fiber;
  const VarDecl *Base = nullptr;
  const Expr *Index = nullptr; // null: element 0
  const Expr *Count = nullptr; // SHARED_ARG_x: elements from Index on
  bool NotArgument = false;    // SHARED_ARG_x written elsewhere
  bool Write = false;
  bool CastMismatch = false;
  std::vector<Loop> Loops; // enclosing, outermost first
  std::string Why;         // why its range is not known (range())
};

class Finder : public RecursiveASTVisitor<Finder> {
public:
  ASTContext &Ctx;
  std::vector<Access> Accesses;
  std::vector<const CallExpr *> Calls;
  std::set<const VarDecl *> Assigned;
  std::vector<std::pair<const VarDecl *, SourceLocation>> Stores;
  std::vector<Loop> LoopStack;
  int Unevaluated = 0;
  explicit Finder(ASTContext &Ctx) : Ctx(Ctx) {}

  bool inHeader(SourceLocation L) {
    const SourceManager &SM = Ctx.getSourceManager();
    return SM.getFilename(SM.getSpellingLoc(L)).endswith("threadedc.h");
  }

  bool TraverseUnaryExprOrTypeTraitExpr(UnaryExprOrTypeTraitExpr *E) {
    ++Unevaluated;
    bool R = RecursiveASTVisitor::TraverseUnaryExprOrTypeTraitExpr(E);
    --Unevaluated;
    return R;
  }

  static const VarDecl *varOf(const Expr *E) {
    if (const auto *D = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts()))
      return dyn_cast<VarDecl>(D->getDecl());
    return nullptr;
  }

  bool loopOf(const ForStmt *S, Loop &L) {
    L.For = S;
    const VarDecl *V = nullptr;
    const Expr *From = nullptr;
    if (const auto *DS = dyn_cast_or_null<DeclStmt>(S->getInit())) {
      if (DS->isSingleDecl())
        if ((V = dyn_cast<VarDecl>(DS->getSingleDecl())))
          From = V->getInit();
    } else if (const auto *B = dyn_cast_or_null<BinaryOperator>(S->getInit())) {
      if (B->getOpcode() == BO_Assign) {
        V = varOf(B->getLHS());
        From = B->getRHS();
      }
    }
    const auto *C = dyn_cast_or_null<BinaryOperator>(S->getCond());
    if (!V || !From || !C || !V->getType()->isIntegerType() ||
        varOf(C->getLHS()) != V)
      return false;
    BinaryOperatorKind Op = C->getOpcode();
    bool Down = Op == BO_GT || Op == BO_GE;
    if (!Down && Op != BO_LT && Op != BO_LE)
      return false;
    // The step: a constant of the direction the condition ends (the
    // values visited then lie between the first and the bound).
    const Expr *Inc = S->getInc() ? S->getInc()->IgnoreParens() : nullptr;
    int64_t By = 0;
    if (const auto *U = dyn_cast_or_null<UnaryOperator>(Inc)) {
      if (varOf(U->getSubExpr()) == V)
        By = U->isIncrementOp() ? 1 : U->isDecrementOp() ? -1 : 0;
    } else if (const auto *B = dyn_cast_or_null<CompoundAssignOperator>(Inc)) {
      Expr::EvalResult R;
      if ((B->getOpcode() == BO_AddAssign || B->getOpcode() == BO_SubAssign) &&
          varOf(B->getLHS()) == V && B->getRHS()->EvaluateAsInt(R, Ctx)) {
        By = R.Val.getInt().getExtValue();
        if (B->getOpcode() == BO_SubAssign)
          By = -By;
      }
    }
    // Counting down an unsigned variable to a bound of 0 wraps instead
    // of ending: not a range.
    if ((Down ? By >= 0 : By <= 0) ||
        (Down && V->getType()->isUnsignedIntegerType()))
      return false;
    L.Var = V;
    L.From = From;
    L.To = C->getRHS();
    L.Inclusive = Op == BO_LE || Op == BO_GE;
    L.Down = Down;
    return true;
  }

  bool TraverseForStmt(ForStmt *S) {
    Loop L;
    bool Is = loopOf(S, L);
    if (S->getInit())
      TraverseStmt(S->getInit());
    if (S->getCond())
      TraverseStmt(S->getCond());
    if (S->getInc())
      TraverseStmt(S->getInc());
    if (Is)
      LoopStack.push_back(L);
    size_t First = Accesses.size();
    TraverseStmt(S->getBody());
    if (Is) {
      LoopStack.pop_back();
      // The body assigns the loop variable: the loop is not a plain range.
      if (Assigned.count(L.Var) && BodyAssigns(S->getBody(), L.Var))
        for (size_t I = First; I < Accesses.size(); ++I)
          llvm::erase_if(Accesses[I].Loops,
                         [&](const Loop &X) { return X.For == S; });
    }
    return true;
  }

  bool BodyAssigns(const Stmt *Body, const VarDecl *V) {
    Finder Sub(Ctx);
    Sub.TraverseStmt(const_cast<Stmt *>(Body));
    return Sub.Assigned.count(V);
  }

  void assigned(const Expr *E) {
    if (const VarDecl *V = varOf(E)) {
      Assigned.insert(V);
      Stores.push_back({V, E->getBeginLoc()});
    }
  }
  bool VisitBinaryOperator(BinaryOperator *B) {
    if (B->isAssignmentOp())
      assigned(B->getLHS());
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator *U) {
    if (U->isIncrementDecrementOp() || U->getOpcode() == UO_AddrOf)
      assigned(U->getSubExpr());
    if (U->getOpcode() == UO_Deref)
      access(U, U->getSubExpr(), nullptr, U->getOperatorLoc());
    return true;
  }
  bool VisitArraySubscriptExpr(ArraySubscriptExpr *A) {
    access(A, A->getBase(), A->getIdx(), A->getExprLoc());
    return true;
  }
  bool VisitMemberExpr(MemberExpr *M) {
    if (M->isArrow())
      access(M, M->getBase(), nullptr, M->getOperatorLoc());
    return true;
  }
  bool VisitCallExpr(CallExpr *C) {
    Calls.push_back(C);
    if (const FunctionDecl *FD = C->getDirectCallee())
      if ((FD->getName() == "tc_shared_arg_r_" ||
           FD->getName() == "tc_shared_arg_w_") &&
          C->getNumArgs() == 2 && !Unevaluated)
        argument(C, FD->getName() == "tc_shared_arg_w_");
    return true;
  }

  // SHARED_ARG_R / _W (threadedc.h): the range [p, p + n) as an access,
  // and whether the macro's value is an argument of a call.
  void argument(const CallExpr *C, bool Write) {
    const SourceManager &SM = Ctx.getSourceManager();
    const Expr *P = C->getArg(0)->IgnoreParenImpCasts();
    const Expr *S = sharedOperand(Ctx, P);
    if (!S)
      return;
    Access A;
    A.E = P;
    A.SharedExpr = S;
    A.Loc = SM.getExpansionLoc(C->getBeginLoc());
    A.Write = Write;
    A.Loops = LoopStack;
    A.Count = C->getArg(1)->IgnoreParenCasts();
    const Expr *B = P, *Off = nullptr;
    if (const auto *BO = dyn_cast<BinaryOperator>(P))
      if (BO->getOpcode() == BO_Add &&
          BO->getLHS()->getType()->isPointerType()) {
        B = BO->getLHS()->IgnoreParenImpCasts();
        Off = BO->getRHS();
      }
    if (const auto *U = dyn_cast<UnaryOperator>(P))
      if (U->getOpcode() == UO_AddrOf)
        if (const auto *AS =
                dyn_cast<ArraySubscriptExpr>(U->getSubExpr()->IgnoreParens())) {
          B = AS->getBase()->IgnoreParenImpCasts();
          Off = AS->getIdx();
        }
    A.Base = varOf(B);
    if (A.Base && !isSharedPtrType(Ctx, A.Base->getType()))
      A.Base = nullptr;
    A.Index = Off;
    // The macro's value: the call, its cast, then an argument of a call.
    const Expr *Cur = C;
    for (;;) {
      auto Ps = Ctx.getParents(*Cur);
      const auto *Up = Ps.empty() ? nullptr : Ps[0].get<Expr>();
      if (Up && (isa<ParenExpr>(Up) || isa<CastExpr>(Up))) {
        Cur = Up;
        continue;
      }
      const auto *Call = dyn_cast_or_null<CallExpr>(Up);
      A.NotArgument = !Call || Call->getCallee() == Cur;
      // A C function's: not an operation of the language or the runtime
      // (INVOKE, TOKEN, TO_GLOBAL, ...), whose callee runs later.
      if (const FunctionDecl *FD = Call ? Call->getDirectCallee() : nullptr) {
        llvm::StringRef N = FD->getName();
        A.NotArgument |= isThreaded(FD) || N.startswith("__tc_") ||
                         N.startswith("tc_") || N.startswith("earth_");
      }
      break;
    }
    Accesses.push_back(A);
  }

  // Is E (an lvalue of shared memory) written, read, or only addressed?
  // 0 read, 1 written (also read by compound forms), 2 not an access.
  int useOf(const Expr *E) {
    const Expr *Cur = E;
    for (;;) {
      auto Ps = Ctx.getParents(*Cur);
      if (Ps.empty())
        return 0;
      const auto *P = Ps[0].get<Expr>();
      if (!P)
        return 0;
      if (isa<ParenExpr>(P)) {
        Cur = P;
        continue;
      }
      if (const auto *M = dyn_cast<MemberExpr>(P)) {
        if (!M->isArrow()) {
          Cur = P;
          continue;
        }
        return 2; // (p->s)->f: the outer access is checked itself
      }
      if (const auto *A = dyn_cast<ArraySubscriptExpr>(P)) {
        if (A->getBase()->IgnoreParenImpCasts() == Cur &&
            Cur->getType()->isArrayType()) {
          Cur = P;
          continue;
        }
        return 0;
      }
      if (const auto *B = dyn_cast<BinaryOperator>(P))
        return B->isAssignmentOp() && B->getLHS()->IgnoreParens() == Cur ? 1
                                                                         : 0;
      if (const auto *U = dyn_cast<UnaryOperator>(P)) {
        if (U->isIncrementDecrementOp())
          return 1;
        if (U->getOpcode() == UO_AddrOf)
          return 2;
        return 0;
      }
      if (const auto *IC = dyn_cast<ImplicitCastExpr>(P))
        return IC->getCastKind() == CK_ArrayToPointerDecay ? 2 : 0;
      return 0;
    }
  }

  void access(const Expr *E, const Expr *Base, const Expr *Idx,
              SourceLocation L) {
    if (Unevaluated || inHeader(L))
      return;
    const Expr *S = sharedOperand(Ctx, Base);
    if (!S)
      return;
    int Use = useOf(E);
    if (Use == 2)
      return;
    Access A;
    A.E = E;
    A.SharedExpr = S;
    A.Loc = L;
    A.Write = Use == 1;
    A.Loops = LoopStack;
    // The base variable and the index, in elements of its pointee.
    const Expr *B = Base->IgnoreParenImpCasts();
    const Expr *Off = Idx;
    if (const auto *BO = dyn_cast<BinaryOperator>(B))
      if (BO->getOpcode() == BO_Add && !Idx &&
          BO->getLHS()->getType()->isPointerType()) {
        B = BO->getLHS()->IgnoreParenImpCasts();
        Off = BO->getRHS();
      }
    if (const auto *C = dyn_cast<ExplicitCastExpr>(B)) {
      const VarDecl *V = varOf(C->getSubExpr());
      if (V && C->getType()->isPointerType() && V->getType()->isPointerType() &&
          Ctx.getTypeSizeInChars(C->getType()->getPointeeType()) !=
              Ctx.getTypeSizeInChars(V->getType()->getPointeeType()))
        A.CastMismatch = true;
      B = C->getSubExpr()->IgnoreParenImpCasts();
    }
    A.Base = varOf(B);
    if (A.Base && !isSharedPtrType(Ctx, A.Base->getType()))
      A.Base = nullptr;
    A.Index = Off;
    Accesses.push_back(A);
  }
};

class SharedCheck {
  ASTContext &Ctx;
  const SourceManager &SM;
  ThreadedFn &F;
  Finder Fd;
  std::vector<Acquire> Acqs;
  // Per slot: its armings (INIT_SYNCs: fiber, offset, target, count) and
  // its signals and address-takings (fiber, offset). A signal belongs to
  // the last arming before it in its fiber (source order), or to none
  // (stray: it may fire any of the slot's fibers).
  struct Arming {
    unsigned Fiber, Off;
    int Target;
    int64_t Count;
    unsigned Signals = 0;
    bool Escapes = false;
  };
  struct SlotUse {
    std::vector<Arming> Arms;
    std::vector<std::pair<unsigned, unsigned>> Sources, Escapes;
    bool Stray = false;
    std::set<int> Targets;
  };
  // The arming a signal at (J, Off) of slot S belongs to; -1: none.
  int armingOf(const SlotUse &S, unsigned J, unsigned Off) {
    int Best = -1;
    for (size_t I = 0; I < S.Arms.size(); ++I)
      if (S.Arms[I].Fiber == J && S.Arms[I].Off < Off &&
          (Best < 0 || S.Arms[I].Off > S.Arms[Best].Off))
        Best = (int)I;
    return Best;
  }
  std::vector<std::set<const VarDecl *>> StoredIn;
  std::map<int, SlotUse> Slots;
  bool UnknownSlot = false;
  std::vector<std::set<unsigned>> Pred;
  std::vector<bool> PredUnknown;
  std::vector<std::set<unsigned>> Direct, In, Out;

  bool MayInsert;
  // Loops that get an inserted acquire: per (top-level loop, pointer),
  // the accesses' ranges.
  struct Pending {
    const ForStmt *Loop;
    const VarDecl *Base;
    std::vector<std::pair<Poly, Poly>> Ranges;
    std::vector<const Access *> Accesses;
    bool Write = false;
    std::vector<Poly> Guards; // those every access's range has
  };
  std::vector<Pending> Pend;

public:
  SharedCheck(CompilerInstance &CI, ThreadedFn &F, bool MayInsert)
      : Ctx(CI.getASTContext()), SM(Ctx.getSourceManager()), F(F), Fd(Ctx),
        MayInsert(MayInsert) {}

  unsigned fiberAt(SourceLocation L) {
    unsigned Off = fileOffset(SM, L), R = 0;
    for (size_t I = 1; I < F.Fibers.size(); ++I)
      if (F.Fibers[I].Offset <= Off)
        R = I;
    return R;
  }
  unsigned lineOf(SourceLocation L) {
    return SM.getPresumedLoc(SM.getExpansionLoc(L)).getLine();
  }
  std::string text(const Expr *E) {
    CharSourceRange R = CharSourceRange::getTokenRange(
        SM.getFileLoc(E->getBeginLoc()), SM.getFileLoc(E->getEndLoc()));
    return Lexer::getSourceText(R, SM, Ctx.getLangOpts()).str();
  }

  bool stable(const VarDecl *V) {
    if (V->getType().isConstQualified())
      return true;
    if (!V->hasLocalStorage())
      return false;
    return !Fd.Assigned.count(V);
  }

  Poly poly(const Expr *E, const std::map<const VarDecl *, Poly> &Sub = {}) {
    if (!E)
      return Poly::constant(0);
    E = E->IgnoreParenImpCasts();
    Expr::EvalResult R;
    if (!E->isValueDependent() && E->EvaluateAsInt(R, Ctx))
      return Poly::constant(R.Val.getInt().getExtValue());
    if (const auto *D = dyn_cast<DeclRefExpr>(E))
      if (const auto *V = dyn_cast<VarDecl>(D->getDecl())) {
        auto It = Sub.find(V);
        if (It != Sub.end())
          return It->second;
        if (!stable(V) || !V->getType()->isIntegerType())
          return Poly::bad();
        // A local set only by a constant initialiser: that constant
        // wherever it is in scope.
        Expr::EvalResult IR;
        if (V->hasLocalStorage() && !isa<ParmVarDecl>(V) && V->getInit() &&
            !V->getInit()->isValueDependent() &&
            V->getInit()->EvaluateAsInt(IR, Ctx))
          return Poly::constant(IR.Val.getInt().getExtValue());
        return Poly::var(V);
      }
    if (const auto *C = dyn_cast<CStyleCastExpr>(E))
      if (C->getType()->isIntegerType())
        return poly(C->getSubExpr(), Sub);
    if (const auto *B = dyn_cast<BinaryOperator>(E)) {
      Poly A = poly(B->getLHS(), Sub), C = poly(B->getRHS(), Sub);
      switch (B->getOpcode()) {
      case BO_Add:
        return A + C;
      case BO_Sub:
        return A - C;
      case BO_Mul:
        return A * C;
      default:
        return Poly::bad();
      }
    }
    if (const auto *U = dyn_cast<UnaryOperator>(E)) {
      if (U->getOpcode() == UO_Minus)
        return poly(U->getSubExpr(), Sub).scaled(-1);
      if (U->getOpcode() == UO_Plus)
        return poly(U->getSubExpr(), Sub);
    }
    return Poly::bad();
  }

  // A count: a polynomial, or `cond ? n : 0` (what the plugin inserts
  // around a nest) with cond a conjunction of comparisons, each put in
  // Needs as a polynomial that is >= 0 where it holds.
  Poly count(const Expr *E, std::vector<Poly> &Needs) {
    E = E->IgnoreParenCasts();
    const auto *C = dyn_cast<ConditionalOperator>(E);
    Expr::EvalResult R;
    if (!C)
      return poly(E);
    if (!C->getFalseExpr()->EvaluateAsInt(R, Ctx) ||
        R.Val.getInt().getExtValue() != 0 || !condition(C->getCond(), Needs))
      return Poly::bad();
    return poly(C->getTrueExpr());
  }
  bool condition(const Expr *E, std::vector<Poly> &Needs) {
    const auto *B = dyn_cast<BinaryOperator>(E->IgnoreParenImpCasts());
    if (!B)
      return false;
    if (B->getOpcode() == BO_LAnd)
      return condition(B->getLHS(), Needs) && condition(B->getRHS(), Needs);
    Poly L = poly(B->getLHS()), R = poly(B->getRHS());
    switch (B->getOpcode()) {
    case BO_GE:
      Needs.push_back(L - R);
      break;
    case BO_GT:
      Needs.push_back(L - R - Poly::constant(1));
      break;
    case BO_LE:
      Needs.push_back(R - L);
      break;
    case BO_LT:
      Needs.push_back(R - L - Poly::constant(1));
      break;
    default:
      return false;
    }
    return Needs.back().Ok;
  }

  // The slot a runtime call's argument names through TC_SLOT_(s):
  // -1 none, -2 not a constant.
  int slotIn(const Expr *E, bool &Found) {
    struct V : RecursiveASTVisitor<V> {
      ASTContext &Ctx;
      int Slot = -1;
      bool Found = false;
      explicit V(ASTContext &Ctx) : Ctx(Ctx) {}
      bool VisitCallExpr(CallExpr *C) {
        const FunctionDecl *FD = C->getDirectCallee();
        if (FD && FD->getName() == "__tc_slot_index" && C->getNumArgs()) {
          Found = true;
          Expr::EvalResult R;
          Slot = C->getArg(0)->EvaluateAsInt(R, Ctx)
                     ? (int)R.Val.getInt().getExtValue()
                     : -2;
        }
        return true;
      }
    } Vis(Ctx);
    Vis.TraverseStmt(const_cast<Expr *>(E));
    Found = Vis.Found;
    return Vis.Slot;
  }

  void collectSlots() {
    for (const Marker &M : F.Markers)
      if (M.Kind == MarkerKind::InitSync) {
        Expr::EvalResult R, C;
        if (!M.Call->getArg(0)->EvaluateAsInt(R, Ctx)) {
          UnknownSlot = true;
          continue;
        }
        SlotUse &S = Slots[(int)R.Val.getInt().getExtValue()];
        S.Targets.insert(M.Target);
        int64_t Cnt = M.Call->getArg(1)->EvaluateAsInt(C, Ctx)
                          ? C.Val.getInt().getExtValue()
                          : -1;
        S.Arms.push_back(
            {M.Fiber, fileOffset(SM, M.Call->getBeginLoc()), M.Target, Cnt});
      }
    for (const CallExpr *C : Fd.Calls) {
      const FunctionDecl *FD = C->getDirectCallee();
      if (!FD || FD->getName() == "__tc_slot_index" ||
          FD->getName().startswith("__tc_"))
        continue;
      for (const Expr *A : C->arguments()) {
        bool Found;
        int S = slotIn(A, Found);
        if (!Found)
          continue;
        // Only the slot argument itself: not a call nested in it.
        if (const auto *IC = dyn_cast<CallExpr>(A->IgnoreParenImpCasts()))
          if (IC->getDirectCallee() &&
              IC->getDirectCallee()->getName() != "__tc_slot_index")
            continue;
        if (S < 0) {
          UnknownSlot = true;
          continue;
        }
        std::pair<unsigned, unsigned> At{fiberAt(C->getBeginLoc()),
                                         fileOffset(SM, C->getBeginLoc())};
        if (FD->getName() == "earth_slot_global")
          Slots[S].Escapes.push_back(At);
        else
          Slots[S].Sources.push_back(At);
      }
    }
    for (auto &P : Slots) {
      SlotUse &S = P.second;
      for (const auto &At : S.Sources) {
        int A = armingOf(S, At.first, At.second);
        if (A < 0)
          S.Stray = true;
        else
          S.Arms[A].Signals++;
      }
      for (const auto &At : S.Escapes) {
        int A = armingOf(S, At.first, At.second);
        if (A < 0)
          S.Stray = true;
        else
          S.Arms[A].Escapes = true;
      }
    }
  }

  void collectAcquires() {
    for (const CallExpr *C : Fd.Calls) {
      const FunctionDecl *FD = C->getDirectCallee();
      if (!FD || !C->getBeginLoc().isMacroID())
        continue;
      llvm::StringRef N = FD->getName();
      bool ByN = N.startswith("tc_dsm_"); // ACQUIRE_x_N_SYNC, RELEASE_N_SYNC
      bool Acq = N.startswith("earth_dsm_acquire_") || N == "tc_dsm_acquire_n";
      bool Rel = N.startswith("earth_dsm_release_") || N == "tc_dsm_release_n";
      if (!Acq && !Rel)
        continue;
      Acquire A;
      A.Call = C;
      A.Fiber = fiberAt(C->getBeginLoc());
      A.Release = Rel;
      A.Line = lineOf(C->getBeginLoc());
      SourceLocation L = SM.getExpansionLoc(C->getBeginLoc());
      A.Op = std::string(SM.getCharacterData(L),
                         Lexer::MeasureTokenLength(L, SM, Ctx.getLangOpts()));
      if (Acq) {
        Expr::EvalResult R;
        A.Write = C->getArg(ByN ? 3 : 2)->EvaluateAsInt(R, Ctx) &&
                  R.Val.getInt().getExtValue() == 1;
      }
      // The pointer: p, p + e, &p[e].
      const Expr *P = C->getArg(0)->IgnoreParenImpCasts();
      Poly Off = Poly::constant(0);
      while (const auto *B = dyn_cast<BinaryOperator>(P)) {
        if ((B->getOpcode() != BO_Add && B->getOpcode() != BO_Sub) ||
            !B->getLHS()->getType()->isPointerType())
          break;
        Poly D = poly(B->getRHS());
        Off = Off + (B->getOpcode() == BO_Sub ? D.scaled(-1) : D);
        P = B->getLHS()->IgnoreParenImpCasts();
      }
      if (const auto *U = dyn_cast<UnaryOperator>(P)) {
        if (U->getOpcode() == UO_AddrOf)
          if (const auto *AS = dyn_cast<ArraySubscriptExpr>(
                  U->getSubExpr()->IgnoreParens())) {
            Off = poly(AS->getIdx());
            P = AS->getBase()->IgnoreParenImpCasts();
          }
      }
      if (const auto *D = dyn_cast<DeclRefExpr>(P))
        if (const auto *V = dyn_cast<VarDecl>(D->getDecl()))
          if (isSharedPtrType(Ctx, V->getType()))
            A.Base = V;
      A.Lo = Off;
      // The count: ((size_t)(n) * sizeof(*(p))).
      const Expr *Bytes = C->getArg(1)->IgnoreParenImpCasts();
      A.N = ByN ? count(C->getArg(1), A.Needs) : Poly::bad();
      if (const auto *M = ByN ? nullptr : dyn_cast<BinaryOperator>(Bytes))
        if (M->getOpcode() == BO_Mul)
          if (const auto *Cs =
                  dyn_cast<CStyleCastExpr>(M->getLHS()->IgnoreParens()))
            A.N = poly(Cs->getSubExpr());
      bool Found;
      int S = slotIn(C->getArg(C->getNumArgs() - 1), Found);
      A.Slot = Found ? S : -1;
      Acqs.push_back(A);
    }
  }

  // Which acquires each fiber holds at its start.
  void solve() {
    size_t NF = F.Fibers.size(), NA = Acqs.size();
    Pred.assign(NF, {});
    PredUnknown.assign(NF, false);
    Direct.assign(NF, {});
    for (const Marker &M : F.Markers)
      if (M.Kind == MarkerKind::Spawn && M.Target >= 0)
        Pred[M.Target].insert(M.Fiber);
    // Edges: a signal goes to the fiber of its arming, or, stray, to any
    // of the slot's fibers; a slot whose address is taken may be
    // signalled from anywhere.
    for (auto &P : Slots) {
      SlotUse &S = P.second;
      auto all = [&](unsigned J, bool Unknown) {
        for (int T : S.Targets)
          if (T >= 0) {
            Pred[T].insert(J);
            PredUnknown[T] = PredUnknown[T] || Unknown;
          }
      };
      for (const auto &At : S.Sources) {
        int A = armingOf(S, At.first, At.second);
        if (A >= 0 && S.Arms[A].Target >= 0)
          Pred[S.Arms[A].Target].insert(At.first);
        else
          all(At.first, false);
      }
      for (const auto &At : S.Escapes) {
        int A = armingOf(S, At.first, At.second);
        if (A >= 0 && S.Arms[A].Target >= 0)
          PredUnknown[S.Arms[A].Target] = true;
        else
          all(At.first, true);
      }
      if (UnknownSlot)
        all(0, true);
    }
    // An acquire enables the fiber of its arming when that arming waits
    // for exactly the signals that follow it in its fiber, no one else
    // can signal the slot (no stray signal, no SLOT_ADR for it): each
    // firing waited for the acquire.
    for (size_t I = 0; I < NA; ++I) {
      const Acquire &A = Acqs[I];
      if (A.Release || A.Slot < 0 || UnknownSlot)
        continue;
      const SlotUse &S = Slots[A.Slot];
      int M = armingOf(S, A.Fiber, fileOffset(SM, A.Call->getBeginLoc()));
      if (S.Stray || M < 0)
        continue;
      const Arming &Am = S.Arms[M];
      if (Am.Target < 0 || Am.Escapes || Am.Count != (int64_t)Am.Signals)
        continue;
      Direct[Am.Target].insert(I);
    }
    std::vector<std::set<const VarDecl *>> Stored(NF);
    for (const auto &P : Fd.Stores)
      Stored[fiberAt(P.second)].insert(P.first);
    StoredIn = Stored;
    std::set<unsigned> All;
    for (size_t I = 0; I < NA; ++I)
      if (!Acqs[I].Release)
        All.insert(I);
    In.assign(NF, All);
    In[0].clear();
    Out.assign(NF, {});
    for (bool Changed = true; Changed;) {
      Changed = false;
      for (size_t K = 0; K < NF; ++K) {
        std::set<unsigned> O = In[K];
        for (auto It = O.begin(); It != O.end();)
          It = Stored[K].count(Acqs[*It].Base) ? O.erase(It) : std::next(It);
        for (const Acquire &R : Acqs)
          if (R.Release && R.Fiber == K)
            for (auto It = O.begin(); It != O.end();)
              It = Acqs[*It].Base == R.Base || !R.Base ? O.erase(It)
                                                       : std::next(It);
        Out[K] = O;
      }
      for (size_t K = 1; K < NF; ++K) {
        std::set<unsigned> N;
        if (!PredUnknown[K] && !Pred[K].empty()) {
          N = All;
          for (unsigned J : Pred[K]) {
            std::set<unsigned> X;
            for (unsigned A : N)
              if (Out[J].count(A))
                X.insert(A);
            N = X;
          }
        }
        N.insert(Direct[K].begin(), Direct[K].end());
        if (N != In[K]) {
          In[K] = N;
          Changed = true;
        }
      }
    }
  }

  // The range [Lo, Hi] of an access's index over the loops around it, in
  // variables that stay the same through the loops. Loops are taken
  // innermost first: the index is C * v + R in the loop's variable v, and
  // v goes to its first value in Lo where C >= 0 (its last where C <= 0),
  // the other way in Hi; a loop's bounds may name the variables of the
  // loops outside it, which the next steps replace in turn. The sign of C
  // comes from what holds wherever the access runs (Facts): every loop
  // around it runs, so its last value is at least its first, and each
  // loop variable lies between them. Guards gets the facts in stable
  // variables only (an inserted acquire asks for nothing where one fails:
  // no access runs then). False with why where the range is not known.
  bool range(const Access &A, Poly &Lo, Poly &Hi, std::string &Why,
             std::vector<Poly> *Guards = nullptr,
             std::vector<Poly> *Holds = nullptr) {
    std::map<const VarDecl *, Poly> Id;
    for (const Loop &L : A.Loops)
      Id[L.Var] = Poly::var(L.Var);
    Poly E = poly(A.Index, Id);
    if (!E.Ok) {
      Why = "the index is not a sum of products of constants, loop "
            "variables and variables set only where declared";
      return false;
    }
    std::vector<Poly> First, Last, Facts;
    for (const Loop &L : A.Loops) {
      // First: the least value, Last: the greatest.
      Poly From = poly(L.From, Id),
           Bound = poly(L.To, Id) + Poly::constant(L.Inclusive ? 0
                                                   : L.Down    ? 1
                                                               : -1);
      First.push_back(L.Down ? Bound : From);
      Last.push_back(L.Down ? From : Bound);
      if (!First.back().Ok || !Last.back().Ok) {
        Why = "the bounds of the loop over '" + L.Var->getNameAsString() +
              "' are not sums of products of constants, outer loop "
              "variables and variables set only where declared";
        return false;
      }
      Poly Runs = Last.back() - First.back();
      Facts.push_back(Runs);
      Facts.push_back(Poly::var(L.Var) - First.back());
      Facts.push_back(Last.back() - Poly::var(L.Var));
      bool Stable = true;
      for (const VarDecl *V : Runs.vars())
        Stable &= !Id.count(V);
      if (Guards && Stable && !(Runs.isConst() && Runs.Const >= 0) &&
          std::find(Guards->begin(), Guards->end(), Runs) == Guards->end())
        Guards->push_back(Runs);
    }
    for (size_t I = 0, N = Facts.size(); I < N && Facts.size() < 256; ++I)
      for (size_t J = I; J < N && Facts.size() < 256; ++J)
        if (!Facts[I].isConst() && !Facts[J].isConst()) {
          Poly P = Facts[I] * Facts[J];
          if (P.Ok)
            Facts.push_back(P);
        }
    if (Holds)
      *Holds = Facts;
    Lo = E;
    Hi = E;
    if (A.Count) { // SHARED_ARG_x: n elements from E on
      Poly N = poly(A.Count, Id);
      if (!N.Ok) {
        Why = "the count is not a sum of products of constants, loop "
              "variables and variables set only where declared";
        return false;
      }
      Hi = E + N - Poly::constant(1);
    }
    for (size_t K = A.Loops.size(); K-- > 0;) {
      const VarDecl *V = A.Loops[K].Var;
      for (Poly *X : {&Lo, &Hi}) {
        bool Min = X == &Lo;
        Poly C, R;
        if (!X->split(V, C, R)) {
          Why = "'" + V->getNameAsString() +
                "' is multiplied by itself in the index";
          return false;
        }
        if (C.isConst() && !C.Const)
          continue;
        bool Up = nonneg(C, Facts);
        if (!Up && !nonneg(C.scaled(-1), Facts)) {
          Why = "the sign of what multiplies '" + V->getNameAsString() +
                "' in the index is not known (" + polyText(C) + ")";
          return false;
        }
        *X = C * (Up == Min ? First[K] : Last[K]) + R;
        if (!X->Ok) {
          Why = "the range grows past what the plugin computes";
          return false;
        }
      }
    }
    for (const Poly *X : {&Lo, &Hi})
      for (const VarDecl *V : X->vars())
        if (!stable(V)) {
          Why = "'" + V->getNameAsString() + "' changes in the function";
          return false;
        }
    return true;
  }

  bool covers(const Acquire &Q, const Poly &Lo, const Poly &Hi,
              const std::vector<Poly> &Holds) {
    if (!Q.Lo.Ok || !Q.N.Ok)
      return false;
    for (const Poly &P : Q.Needs)
      if (!nonneg(P, Holds))
        return false;
    Poly D1 = Lo - Q.Lo, D2 = (Q.Lo + Q.N) - Poly::constant(1) - Hi;
    return D1.isConst() && D2.isConst() && D1.Const >= 0 && D2.Const >= 0;
  }

  void fail(SourceLocation L, const std::string &What, const std::string &Fix) {
    error(Ctx, L, What, Fix);
    F.Failed = true;
  }

  // The access as written: the expression, or SHARED_ARG_x(p, n).
  std::string shown(const Access &A) {
    if (!A.Count)
      return text(A.E);
    return std::string(A.Write ? "SHARED_ARG_W(" : "SHARED_ARG_R(") +
           text(A.E) + ", " + text(A.Count) + ")";
  }

  void checkAccess(Access &A) {
    std::string How = A.Write ? "writing" : "reading";
    std::string Name = sharedName(A.SharedExpr);
    std::string T = shown(A);
    std::string Mode = A.Write ? "ACQUIRE_W_SYNC" : "ACQUIRE_R_SYNC";
    std::string Var = A.Base ? A.Base->getNameAsString() : "p";
    std::string HowTo =
        "acquire the range first: INIT_SYNC(s, 1, 0, NEXT); " + Mode + "(" +
        Var +
        " + first, count, s); END_THREAD(); and access it in fiber NEXT "
        "(or a later fiber of the chain, before RELEASE_SYNC of '" +
        Var + "')";
    if (A.NotArgument) {
      fail(A.Loc, T + " is not an argument of a call to a C function",
           "pass it straight to the C function, f(SHARED_ARG_R(p, n)): "
           "a plain pointer kept after the call (or handed to INVOKE, "
           "TOKEN or another operation, whose work runs later) would "
           "escape the acquire checks");
      return;
    }
    if (!A.Base) {
      fail(A.Loc,
           How + " '" + T + "' through " + Name +
               " that is not a SHARED variable",
           "access shared memory through a SHARED pointer variable of the "
           "threaded function (or SHARED_ARRAY) that an acquire names: " +
               HowTo);
      return;
    }
    if (A.CastMismatch) {
      fail(A.Loc,
           How + " '" + T + "' through " + Name +
               " cast to a pointer to a type of another size",
           "the plugin counts acquired ranges in elements of '" + Var +
               "': access the elements with their own type, or declare a "
               "SHARED pointer of the type you need and acquire through it");
      return;
    }
    const Acquire *Same = nullptr, *ReadOnly = nullptr;
    Poly Lo, Hi;
    std::vector<Poly> Guards, Holds;
    bool Known = range(A, Lo, Hi, A.Why, &Guards, &Holds);
    if (StoredIn[A.Fiber].count(A.Base))
      Known = false; // the fiber sets the pointer: not the one acquired
    for (unsigned I : In[A.Fiber]) {
      const Acquire &Q = Acqs[I];
      if (Q.Base != A.Base)
        continue;
      Same = &Q;
      if (!Known || !covers(Q, Lo, Hi, Holds))
        continue;
      if (A.Write && !Q.Write) {
        ReadOnly = &Q;
        continue;
      }
      return; // covered
    }
    if (ReadOnly) {
      fail(A.Loc,
           "writing '" + T + "' through " + Name + ", which " + ReadOnly->Op +
               " at line " + std::to_string(ReadOnly->Line) +
               " acquired for reading only",
           "acquire the range for writing: ACQUIRE_W_SYNC(...) in place of "
           "ACQUIRE_R_SYNC(...)");
      return;
    }
    if (Same) {
      fail(A.Loc,
           "cannot prove that '" + T + "' lies in the range of " + Var +
               " that " + Same->Op + " at line " + std::to_string(Same->Line) +
               " acquired",
           "acquire exactly what the fiber touches, with bounds the plugin "
           "can compare: index with constants, parameters and locals set "
           "only where declared, or the variable of a loop 'for (i = lo; "
           "i < hi; i++)', and acquire " +
               Var + " + lo, hi - lo elements");
      return;
    }
    if (MayInsert && Known && !A.Loops.empty() &&
        insertable(A.Loops[0].For, Lo, Hi, A.Why)) {
      Pending *P = nullptr;
      for (Pending &X : Pend)
        if (X.Loop == A.Loops[0].For && X.Base == A.Base)
          P = &X;
      if (!P) {
        Pend.push_back({A.Loops[0].For, A.Base, {}, {}, false, Guards});
        P = &Pend.back();
      }
      llvm::erase_if(P->Guards, [&](const Poly &G) {
        return std::find(Guards.begin(), Guards.end(), G) == Guards.end();
      });
      P->Ranges.push_back({Lo, Hi});
      P->Accesses.push_back(&A);
      P->Write |= A.Write;
      return;
    }
    uncovered(A);
  }

  void uncovered(const Access &A) {
    std::string T = shown(A), Var = A.Base->getNameAsString();
    std::string Mode = A.Write ? "ACQUIRE_W_SYNC" : "ACQUIRE_R_SYNC";
    std::string Not =
        A.Why.empty() || A.Loops.empty()
            ? ""
            : " (the plugin cannot insert it here: " + A.Why + ")";
    fail(A.Loc,
         std::string(A.Write ? "writing" : "reading") + " '" + T +
             "' through " + sharedName(A.SharedExpr) +
             ", which no acquire covers",
         "acquire the range first: INIT_SYNC(s, 1, 0, NEXT); " + Mode + "(" +
             Var +
             " + first, count, s); END_THREAD(); and access it in fiber NEXT "
             "(or a later fiber of the chain, before RELEASE_SYNC of '" +
             Var + "')" + Not);
  }

  // A loop at the top level of the body (a fiber label may stand before
  // it) whose range uses only parameters and top-level locals declared
  // before it: an acquire can go right before it.
  bool insertable(const ForStmt *L, const Poly &Lo, const Poly &Hi,
                  std::string &Why) {
    const auto *Body = cast<CompoundStmt>(F.FD->getBody());
    bool Top = false;
    for (const Stmt *S : Body->body()) {
      while (const auto *Lb = dyn_cast<LabelStmt>(S))
        S = Lb->getSubStmt();
      Top |= S == L;
    }
    if (!Top) {
      Why = "the outer loop is not a statement of the function's body "
            "itself, where a fiber can end";
      return false;
    }
    for (const Poly *X : {&Lo, &Hi})
      if (!before(L, *X)) {
        Why = "the range names a variable that is not a parameter or a "
              "local of the function's body declared before the loop";
        return false;
      }
    return true;
  }

  // Whether P names only parameters and top-level locals declared before
  // loop L.
  bool before(const ForStmt *L, const Poly &P) {
    const auto *Body = cast<CompoundStmt>(F.FD->getBody());
    unsigned At = fileOffset(SM, L->getBeginLoc());
    for (const VarDecl *V : P.vars()) {
      if (isa<ParmVarDecl>(V))
        continue;
      auto Ps = Ctx.getParents(*V);
      const auto *DS = Ps.empty() ? nullptr : Ps[0].get<DeclStmt>();
      auto Up = DS ? Ctx.getParents(*DS) : Ps;
      if (Up.empty() || Up[0].get<Stmt>() != Body ||
          fileOffset(SM, V->getLocation()) >= At)
        return false;
    }
    return true;
  }

  // C text of L, computed in long: a variable of another type is cast.
  std::string polyText(const Poly &L) {
    std::string S;
    for (const auto &P : L.Coef) {
      std::string N;
      for (const VarDecl *V : P.first) {
        QualType T = V->getType();
        bool Long = T->isSignedIntegerType() &&
                    Ctx.getTypeSize(T) >= Ctx.getTypeSize(Ctx.LongTy);
        N += (N.empty() ? "" : " * ") + std::string(Long ? "" : "(long)") +
             V->getNameAsString();
      }
      int64_t C = P.second;
      S += S.empty() ? (C < 0 ? "-" : "") : (C < 0 ? " - " : " + ");
      S += (C == 1 || C == -1) ? N : std::to_string(C < 0 ? -C : C) + " * " + N;
    }
    if (S.empty())
      return std::to_string(L.Const);
    if (L.Const)
      S += (L.Const < 0 ? " - " : " + ") +
           std::to_string(L.Const < 0 ? -L.Const : L.Const);
    return S;
  }

  // The inserted acquires: before the loop, INIT_SYNC of one slot + an
  // ACQUIRE_x_N_SYNC of [lo, hi] per pointer it touches, all signalling
  // it (the fetches overlap) + END_THREAD() + a new fiber label; after it,
  // the same with RELEASE_N_SYNC. Ranges of one loop and pointer must
  // differ by constants (their union is then known), else each access is
  // an error.
  void insertAll() {
    unsigned Slot = F.Slots ? (unsigned)F.NumSlots : 0, K = 0;
    static unsigned Seq = 0;
    std::vector<const ForStmt *> Order;
    std::map<const ForStmt *, std::vector<std::string>> Acq, Rel;
    for (const Pending &P : Pend) {
      Poly Lo = P.Ranges[0].first, Hi = P.Ranges[0].second;
      bool Ok = true;
      for (const auto &R : P.Ranges) {
        Poly D1 = R.first - Lo, D2 = R.second - Hi;
        Ok &= D1.isConst() && D2.isConst();
        if (!Ok)
          break;
        if (D1.Const < 0)
          Lo = R.first;
        if (D2.Const > 0)
          Hi = R.second;
      }
      if (!Ok) {
        for (const Access *A : P.Accesses) {
          Access B = *A;
          B.Why = "the ranges of the loop's accesses through '" +
                  P.Base->getNameAsString() +
                  "' differ by more than a constant";
          uncovered(B);
        }
        continue;
      }
      std::string V = P.Base->getNameAsString();
      std::string Ptr = V + " + (" + polyText(Lo) + ")";
      std::string Cnt = "(" + polyText(Hi) + ") - (" + polyText(Lo) + ") + 1";
      // Where a loop of the nest cannot run, nothing: its range may
      // then name elements no access touches.
      std::string If;
      for (const Poly &G : P.Guards)
        if (before(P.Loop, G))
          If += (If.empty() ? "" : " && ") + ("(" + polyText(G) + ") >= 0");
      if (!If.empty())
        Cnt = "(" + If + " ? " + Cnt + " : 0)";
      if (!Acq.count(P.Loop))
        Order.push_back(P.Loop);
      Acq[P.Loop].push_back(
          (P.Write ? "ACQUIRE_W_N_SYNC(" : "ACQUIRE_R_N_SYNC(") + Ptr + ", " +
          Cnt);
      Rel[P.Loop].push_back("RELEASE_N_SYNC(" + Ptr + ", " + Cnt);
    }
    for (const ForStmt *L : Order) {
      std::string N = std::to_string(++Seq),
                  Count = std::to_string(Acq[L].size());
      std::string S1 = std::to_string(Slot + K),
                  S2 = std::to_string(Slot + K + 1);
      K += 2;
      std::string Before = "INIT_SYNC(" + S1 + ", " + Count +
                           ", 0, tc_acquired_" + N + "); ",
                  After = " INIT_SYNC(" + S2 + ", " + Count +
                          ", 0, tc_released_" + N + "); ";
      for (const std::string &A : Acq[L])
        Before += A + ", " + S1 + "); ";
      for (const std::string &R : Rel[L])
        After += R + ", " + S2 + "); ";
      F.Inserts.push_back({L->getBeginLoc(), Before +
                                                 "END_THREAD(); "
                                                 "tc_acquired_" +
                                                 N + ": "});
      SourceLocation End = Lexer::findLocationAfterToken(
          L->getEndLoc(), tok::semi, SM, Ctx.getLangOpts(), false);
      if (End.isInvalid())
        End = Lexer::getLocForEndOfToken(L->getEndLoc(), 0, SM,
                                         Ctx.getLangOpts());
      // On a line of its own (a statement after an unbraced loop body
      // on the body's line reads as part of it: -Wmisleading-indentation),
      // numbered as the loop's last line, so messages and the lines after
      // keep their numbers.
      PresumedLoc PL = SM.getPresumedLoc(SM.getExpansionLoc(End));
      std::string Line = PL.isValid()
                             ? "\n#line " + std::to_string(PL.getLine()) + " " +
                                   quoted(PL.getFilename()) + "\n"
                             : " ";
      F.Inserts.push_back({End, Line + After.substr(1) +
                                    "END_THREAD(); tc_released_" + N + ":;"});
    }
    F.InsertSlots = K;
  }

  void run() {
    const Stmt *Body = F.FD->getBody();
    Fd.TraverseStmt(const_cast<Stmt *>(Body));
    if (Fd.Accesses.empty())
      return;
    collectSlots();
    collectAcquires();
    solve();
    for (Access &A : Fd.Accesses) {
      A.Fiber = fiberAt(A.Loc);
      checkAccess(A);
    }
    if (!Pend.empty())
      insertAll();
  }
};

// Accesses through SHARED pointers in C functions.
class CAccess : public RecursiveASTVisitor<CAccess> {
  ASTContext &Ctx;
  const FunctionDecl *Cur = nullptr;

public:
  explicit CAccess(ASTContext &Ctx) : Ctx(Ctx) {}
  bool TraverseFunctionDecl(FunctionDecl *FD) {
    if (isThreaded(FD) || !FD->doesThisDeclarationHaveABody())
      return true;
    const SourceManager &SM = Ctx.getSourceManager();
    if (!SM.isInMainFile(SM.getExpansionLoc(FD->getLocation())))
      return true;
    Cur = FD;
    return RecursiveASTVisitor::TraverseFunctionDecl(FD);
  }
  bool TraverseUnaryExprOrTypeTraitExpr(UnaryExprOrTypeTraitExpr *) {
    return true;
  }
  void check(const Expr *Base, SourceLocation L) {
    const SourceManager &SM = Ctx.getSourceManager();
    if (!Cur || SM.getFilename(SM.getSpellingLoc(L)).endswith("threadedc.h"))
      return;
    const Expr *S = sharedOperand(Ctx, Base);
    if (!S)
      return;
    error(Ctx, L,
          "accessing shared memory through " + sharedName(S) +
              " in C function '" + Cur->getNameAsString() + "'",
          "a C function cannot see the acquires of its caller: access the "
          "range in the THREADED function whose fiber chain acquired it, "
          "and pass the values to the C function, or the range as "
          "SHARED_ARG_R(p, n) (SHARED_ARG_W to write it)");
  }
  bool VisitUnaryOperator(UnaryOperator *U) {
    if (U->getOpcode() == UO_Deref)
      check(U->getSubExpr(), U->getOperatorLoc());
    return true;
  }
  bool VisitArraySubscriptExpr(ArraySubscriptExpr *A) {
    check(A->getBase(), A->getExprLoc());
    return true;
  }
  bool VisitMemberExpr(MemberExpr *M) {
    if (M->isArrow())
      check(M->getBase(), M->getOperatorLoc());
    return true;
  }
  bool VisitCallExpr(CallExpr *C) {
    const FunctionDecl *FD = C->getDirectCallee();
    if (!Cur || !FD ||
        (FD->getName() != "tc_shared_arg_r_" &&
         FD->getName() != "tc_shared_arg_w_"))
      return true;
    const SourceManager &SM = Ctx.getSourceManager();
    std::string M =
        FD->getName() == "tc_shared_arg_r_" ? "SHARED_ARG_R" : "SHARED_ARG_W";
    error(Ctx, SM.getExpansionLoc(C->getBeginLoc()),
          M + " in C function '" + Cur->getNameAsString() + "'",
          "a C function cannot see the acquires of its caller: write " + M +
              "(p, n) in the THREADED function whose fiber chain acquired "
              "the range, as an argument of its call to the C function");
    return true;
  }
};

} // namespace

void checkShared(CompilerInstance &CI, ThreadedFn &F, bool MayInsert) {
  SharedCheck(CI, F, MayInsert).run();
}

std::string insertedSource(CompilerInstance &CI,
                           const std::vector<ThreadedFn> &Fns) {
  SourceManager &SM = CI.getSourceManager();
  Rewriter RW(SM, CI.getLangOpts());
  for (const ThreadedFn &F : Fns) {
    if (F.Inserts.empty())
      continue;
    for (const auto &I : F.Inserts)
      RW.InsertTextBefore(SM.getExpansionLoc(I.first), I.second);
    std::string More = std::to_string(F.InsertSlots);
    const auto *Body = cast<CompoundStmt>(F.FD->getBody());
    if (!F.Slots) {
      RW.InsertTextAfterToken(Body->getLBracLoc(),
                              " SLOT SYNC_SLOTS[" + More + "];");
    } else if (auto AT = F.Slots->getTypeSourceInfo()
                             ->getTypeLoc()
                             .getAs<ConstantArrayTypeLoc>()) {
      RW.InsertTextAfterToken(SM.getExpansionLoc(AT.getSizeExpr()->getEndLoc()),
                              " + " + More);
    }
  }
  FileID Main = SM.getMainFileID();
  std::string Out =
      "#line 1 " + quoted(SM.getFileEntryForID(Main)->getName()) + "\n";
  llvm::raw_string_ostream OS(Out);
  RW.getEditBuffer(Main).write(OS);
  OS.flush();
  return Out;
}

void checkSharedInC(ASTContext &Ctx) {
  CAccess V(Ctx);
  V.TraverseDecl(Ctx.getTranslationUnitDecl());
}

bool fileUsesShared(ASTContext &Ctx) {
  struct V : RecursiveASTVisitor<V> {
    ASTContext &Ctx;
    bool Uses = false;
    explicit V(ASTContext &Ctx) : Ctx(Ctx) {}
    bool VisitDeclaratorDecl(DeclaratorDecl *D) {
      const SourceManager &SM = Ctx.getSourceManager();
      if (SM.isInMainFile(SM.getExpansionLoc(D->getLocation())) &&
          isSharedPtrType(Ctx, D->getType()))
        Uses = true;
      return !Uses;
    }
    bool VisitCallExpr(CallExpr *C) {
      const SourceManager &SM = Ctx.getSourceManager();
      if (const FunctionDecl *FD = C->getDirectCallee())
        if (FD->getName().startswith("earth_dsm_") &&
            SM.isInMainFile(SM.getExpansionLoc(C->getBeginLoc())))
          Uses = true;
      return !Uses;
    }
  } Vis(Ctx);
  Vis.TraverseDecl(Ctx.getTranslationUnitDecl());
  return Vis.Uses;
}

} // namespace earthtc
