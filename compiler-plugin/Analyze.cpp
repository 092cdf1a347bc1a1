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
// class Analysis holds what the steps share; run() calls them in order.
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

// The analysis of one threaded function, step by step (run): the state the
// steps share lives here; what they find goes into F.
class Analysis {
  ASTContext &Ctx;
  const SourceManager &SM;
  ThreadedFn &F;
  const Options &O;
  const CompoundStmt *Body;
  Collect C;
  // Candidates: locals kept in C locals inside fibers, and their bits.
  std::vector<const VarDecl *> Cand;
  std::map<const VarDecl *, unsigned> Bit;
  AnalysisDeclContextManager Mgr;
  CFG *G = nullptr;
  LiveVariables *LV = nullptr;
  std::vector<const CFGBlock *> Start; // start block of each fiber
  std::set<const CFGBlock *> Starts;
  std::map<const CFGBlock *, Flow> Out; // may/must-assigned at block ends
  llvm::BitVector LiveAny; // candidates live at the start of some fiber

public:
  Analysis(CompilerInstance &CI, ThreadedFn &F, const Options &O)
      : Ctx(CI.getASTContext()), SM(Ctx.getSourceManager()), F(F), O(O),
        Body(cast<CompoundStmt>(F.FD->getBody())), C(F), Mgr(Ctx) {}

  bool run() {
    collectVariables();
    checkGotos();
    pickCandidates();
    if (!buildCFG())
      return false;
    findFiberStarts();
    computeRestores();
    solveAssigned();
    checkControlFlow();
    if (F.Failed)
      return false;
    computeSaves();
    renameHiddenNames();
    orderRestores();
    assignFields();
    return !F.Failed;
  }

private:
  unsigned declOff(const VarDecl *V) {
    return fileOffset(SM, V->getLocation());
  }
  bool inScopeAt(const VarDecl *V, unsigned Off) {
    return isa<ParmVarDecl>(V) || (F.TopLevel.count(V) && declOff(V) < Off);
  }
  // The fiber (region) a file offset is in.
  unsigned regionOf(unsigned Off) {
    unsigned R = 0;
    for (size_t I = 1; I < F.Fibers.size(); ++I)
      if (F.Fibers[I].Offset <= Off)
        R = I;
    return R;
  }
  int fiberOfLabel(const LabelDecl *L) {
    for (size_t I = 1; I < F.Fibers.size(); ++I)
      if (F.Fibers[I].Label->getDecl() == L)
        return I;
    return -1;
  }

  // Parameters, body variables, frame-resident ones, those declared at the
  // top level of the body, and the gotos.
  void collectVariables() {
    for (const ParmVarDecl *P : F.FD->parameters())
      F.Locals.push_back(P);
    C.TraverseStmt(const_cast<CompoundStmt *>(Body));
    for (const Stmt *S : Body->body())
      if (const auto *DS = dyn_cast<DeclStmt>(S))
        for (const Decl *D : DS->decls())
          if (const auto *V = dyn_cast<VarDecl>(D))
            F.TopLevel.insert(V);
  }

