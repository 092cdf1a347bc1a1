//===- Analyze.cpp - liveness and save/restore sets at fiber boundaries ---===//
//
// For a threaded function:
//  * frame-resident variables: arrays and locals whose address is taken
//    (&x, &s.f, a member array decayed to a pointer); they live in the frame,
//    so they are never saved or restored;
//  * RESTORE(k): the candidates live at the start of fiber k (LiveVariables
//    on the function's CFG; END_THREAD is a noreturn call, so liveness does
//    not flow from one fiber into the next label);
//  * SAVE(site) at an END_THREAD: the variables possibly assigned since the
//    fiber started that are live at the start of some fiber. A variable
//    assigned on some paths only is also restored at the fiber start, so the
//    store never writes an unassigned local over the frame's value;
//  * control-flow misuse: fall-through into a fiber label, reaching the end
//    of the body, goto into another fiber.
//
//===----------------------------------------------------------------------===//
#include "EarthTC.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Analysis/Analyses/LiveVariables.h"
#include "clang/Analysis/AnalysisDeclContext.h"
#include "clang/Analysis/CFG.h"
#include "llvm/ADT/BitVector.h"

using namespace clang;

namespace earthtc {
namespace {

// The local variable an lvalue expression is part of: x in x, x.f, (x).f.a
// (Full when the expression is the variable itself).
const VarDecl *rootVar(const Expr *E, bool &Full) {
  Full = true;
  E = E->IgnoreParens();
  for (;;) {
    if (const auto *DR = dyn_cast<DeclRefExpr>(E))
      return dyn_cast<VarDecl>(DR->getDecl());
    Full = false;
    if (const auto *M = dyn_cast<MemberExpr>(E)) {
      if (M->isArrow())
        return nullptr;
      E = M->getBase()->IgnoreParenImpCasts();
      continue;
    }
    if (const auto *A = dyn_cast<ArraySubscriptExpr>(E)) {
      const Expr *B = A->getBase()->IgnoreParenImpCasts();
      if (!B->getType()->isArrayType())
        return nullptr;
      E = B;
      continue;
    }
    return nullptr;
  }
}

class Collect : public RecursiveASTVisitor<Collect> {
public:
  ThreadedFn &F;
  std::vector<const GotoStmt *> Gotos;
  std::vector<const VarDecl *> Declared; // every variable of the body
  explicit Collect(ThreadedFn &F) : F(F) {}