  // A goto to a fiber label, or into another fiber.
  void checkGotos() {
    for (const GotoStmt *G : C.Gotos) {
      const LabelDecl *L = G->getLabel();
      int T = fiberOfLabel(L);
      unsigned From = regionOf(fileOffset(SM, G->getGotoLoc()));
      unsigned To =
          L->getStmt() ? regionOf(fileOffset(SM, L->getLocation())) : From;
      if (T < 0 && To == From)
        continue;
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

  void pickCandidates() {
    for (const VarDecl *V : F.Locals)
      if (!F.FrameResident.count(V) && V->hasLocalStorage()) {
        Bit[V] = Cand.size();
        Cand.push_back(V);
      }
  }

  // The CFG and its liveness.
  bool buildCFG() {
    Mgr.getCFGBuildOptions().setAllAlwaysAdd();
    AnalysisDeclContext *AC = Mgr.getContext(F.FD);
    G = AC->getCFG();
    LV = G ? AC->getAnalysis<LiveVariables>() : nullptr;
    if (G && LV)
      return true;
    error(Ctx, F.FD->getLocation(),
          "cannot build the control-flow graph of '" + F.Name + "'",
          "simplify the function or split it");
    F.Failed = true;
    return false;
  }

  void findFiberStarts() {
    Start.assign(F.Fibers.size(), nullptr);
    Start[0] = &G->getEntry();
    for (const CFGBlock *B : *G)
      if (const auto *L = dyn_cast_or_null<LabelStmt>(B->getLabel()))
        for (size_t I = 1; I < F.Fibers.size(); ++I)
          if (F.Fibers[I].Label == L)
            Start[I] = B;
    Starts.insert(Start.begin(), Start.end());
  }

  bool liveAtStart(unsigned K, const VarDecl *V) {
    const CFGBlock *B = Start[K];
    if (!B)
      return false;
    for (const CFGElement &E : *B)
      if (auto S = E.getAs<CFGStmt>())
        return LV->isLive(S->getStmt(), V);
    return LV->isLive(B, V);
  }

  // RESTORE(k): the candidates in scope and live at the start of fiber k.
  void computeRestores() {
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
    LiveAny = llvm::BitVector(Cand.size());
    for (size_t K = 1; K < F.Fibers.size(); ++K)
      for (const VarDecl *V : F.Fibers[K].Restore)
        LiveAny.set(Bit[V]);
  }

  // The candidates S assigns (Must: wholly).
  void transfer(const Stmt *S, Flow &St) {
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
  }

  // The state at the start of B: empty at a fiber start, else the join of
  // its predecessors' (unseen when none was reached).
  void inFlow(const CFGBlock *B, Flow &In) {
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
  }

  // Forward may/must-assigned analysis from every fiber start.
  void solveAssigned() {
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
  }

  // Control-flow misuse: reaching the end of the body, falling through
  // into a fiber label.
  void checkControlFlow() {
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
        if (SB == Exit && !B->hasNoReturnElement())
          reachesEnd();
        for (size_t K = 1; K < F.Fibers.size(); ++K)
          if (SB == Start[K] && !IsGoto)
            fallsInto(K);
      }
    }
  }
  void reachesEnd() {
    error(Ctx, Body->getRBracLoc(),
          "control can reach the end of THREADED function '" + F.Name +
              "' without END_THREAD() or END_FUNCTION()",
          "end every path of every fiber with END_THREAD() (the frame "
          "stays) or END_FUNCTION() (the frame is freed)");
    F.Failed = true;
  }
  void fallsInto(size_t K) {
    error(Ctx, F.Fibers[K].Label->getIdentLoc(),
          "control can fall through into fiber label '" + F.Fibers[K].Name +
              "' of THREADED function '" + F.Name + "'",
          "end the code above the label with END_THREAD() or "
          "END_FUNCTION(); to run the next fiber now, SPAWN(" +
              F.Fibers[K].Name + ") first");
    F.Failed = true;
  }

  // The may/must-assigned state just before Call (St), if a block holds
  // it.
  bool flowBefore(const CallExpr *Call, Flow &St) {
    for (const CFGBlock *B : *G) {
      Flow In;
      inFlow(B, In);
      for (const CFGElement &E : *B) {
        auto CS = E.getAs<CFGStmt>();
        if (!CS)
          continue;
        if (CS->getStmt() == Call) {
          St = In;
          return true;
        }
        transfer(CS->getStmt(), In);
      }
    }
    return false;
  }