  bool VisitVarDecl(VarDecl *V) {
    if (!isa<ParmVarDecl>(V))
      Declared.push_back(V);
    if (V->hasLocalStorage() && !isa<ParmVarDecl>(V)) {
      F.Locals.push_back(V);
      // Arrays, and const locals (a restore could not assign them).
      if (V->getType()->isArrayType() || V->getType().isConstQualified())
        F.FrameResident.insert(V);
    }
    return true;
  }
  // E's address escapes: the local it is part of lives in the frame.
  void escapes(const Expr *E) {
    bool Full;
    if (const VarDecl *V = rootVar(E, Full))
      if (V->hasLocalStorage())
        F.FrameResident.insert(V);
  }
  bool VisitUnaryOperator(UnaryOperator *U) {
    if (U->getOpcode() == UO_AddrOf)
      escapes(U->getSubExpr());
    return true;
  }
  bool VisitImplicitCastExpr(ImplicitCastExpr *C) {
    if (C->getCastKind() == CK_ArrayToPointerDecay)
      escapes(C->getSubExpr());
    return true;
  }
  bool VisitGotoStmt(GotoStmt *G) {
    Gotos.push_back(G);
    return true;
  }
};

struct Flow {
  llvm::BitVector May, Must;
  bool Seen = false;
};

} // namespace

bool analyze(CompilerInstance &CI, ThreadedFn &F, const Options &O) {
  ASTContext &Ctx = CI.getASTContext();
  const SourceManager &SM = Ctx.getSourceManager();
  const auto *Body = cast<CompoundStmt>(F.FD->getBody());

  for (const ParmVarDecl *P : F.FD->parameters())
    F.Locals.push_back(P);
  Collect C(F);
  C.TraverseStmt(const_cast<CompoundStmt *>(Body));
  for (const Stmt *S : Body->body())
    if (const auto *DS = dyn_cast<DeclStmt>(S))
      for (const Decl *D : DS->decls())
        if (const auto *V = dyn_cast<VarDecl>(D))
          F.TopLevel.insert(V);

  auto regionOf = [&](unsigned Off) {
    unsigned R = 0;
    for (size_t I = 1; I < F.Fibers.size(); ++I)
      if (F.Fibers[I].Offset <= Off)
        R = I;
    return R;
  };
  auto fiberOfLabel = [&](const LabelDecl *L) -> int {
    for (size_t I = 1; I < F.Fibers.size(); ++I)
      if (F.Fibers[I].Label->getDecl() == L)
        return I;
    return -1;
  };
  for (const GotoStmt *G : C.Gotos) {
    const LabelDecl *L = G->getLabel();
    int T = fiberOfLabel(L);
    unsigned From = regionOf(fileOffset(SM, G->getGotoLoc()));
    unsigned To =
        L->getStmt() ? regionOf(fileOffset(SM, L->getLocation())) : From;
    if (T >= 0 || To != From) {
      error(Ctx, G->getGotoLoc(),
            "'goto " + L->getNameAsString() + "' jumps from fiber " +
                F.Fibers[From].Name + " into fiber " + F.Fibers[To].Name +
                " of THREADED function '" + F.Name + "'",
            "fibers are entered only by the runtime: use SPAWN(" +
                F.Fibers[To].Name +
                ") or SYNC on a slot that INIT_SYNC "
                "attached to it, then END_THREAD()");
      F.Failed = true;
    }
  }

  // Candidates: locals kept in C locals inside fibers.
  std::vector<const VarDecl *> Cand;
  std::map<const VarDecl *, unsigned> Bit;
  for (const VarDecl *V : F.Locals)
    if (!F.FrameResident.count(V) && V->hasLocalStorage()) {
      Bit[V] = Cand.size();
      Cand.push_back(V);
    }
  auto declOff = [&](const VarDecl *V) {
    return fileOffset(SM, V->getLocation());
  };
  auto inScopeAt = [&](const VarDecl *V, unsigned Off) {
    return isa<ParmVarDecl>(V) || (F.TopLevel.count(V) && declOff(V) < Off);
  };

  AnalysisDeclContextManager Mgr(Ctx);
  Mgr.getCFGBuildOptions().setAllAlwaysAdd();
  AnalysisDeclContext *AC = Mgr.getContext(F.FD);
  CFG *G = AC->getCFG();
  LiveVariables *LV = G ? AC->getAnalysis<LiveVariables>() : nullptr;
  if (!G || !LV) {
    error(Ctx, F.FD->getLocation(),
          "cannot build the control-flow graph of '" + F.Name + "'",
          "simplify the function or split it");
    F.Failed = true;
    return false;
  }

  // Start block of each fiber.
  std::vector<const CFGBlock *> Start(F.Fibers.size(), nullptr);
  Start[0] = &G->getEntry();
  for (const CFGBlock *B : *G)
    if (const auto *L = dyn_cast_or_null<LabelStmt>(B->getLabel()))
      for (size_t I = 1; I < F.Fibers.size(); ++I)
        if (F.Fibers[I].Label == L)
          Start[I] = B;
  auto liveAtStart = [&](unsigned K, const VarDecl *V) {
    const CFGBlock *B = Start[K];
    if (!B)
      return false;
    for (const CFGElement &E : *B)
      if (auto S = E.getAs<CFGStmt>())
        return LV->isLive(S->getStmt(), V);
    return LV->isLive(B, V);
  };

  for (size_t K = 0; K < F.Fibers.size(); ++K) {
    Fiber &Fb = F.Fibers[K];
    unsigned Off = K ? Fb.Offset : 0;
    for (const VarDecl *V : Cand)
      if (inScopeAt(V, Off))
        Fb.InScope.push_back(V);
    F.Naive += Fb.InScope.size();
    for (const VarDecl *V : Fb.InScope)
      if (O.SaveAll || liveAtStart(K, V))
        Fb.Restore.push_back(V);
  }
  llvm::BitVector LiveAny(Cand.size());
  for (size_t K = 1; K < F.Fibers.size(); ++K)
    for (const VarDecl *V : F.Fibers[K].Restore)
      LiveAny.set(Bit[V]);

  // Forward may/must-assigned analysis from every fiber start.
  auto transfer = [&](const Stmt *S, Flow &St) {
    auto def = [&](const Expr *LHS) {
      bool Full;
      const VarDecl *V = rootVar(LHS, Full);
      auto It = V ? Bit.find(V) : Bit.end();
      if (It == Bit.end())
        return;
      St.May.set(It->second);
      if (Full)
        St.Must.set(It->second);
    };
    if (const auto *B = dyn_cast<BinaryOperator>(S)) {
      if (B->isAssignmentOp())
        def(B->getLHS());
    } else if (const auto *U = dyn_cast<UnaryOperator>(S)) {
      if (U->isIncrementDecrementOp())
        def(U->getSubExpr());
    } else if (const auto *DS = dyn_cast<DeclStmt>(S)) {
      for (const Decl *D : DS->decls())
        if (const auto *V = dyn_cast<VarDecl>(D))
          if (V->hasInit() && Bit.count(V)) {
            St.May.set(Bit[V]);
            St.Must.set(Bit[V]);
          }
    }
  };
  std::map<const CFGBlock *, Flow> Out;
  std::set<const CFGBlock *> Starts(Start.begin(), Start.end());
  auto inFlow = [&](const CFGBlock *B, Flow &In) {
    In.May = llvm::BitVector(Cand.size());
    In.Must = llvm::BitVector(Cand.size());
    if (Starts.count(B)) {
      In.Seen = true;
      return;
    }
    bool First = true;
    for (const auto &P : B->preds()) {
      const CFGBlock *PB = P.getReachableBlock();
      if (!PB || !Out[PB].Seen)
        continue;
      In.Seen = true;
      In.May |= Out[PB].May;
      if (First)
        In.Must = Out[PB].Must;
      else
        In.Must &= Out[PB].Must;
      First = false;
    }
  };
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (const CFGBlock *B : *G) {
      Flow St;
      inFlow(B, St);
      if (!St.Seen)
        continue;
      for (const CFGElement &E : *B)
        if (auto S = E.getAs<CFGStmt>())
          transfer(S->getStmt(), St);
      Flow &Old = Out[B];
      if (!Old.Seen || Old.May != St.May || Old.Must != St.Must) {
        Old = St;
        Changed = true;
      }
    }
  }

  // Control-flow misuse.
  const CFGBlock *Exit = &G->getExit();
  for (const CFGBlock *B : *G) {
    if (!Out[B].Seen)
      continue;
    bool IsGoto =
        B->getTerminatorStmt() && isa<GotoStmt>(B->getTerminatorStmt());
    for (const auto &S : B->succs()) {
      const CFGBlock *SB = S.getReachableBlock();
      if (!SB)
        continue;
      if (SB == Exit && !B->hasNoReturnElement()) {
        error(Ctx, Body->getRBracLoc(),
              "control can reach the end of THREADED function '" + F.Name +
                  "' without END_THREAD() or END_FUNCTION()",
              "end every path of every fiber with END_THREAD() (the frame "
              "stays) or END_FUNCTION() (the frame is freed)");
        F.Failed = true;
      }
      for (size_t K = 1; K < F.Fibers.size(); ++K)
        if (SB == Start[K] && !IsGoto) {
          error(Ctx, F.Fibers[K].Label->getIdentLoc(),
                "control can fall through into fiber label '" +
                    F.Fibers[K].Name + "' of THREADED function '" + F.Name +
                    "'",
                "end the code above the label with END_THREAD() or "
                "END_FUNCTION(); to run the next fiber now, SPAWN(" +
                    F.Fibers[K].Name + ") first");
          F.Failed = true;
        }
    }
  }
  if (F.Failed)
    return false;