  // The end sites (END_THREAD, END_FUNCTION) and the SAVE set of each
  // END_THREAD: the variables possibly assigned since its fiber started
  // that are live at the start of some fiber. One assigned on some paths
  // only is also restored at the fiber's start.
  void computeSaves() {
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
      bool Found = flowBefore(M.Call, St);
      if (!S.EndFunction && Found && St.Seen)
        pickSaves(S, St, Off);
      F.Sites.push_back(S);
    }
  }
  void pickSaves(EndSite &S, const Flow &St, unsigned Off) {
    Fiber &Fb = F.Fibers[S.Fiber];
    for (const VarDecl *V : Cand) {
      unsigned I = Bit[V];
      bool Save =
          O.SaveAll ? inScopeAt(V, Off)
                    : (St.May.test(I) && LiveAny.test(I) && inScopeAt(V, Off));
      if (!Save || O.DropSave.count(V->getNameAsString()))
        continue;
      S.Save.push_back(V);
      bool Restored = llvm::is_contained(Fb.Restore, V);
      if (!O.SaveAll && !St.Must.test(I) && !Restored &&
          llvm::is_contained(Fb.InScope, V))
        Fb.Restore.push_back(V);
    }
  }

  // A save writes `tc_f->v = v;` at the END_THREAD: a nested variable
  // (static ones too) with the same name in scope there would be stored
  // instead of v, so it is renamed in the output (frame-resident ones lose
  // their declaration, and their uses become tc_f->field, so they need no
  // new name).
  void renameHiddenNames() {
    unsigned NRenamed = 0;
    for (const EndSite &S : F.Sites)
      for (const VarDecl *V : S.Save)
        for (const VarDecl *W : C.Declared)
          if (hides(W, V, fileOffset(SM, S.Call->getBeginLoc())))
            F.Renamed[W] =
                "tc_" + W->getNameAsString() + "_" + std::to_string(++NRenamed);
  }
  // Is W a nested variable, not yet renamed, with V's name, in scope at
  // file offset Off?
  bool hides(const VarDecl *W, const VarDecl *V, unsigned Off) {
    if (W == V || W->getName() != V->getName() || F.TopLevel.count(W) ||
        F.FrameResident.count(W) || F.Renamed.count(W))
      return false;
    auto Ps = Ctx.getParents(*W);
    const auto *DS = Ps.empty() ? nullptr : Ps[0].get<DeclStmt>();
    auto Scope = DS ? Ctx.getParents(*DS) : Ps;
    const Stmt *Sc = Scope.empty() ? nullptr : Scope[0].get<Stmt>();
    return Sc && declOff(W) <= Off && fileOffset(SM, Sc->getEndLoc()) >= Off;
  }

  // RESTORE sets in declaration order, for stable output.
  void orderRestores() {
    for (Fiber &Fb : F.Fibers) {
      std::vector<const VarDecl *> R;
      for (const VarDecl *V : Cand)
        if (llvm::is_contained(Fb.Restore, V) &&
            !O.DropRestore.count(V->getNameAsString()))
          R.push_back(V);
      Fb.Restore = R;
    }
  }

  // Frame fields: frame-resident variables and those some boundary saves
  // or restores, named as in the source (tc_a and repeats get a suffix).
  void assignFields() {
    std::set<std::string> Used{"tc_a"};
    for (const VarDecl *V : F.Locals) {
      if (!inFrame(V) || F.Field.count(V) || isa<ParmVarDecl>(V))
        continue;
      std::string N = V->getNameAsString();
      for (int I = 2; Used.count(N); ++I)
        N = V->getNameAsString() + "_" + std::to_string(I);
      Used.insert(N);
      F.Field[V] = N;
    }
  }
  bool inFrame(const VarDecl *V) {
    bool Needed = F.FrameResident.count(V);
    for (const Fiber &Fb : F.Fibers)
      Needed |= llvm::is_contained(Fb.Restore, V);
    for (const EndSite &S : F.Sites)
      Needed |= llvm::is_contained(S.Save, V);
    return Needed;
  }
};

} // namespace

bool analyze(CompilerInstance &CI, ThreadedFn &F, const Options &O) {
  return Analysis(CI, F, O).run();
}

} // namespace earthtc