  // Sites and their SAVE sets.
  for (const Marker &M : F.Markers) {
    if (M.Kind != MarkerKind::EndThread && M.Kind != MarkerKind::EndFunction)
      continue;
    EndSite S{M.Call, M.Kind == MarkerKind::EndFunction, M.Fiber, {}};
    unsigned Off = fileOffset(SM, M.Call->getBeginLoc());
    if (!S.EndFunction)
      for (const VarDecl *V : Cand)
        if (inScopeAt(V, Off))
          F.Naive++;
    Flow St;
    bool Found = false;
    for (const CFGBlock *B : *G) {
      Flow In;
      inFlow(B, In);
      for (const CFGElement &E : *B) {
        auto CS = E.getAs<CFGStmt>();
        if (!CS)
          continue;
        if (CS->getStmt() == M.Call) {
          St = In;
          Found = true;
          break;
        }
        transfer(CS->getStmt(), In);
      }
      if (Found)
        break;
    }
    if (!S.EndFunction && Found && St.Seen) {
      Fiber &Fb = F.Fibers[S.Fiber];
      for (const VarDecl *V : Cand) {
        unsigned I = Bit[V];
        bool Save = O.SaveAll ? inScopeAt(V, Off)
                              : (St.May.test(I) && LiveAny.test(I) &&
                                 inScopeAt(V, Off));
        if (!Save || O.DropSave.count(V->getNameAsString()))
          continue;
        S.Save.push_back(V);
        bool Restored = llvm::is_contained(Fb.Restore, V);
        if (!O.SaveAll && !St.Must.test(I) && !Restored &&
            llvm::is_contained(Fb.InScope, V))
          Fb.Restore.push_back(V);
      }
    }
    F.Sites.push_back(S);
  }
  // A save writes `tc_f->v = v;` at the END_THREAD: a nested variable
  // (static ones too) with the same name in scope there would be stored
  // instead of v, so it is renamed in the output (frame-resident ones lose
  // their declaration, and their uses become tc_f->field, so they need no
  // new name).
  unsigned NRenamed = 0;
  for (const EndSite &S : F.Sites)
    for (const VarDecl *V : S.Save)
      for (const VarDecl *W : C.Declared) {
        if (W == V || W->getName() != V->getName() || F.TopLevel.count(W) ||
            F.FrameResident.count(W) || F.Renamed.count(W))
          continue;
        auto Ps = Ctx.getParents(*W);
        const auto *DS = Ps.empty() ? nullptr : Ps[0].get<DeclStmt>();
        auto Scope = DS ? Ctx.getParents(*DS) : Ps;
        const Stmt *Sc = Scope.empty() ? nullptr : Scope[0].get<Stmt>();
        unsigned Off = fileOffset(SM, S.Call->getBeginLoc());
        if (!Sc || declOff(W) > Off || fileOffset(SM, Sc->getEndLoc()) < Off)
          continue;
        F.Renamed[W] =
            "tc_" + W->getNameAsString() + "_" + std::to_string(++NRenamed);
      }
  for (Fiber &Fb : F.Fibers) {
    std::vector<const VarDecl *> R;
    for (const VarDecl *V : Cand) // declaration order, for stable output
      if (llvm::is_contained(Fb.Restore, V) &&
          !O.DropRestore.count(V->getNameAsString()))
        R.push_back(V);
    Fb.Restore = R;
  }

  // Frame fields.
  std::set<std::string> Used{"tc_a"};
  auto addField = [&](const VarDecl *V) {
    if (F.Field.count(V) || isa<ParmVarDecl>(V))
      return;
    std::string N = V->getNameAsString();
    for (int I = 2; Used.count(N); ++I)
      N = V->getNameAsString() + "_" + std::to_string(I);
    Used.insert(N);
    F.Field[V] = N;
  };
  for (const VarDecl *V : F.Locals) {
    bool Needed = F.FrameResident.count(V);
    for (const Fiber &Fb : F.Fibers)
      Needed |= llvm::is_contained(Fb.Restore, V);
    for (const EndSite &S : F.Sites)
      Needed |= llvm::is_contained(S.Save, V);
    if (Needed)
      addField(V);
  }
  return !F.Failed;
}

} // namespace earthtc
